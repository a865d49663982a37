// Package engine runs GGUF models of the llama, qwen2, qwen3, qwen3moe,
// olmoe, bailingmoe2, gemma3, bailingmoe3, qwen35 and qwen35moe
// architectures in pure Go: no cgo, one static binary that cross-compiles
// to the devices the toolkit targets (linux/arm64, linux/arm,
// darwin/arm64) as well as amd64.
//
// It is how a recipe proves that its output works: load the file the toolkit
// wrote (pruned or padded heads, quantized mixes, split files, Mixtral-style
// experts), generate text, and score it with perplexity.
//
// Loading maps the file (or each split) into memory and uses the weights in
// place. The forward pass follows llama.cpp's graph for each architecture
// and its operation order (RMSNorm, RoPE in NORM or NEOX mode, softmax with
// max subtraction, SiLU- or GELU-gated FFN, expert routing), so logits
// agree with llama.cpp's to float32 rounding. What sets one architecture
// apart from another is data in one table (family.go: biases, q/k norms,
// fused QKV, post-norms, sliding windows, gated attention, which layers
// are recurrent and which keys it reads). A hybrid's layers carry their
// own token mixer chosen at load (layerMixer, mixer.go): qwen35's Gated
// DeltaNet layers (qwen35.go, deltanet.go), bailingmoe3's KDA recurrent
// layers (kda.go) and MLA layers (mla.go), each with its state (a
// recurrent state, a latent cache) allocated once per State in place of
// a KV cache. Every MoE layer routes through
// one function (Routing.route: softmax or sigmoid gating, selection bias,
// group limit, renormalization, scale), so the expert pager (paged.go,
// package pager) has one place to hook.
//
// Arithmetic is package kernels': every matrix product (Matrix,
// Products.MatMul, with the dot products per type and CPU feature set),
// the thread pool and the element-wise ops. engine holds what makes it a
// model: loading, the families' table, the forward pass, MoE routing and
// the expert pager's hook, generation, sampling and perplexity.
package engine
