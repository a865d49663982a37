// Package quant is ggml's tensor quantization in pure Go, bit for bit.
//
// It knows the block layout of every ggml type and converts between them
// and float32 exactly as ggml does: Dequantize is ggml's to_float, Quantize
// is ggml_quantize_chunk (what llama-quantize calls, with or without an
// importance matrix) and QuantizeRef is the reference quantizer ggml-cpu
// also uses for activations. The F16/BF16/E8M0/UE4M3 conversions reproduce
// ggml's rounding and NaN handling. The search heuristics of the k-quants and
// i-quants are transcribed operation by operation in float32 without fused
// multiply-adds, because that is how ggml-base is compiled, and the output
// bytes are checked against ggml's own in the tests.
//
// Speed comes from evaluating independent work side by side, never from
// reordering ggml's arithmetic: the candidate scales of a search are
// computed several at a time (one per AVX2 lane on amd64, a few per loop in
// Go elsewhere), each with ggml's operations in ggml's order, then compared
// in ggml's order; shared partial sums are reused only where they are the
// very additions ggml repeats. The assembly kernels (files *_amd64.s, AVX2
// without FMA) have Go twins that the purego build tag or a CPU without
// AVX2 selects, and the tests require both to give the same bytes. Beyond
// the reference vectors, testdata/golden.txt pins the output over many
// more inputs (ties, tiny and huge scales, NaN and infinities, zero
// importance weights).
//
// It also knows llama-quantize's rules for choosing each tensor's type
// (Rules.Choose) and reads llama.cpp importance-matrix files (ReadImatrix).
// It does no file I/O of its own beyond what a caller hands it: the quantize
// command streams tensors through ConvertTensor row chunk by row chunk.
package quant
