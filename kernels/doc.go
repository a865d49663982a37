// Package kernels is the arithmetic the runtime (package engine) and the
// toolkit's layouts (package layout) share: every dot product and
// matrix-vector product per ggml type and per CPU feature set, the
// interleaved group layouts dense matrices are repacked into at load
// (repack*.go), the Q1_0 lookup kernel and its 16-row layout made at load
// (q1lut*.go), the q2lut table kernels of layout q2lut (q2lut*.go), the
// TQ1_0/TQ2_0 kernels and those of the ternary layouts (ternary*.go), the
// activation quantization that links them to package quant (quantlink.go),
// the element-wise ops with assembly (ops*.go), kernel selection
// (SelectKernels, gguf's --kernels, GGUF_KERNELS) and the thread pool the
// products run on.
//
// Its door is small: a weight matrix in a layout (Matrix, NewMatrix,
// UseQ2LUT, NewTernaryMatrix, Pack, EmbedRow), products of it with
// activation rows (Products.MatMul on a Pool), the chosen set
// (KernelSets, SelectKernels), and the ops a forward pass calls between
// products.
//
// Every matrix multiplication goes through a per-type dot product of one
// weight row with one activation row. For the types ggml has integer dot
// products for, the activation row is first quantized the way ggml-cpu
// quantizes it (its type's vec_dot_type: Q8_0, Q8_1 or Q8_K) and the dot is
// computed in integer arithmetic exactly as ggml's vec_dot does it: this is
// what makes quantized logits agree with llama.cpp to ~1e-6 instead of
// ~1e-1 (see ../shared/refdata/synthetic/README.txt, section 6). Every such
// kernel has a plain reference implementation the fast one is tested
// against (bit for bit, against ggml's own vec_dot, under qemu for arm64
// and armv7). Rare types without such a kernel are dequantized a row at a
// time and multiplied in float32.
//
// It imports gguf (types), quant (reference quantization and
// dequantization), layout (the q2lut byte format) and internal/osmem
// (aligned buffers), and nothing of models: no engine, no file loading, no
// tokenizer. A model's shapes, families and forward pass stay in engine.
package kernels
