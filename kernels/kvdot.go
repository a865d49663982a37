package kernels

import "github.com/ggufkit/gguf/gguf"

// What the engine's KV cache (engine/kvcache.go) computes with: its keys
// and values are rows of f16 or q8_0, scored and summed by the same kernels
// as weight rows. The many-position functions (KeyScores, ValueDotsF16,
// MadQ8_0Rows) give each position or output exactly what the one-row
// kernels give it, without a call per position: where an architecture has
// assembly for them, it runs several keys or value rows at once (the
// latency of one row's dependent adds is what bounds a long context), each
// in the one-row kernel's order.

// QuantizeAct converts src to activation type t (f16, q8_0...) as
// ggml-cpu's from_float does, into dst (ActRowBytes(t, len(src)) bytes).
func QuantizeAct(t gguf.Type, dst []byte, src []float32) error { return quantizeAct(t, dst, src) }

// RowDot returns the installed kernel set's dot product of an n-element
// row of type t with an activation row of the type t's kernel quantizes
// activations to (t itself for F16 and Q8_0).
func RowDot(t gguf.Type) func(n int, w, a []byte) float32 { return kernels[t].dot }

// KeyScores sets sc[i] = RowDot(t)(hd, k[i*kstride:], qa) * scale for every
// i in sc, bit for bit, and returns their maximum (-Inf for none): the
// scores of one query head (qa, in t's activation type) against len(sc)
// keys of type t (F16 or Q8_0) kstride bytes apart.
func KeyScores(t gguf.Type, hd int, k []byte, kstride int, qa []byte, scale float32, sc []float32) float32 {
	if mx, ok := keyScoresFast(t, hd, k, kstride, qa, scale, sc); ok {
		return mx
	}
	rb := ActRowBytes(t, hd)
	dot := kernels[t].dot
	mx := negInf
	for i := range sc {
		v := dot(hd, k[i*kstride:i*kstride+rb], qa) * scale
		sc[i] = v
		mx = max(mx, v)
	}
	return mx
}

// ValueDotsF16 sets out[d] = RowDot(F16)(n, v[d*vstride:], pa) for every d
// in out, bit for bit: the weighted sums of a transposed F16 value cache
// (rows vstride bytes apart) with the probabilities pa in f16.
func ValueDotsF16(pa, v []byte, vstride, n int, out []float32) {
	d := valueDotsF16Fast(pa, v, vstride, n, out)
	dot := kernels[gguf.TypeF16].dot
	for ; d < len(out); d++ {
		out[d] = dot(n, v[d*vstride:d*vstride+2*n], pa)
	}
}

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

// MadQ8_0Rows sets out to the sum over i of p[i] times the dequantized
// Q8_0 row v[i*vstride:] (len(out) values, a multiple of 32), each row
// added as MadQ8_0 adds it and in order of i, so bit for bit a cleared out
// followed by MadQ8_0 for every row.
func MadQ8_0Rows(out []float32, v []byte, vstride int, p []float32) {
	clear(out)
	MadQ8_0RowsAdd(out, v, vstride, p)
}

// MadQ8_0RowsAdd is MadQ8_0Rows adding to out instead of setting it: rows
// taken in several calls add up to the same bits as in one.
func MadQ8_0RowsAdd(out []float32, v []byte, vstride int, p []float32) {
	if madQ8_0RowsFast(out, v, vstride, p) {
		return
	}
	rb := ActRowBytes(gguf.TypeQ8_0, len(out))
	for i, w := range p {
		MadQ8_0(out, v[i*vstride:i*vstride+rb], w)
	}
}

// GatherCols copies the columns idx of rows rows of a transposed value
// cache to dst, row after row (dst[d*len(idx)+j] = src[d*stride+idx[j]]),
// for pruned attention: F32 caches as float32 (esize 4), F16 ones as their
// halves (esize 2), src and dst in bytes, stride in elements.
func GatherCols(dst, src []byte, esize, stride, rows int, idx []int32) {
	n := len(idx)
	if esize == 4 {
		d, s := F32s(dst), F32s(src)
		for r := range rows {
			dr, sr := d[r*n:(r+1)*n:(r+1)*n], s[r*stride:]
			for j, t := range idx {
				dr[j] = sr[t]
			}
		}
		return
	}
	d, s := u16s(dst), u16s(src)
	for r := range rows {
		dr, sr := d[r*n:(r+1)*n:(r+1)*n], s[r*stride:]
		for j, t := range idx {
			dr[j] = sr[t]
		}
	}
}
