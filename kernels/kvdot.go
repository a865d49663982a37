package kernels

import "github.com/ggufkit/gguf/gguf"

// What the engine's KV cache (engine/kvcache.go) computes with: its keys
// and values are rows of f16 or q8_0, scored and summed by the same kernels
// as weight rows.

// QuantizeAct converts src to activation type t (f16, q8_0...) as
// ggml-cpu's from_float does, into dst (ActRowBytes(t, len(src)) bytes).
func QuantizeAct(t gguf.Type, dst []byte, src []float32) error { return quantizeAct(t, dst, src) }

// RowDot returns the installed kernel set's dot product of an n-element
// row of type t with an activation row of the type t's kernel quantizes
// activations to (t itself for F16 and Q8_0).
func RowDot(t gguf.Type) func(n int, w, a []byte) float32 { return kernels[t].dot }

// MadQ8_0 adds w times the dequantized Q8_0 row x to out, each value
// dequantized (d*q) then weighted, as ggml's flash attention does with
// v_to_float and ggml_vec_mad_f32.
func MadQ8_0(out []float32, x []byte, w float32) {
	for b := 0; b < len(out); b += 32 {
		blk := x[b/32*q8_0Bytes : (b/32+1)*q8_0Bytes]
		d := f16tab[le16(blk)]
		o := out[b : b+32 : b+32]
		for j, q := range blk[2:34] {
			o[j] = float32(w*float32(d*float32(int8(q)))) + o[j]
		}
	}
}
