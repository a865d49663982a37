// Package engine runs llama-family GGUF models in pure Go: no cgo, one static
// binary that cross-compiles to the devices the toolkit targets (linux/arm64,
// linux/arm, darwin/arm64) as well as amd64.
//
// It is how a recipe proves that its output works: load the file the toolkit
// wrote (pruned or padded heads, quantized mixes, split files, Mixtral-style
// experts), generate text, and score it with perplexity.
//
// Loading maps the file (or each split) into memory and uses the weights in
// place. The forward pass follows llama.cpp's graph for LLM_ARCH_LLAMA and
// its operation order (RMSNorm, RoPE in NORM mode, softmax with max
// subtraction, SiLU-gated FFN, softmax top-k routing), so logits agree with
// llama.cpp's to float32 rounding.
//
// Kernels: every matrix multiplication goes through a per-type dot product
// of one weight row with one activation row. For the types ggml has integer
// dot products for, the activation row is first quantized the way ggml-cpu
// quantizes it (its type's vec_dot_type: Q8_0, Q8_1 or Q8_K) and the dot is
// computed in integer arithmetic exactly as ggml's vec_dot does it: this is
// what makes quantized logits agree with llama.cpp to ~1e-6 instead of
// ~1e-1 (see ../shared/refdata/synthetic/README.txt, section 6). Every such
// kernel has a plain reference implementation the fast one is tested
// against. Rare types without such a kernel are dequantized a row at a time
// and multiplied in float32.
package engine
