package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/quant"
)

// CacheTypes are the types a KV cache may hold, in llama.cpp's -ctk/-ctv
// spellings (f32, f16, q8_0).
var CacheTypes = []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeQ8_0}

// ParseCacheType reads a KV cache type as llama.cpp's --cache-type-k and
// --cache-type-v spell it (any case).
func ParseCacheType(s string) (gguf.Type, error) {
	t, err := gguf.ParseType(s)
	if err == nil {
		for _, c := range CacheTypes {
			if t == c {
				return t, nil
			}
		}
	}
	return 0, fmt.Errorf("KV cache type %q: supported types are f32, f16, q8_0", s)
}

// CacheTypeName is t as llama.cpp's -ctk/-ctv flags spell it.
func CacheTypeName(t gguf.Type) string {
	switch t {
	case gguf.TypeF32:
		return "f32"
	case gguf.TypeF16:
		return "f16"
	case gguf.TypeQ8_0:
		return "q8_0"
	}
	return t.String()
}

// kvCache holds the keys and values of a State's attention layers, each
// in its own type. Keys are [slot][ctx][kvDim] in every type: a score is
// one dot product of the query with a key row, by the key type's kernel
// (kernels[type].dot, with the query converted to the kernel's activation
// type as ggml-cpu's mul_mat converts it to vec_dot_type: f16, or q8_0
// blocks of 32 along the head). F32 and F16 values are transposed,
// [slot][kvDim][ctx], as llama.cpp stores V without flash attention: an
// output element is one dot product over positions, the probabilities
// rounded to f16 for an F16 cache as ggml does before its vec_dot_f16.
// Q8_0 values cannot be transposed (a block would span 32 positions;
// llama.cpp runs them only with flash attention) and are stored as keys
// are: the output is the probability-weighted sum of the dequantized rows,
// as ggml's flash attention accumulates a quantized V.
//
// A quantized cache is rotated as llama.cpp (0.7.0) rotates it: with heads
// of a multiple of 64, queries and keys are multiplied by an orthonormal
// Walsh-Hadamard matrix (the largest power of two dividing the head, from
// 64) before the keys are stored, and values by the 64x64 one, the
// attention output being rotated back (the matrices are their own
// inverses). Scores and outputs are unchanged in exact arithmetic; the
// rotation spreads a head's outliers over its blocks, so q8_0 rounds them
// with a finer scale.
type kvCache struct {
	tk, tv gguf.Type
	kvd    int
	ctx    int
	// k and v are the storage (4-byte aligned: F32 caches are viewed as
	// float32 through kf and vf).
	k, v   []byte
	kf, vf []float32
	// kRow and vRow are the bytes of one position's keys and (Q8_0)
	// values.
	kRow, vRow int
	// rotK and rotV are the rotations' sizes (0: none); rotC[n] the
	// matrices' entry magnitude 1/sqrt(n).
	rotK, rotV int
	rotC       map[int]float32
}

// newKVCache allocates slots layers of ctx positions of kvd-wide keys and
// values of heads of hd elements.
func newKVCache(tk, tv gguf.Type, slots, ctx, kvd, hd int) (*kvCache, error) {
	for _, x := range []struct {
		name string
		t    gguf.Type
	}{{"K", tk}, {"V", tv}} {
		if _, err := ParseCacheType(x.t.String()); err != nil {
			return nil, fmt.Errorf("%s cache: %w", x.name, err)
		}
		if slots > 0 && hd%x.t.BlockSize() != 0 {
			return nil, fmt.Errorf("%s cache type %s needs heads of a multiple of %d elements (this model's have %d)",
				x.name, CacheTypeName(x.t), x.t.BlockSize(), hd)
		}
	}
	c := &kvCache{tk: tk, tv: tv, kvd: kvd, ctx: ctx, kRow: kernels.ActRowBytes(tk, kvd), vRow: kernels.ActRowBytes(tv, kvd)}
	if hd > 0 && hd%64 == 0 {
		if tk != gguf.TypeF32 && tk != gguf.TypeF16 {
			c.rotK = hd & -hd // the largest power of two dividing hd
		}
		if tv != gguf.TypeF32 && tv != gguf.TypeF16 {
			c.rotV = 64
		}
		c.rotC = map[int]float32{}
		for _, n := range []int{c.rotK, c.rotV} {
			// ggml_gen_hadamard: 1.0 / sqrtf(n), in double, stored as float
			c.rotC[n] = float32(1 / float64(float32(math.Sqrt(float64(n)))))
		}
	}
	positions := int64(slots) * int64(ctx)
	kb, vb := positions*int64(c.kRow), positions*int64(c.vRow)
	if kb+vb > maxKVBytes {
		return nil, fmt.Errorf("KV cache of %d bytes is too large", kb+vb)
	}
	c.k, c.v = alignedBytes(kb), alignedBytes(vb)
	if tk == gguf.TypeF32 {
		c.kf = kernels.F32s(c.k)
	}
	if tv == gguf.TypeF32 {
		c.vf = kernels.F32s(c.v)
	}
	return c, nil
}

// maxKVBytes bounds a KV cache (16 GiB, the float32 cache the engine
// allowed before it had other types).
const maxKVBytes = 16 << 30

// alignedBytes allocates n bytes 4-byte aligned.
func alignedBytes(n int64) []byte {
	return kernels.BytesOf(make([]float32, (n+3)/4))[:n]
}

// bytes is the cache's size.
func (c *kvCache) bytes() int64 { return int64(len(c.k)) + int64(len(c.v)) }

// put stores the keys and values of position pos of a slot.
func (c *kvCache) put(slot, pos int, k, v []float32) {
	off := (slot*c.ctx + pos) * c.kRow
	_ = kernels.QuantizeAct(c.tk, c.k[off:off+c.kRow], k)
	switch c.tv {
	case gguf.TypeF32:
		for d, x := range v {
			c.vf[(slot*c.kvd+d)*c.ctx+pos] = x
		}
	case gguf.TypeF16:
		for d, x := range v {
			binary.LittleEndian.PutUint16(c.v[2*((slot*c.kvd+d)*c.ctx+pos):], quant.FP32ToFP16(x))
		}
	default:
		off := (slot*c.ctx + pos) * c.vRow
		_ = kernels.QuantizeAct(c.tv, c.v[off:off+c.vRow], v)
	}
}

// rotate multiplies every n-element chunk of x by the n x n orthonormal
// Walsh-Hadamard matrix (Sylvester's order, as ggml_gen_hadamard builds
// it): each element times 1/sqrt(n), as the matrix product rounds its
// products, then the fast transform's butterflies (the sums in another
// order than ggml's mul_mat, a rounding-level difference). n = 0: nothing.
func (c *kvCache) rotate(x []float32, n int) {
	if n == 0 {
		return
	}
	sc := c.rotC[n]
	for i := range x {
		x[i] *= sc
	}
	for o := 0; o < len(x); o += n {
		y := x[o : o+n : o+n]
		for h := 1; h < n; h *= 2 {
			for i := 0; i < n; i += 2 * h {
				for j := i; j < i+h; j++ {
					a, b := y[j], y[j+h]
					y[j], y[j+h] = a+b, a-b
				}
			}
		}
	}
}

// attnScratch is one worker's buffers for kvCache's scores and values.
type attnScratch struct {
	sc []float32 // scores, then probabilities, of up to ctx positions
	qa []byte    // the query in the key kernel's activation type
	pa []byte    // the probabilities in f16 (F16 values)

	// With pruning (Options.AttnEps): the kept positions' indices, up to
	// pruneChunk of their values gathered (g) and a head's partial sums
	// (acc); kept and seen count positions.
	idx        []int32
	g          []float32
	acc        []float32
	kept, seen int64
}

// pruneChunk is how many kept positions' values pruned attention gathers
// at a time: the gather buffer is bounded whatever the context.
const pruneChunk = 512

// pruneGather: pruned attention gathers an F32 or F16 (transposed) value
// cache's kept columns when at most 1/pruneGather of the positions are
// kept; more, and it sums every position, the pruned ones with
// probability 0 (BenchmarkKVAttention: gathering a fifth cost more than
// the whole sum).
const pruneGather = 8

// addPruning adds the buffers of pruned attention.
func (ws *attnScratch) addPruning(ctx, hd int) {
	ws.idx = make([]int32, ctx)
	// hd float32 per position (F32 values) is the most any type takes.
	ws.g = make([]float32, hd*pruneChunk)
	ws.acc = make([]float32, hd)
}

// pruned sets out to the attention output of one head over the scores sc
// (maximum mx) with the positions whose score is below mx + lnEps left
// out: neither exponentiated nor counted in the softmax's sum, nor their
// values summed. A Q8_0 cache's kept rows, and an F32 or F16 cache's kept
// columns when few are kept (pruneGather), are gathered pruneChunk
// positions at a time into a contiguous copy and summed by the unpruned
// kernels (Vdots, ValueDotsF16, MadQ8_0RowsAdd), chunk sums added in
// order; otherwise the unpruned sum runs with the pruned positions'
// probabilities 0. When every position is kept, the result is the
// unpruned one bit for bit (Q8_0's chunks continue the same sums).
func (c *kvCache) pruned(sc []float32, mx, lnEps float32, slot, from, kvo int, out []float32, ws *attnScratch) {
	thr := mx + lnEps
	k := 0
	for t, x := range sc {
		if x >= thr {
			sc[k], ws.idx[k] = x, int32(t)
			k++
		}
	}
	ws.kept += int64(k)
	ws.seen += int64(len(sc))
	p := sc[:k]
	kernels.SoftmaxMax(p, mx)
	if c.tv != gguf.TypeQ8_0 && k*pruneGather > len(sc) {
		// Too many kept for gathering a transposed cache's columns to pay
		// (it reads as many cache lines as the whole rows): the
		// probabilities go back to their positions, zeros between.
		next := len(sc)
		for j := k - 1; j >= 0; j-- {
			t, x := int(ws.idx[j]), sc[j]
			clear(sc[t+1 : next])
			sc[t], next = x, t
		}
		clear(sc[:next])
		c.values(sc, slot, from, kvo, out, ws.pa)
		return
	}
	hd := len(out)
	if c.tv == gguf.TypeQ8_0 {
		clear(out)
	}
	for c0 := 0; c0 < k; c0 += pruneChunk {
		n := min(pruneChunk, k-c0)
		idx, pc := ws.idx[c0:c0+n], p[c0:c0+n]
		dst := out
		if c0 > 0 && c.tv != gguf.TypeQ8_0 {
			dst = ws.acc
		}
		switch c.tv {
		case gguf.TypeF32:
			g := ws.g[:hd*n]
			kernels.GatherCols(kernels.BytesOf(g), c.v[4*((slot*c.kvd+kvo)*c.ctx+from):], 4, c.ctx, hd, idx)
			kernels.Vdots(pc, g, n, dst)
		case gguf.TypeF16:
			g := kernels.BytesOf(ws.g)[:2*hd*n]
			kernels.GatherCols(g, c.v[2*((slot*c.kvd+kvo)*c.ctx+from):], 2, c.ctx, hd, idx)
			pa := ws.pa[:2*n]
			_ = kernels.QuantizeAct(gguf.TypeF16, pa, pc)
			kernels.ValueDotsF16(pa, g, 2*n, n, dst)
		default:
			rb := kernels.ActRowBytes(c.tv, hd)
			g := kernels.BytesOf(ws.g)[:rb*n]
			base := (slot*c.ctx+from)*c.vRow + kernels.ActRowBytes(c.tv, kvo)
			for j, t := range idx {
				copy(g[j*rb:(j+1)*rb], c.v[base+int(t)*c.vRow:])
			}
			kernels.MadQ8_0RowsAdd(out, g, rb, pc)
		}
		if c0 > 0 && c.tv != gguf.TypeQ8_0 {
			for d, x := range ws.acc {
				out[d] += x
			}
		}
	}
}

func newAttnScratch(ctx, hd int) attnScratch {
	return attnScratch{
		sc: make([]float32, ctx),
		qa: make([]byte, max(kernels.ActRowBytes(gguf.TypeF16, hd), kernels.ActRowBytes(gguf.TypeQ8_0, hd))),
		pa: make([]byte, 2*ctx),
	}
}

// scores sets sc[t] = scale * (q . key from+t) of one head (kvo: its
// offset in a key row) for every t in sc and returns their maximum.
func (c *kvCache) scores(q []float32, slot, from, kvo int, scale float32, sc []float32, qa []byte) float32 {
	if c.tk == gguf.TypeF32 {
		return kernels.Scores(q, c.kf[(slot*c.ctx+from)*c.kvd+kvo:], c.kvd, scale, sc)
	}
	hd := len(q)
	qa = qa[:kernels.ActRowBytes(c.tk, hd)]
	_ = kernels.QuantizeAct(c.tk, qa, q)
	off := (slot*c.ctx+from)*c.kRow + kernels.ActRowBytes(c.tk, kvo)
	return kernels.KeyScores(c.tk, hd, c.k[off:], c.kRow, qa, scale, sc)
}

// values sets out = sum over t of p[t] * value from+t of one head (kvo:
// its offset in a value row).
func (c *kvCache) values(p []float32, slot, from, kvo int, out []float32, pa []byte) {
	switch c.tv {
	case gguf.TypeF32:
		kernels.Vdots(p, c.vf[(slot*c.kvd+kvo)*c.ctx+from:], c.ctx, out)
	case gguf.TypeF16:
		n := len(p)
		pa = pa[:2*n]
		_ = kernels.QuantizeAct(gguf.TypeF16, pa, p)
		kernels.ValueDotsF16(pa, c.v[2*((slot*c.kvd+kvo)*c.ctx+from):], 2*c.ctx, n, out)
	default:
		off := (slot*c.ctx+from)*c.vRow + kernels.ActRowBytes(c.tv, kvo)
		kernels.MadQ8_0Rows(out, c.v[off:], c.vRow, p)
	}
}
