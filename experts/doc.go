// Package experts knows the mixture-of-experts tensors of a GGUF model:
// which tensors hold experts (llama.cpp names them *_exps), how to move them
// after everything else so a pager can map the non-expert part and read
// experts from flash on demand, and what such a pager needs to know: where
// the non-expert part ends and how many bytes one expert takes per layer.
package experts
