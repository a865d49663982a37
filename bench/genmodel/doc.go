// Command genmodel writes a large synthetic GGUF model (llama or another
// family, -arch) for benchmarks (for example the 1 GiB head-pruning run of
// bench/build-1g.sh), streaming its deterministic data so it needs no
// memory of its own. With -crosscheck its weights are bench/crosscheck's
// F32 ones, which keep activations O(1) (random quantized blocks overflow,
// which matters for a recurrent architecture's speed), for gguf quantize
// to turn into the type to measure.
package main
