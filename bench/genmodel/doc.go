// Command genmodel writes a large synthetic GGUF model (llama or another
// family, -arch) for benchmarks (for example the 1 GiB head-pruning run of
// bench/build-1g.sh), streaming its deterministic data so it needs no
// memory of its own.
package main
