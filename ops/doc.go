// Package ops turns the operations a user asks for (prune the head, add,
// drop and rename tensors, edit metadata, move experts last, quantize) into
// one plan.Plan over its inputs. It is what `gguf build` and `gguf recut`
// call, and what recipes will call: options in, plan out, no I/O beyond
// reading a small tensor (output_ids) when re-cutting a head.
package ops
