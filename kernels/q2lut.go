package kernels

import (
	"bytes"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// The q2lut kernel: Q2_K experts repacked by package layout (docs/layouts.md)
// so that 16 rows' 2-bit codes of the same four columns share one 16-byte
// vector. A table-lookup kernel computes 16 rows at a time: per 4 columns
// of an activation row two 16-entry tables of q0*a0 + q1*a1 (the two low
// and the two high bits of a code byte), each looked up with 16 rows'
// nibbles in one shuffle (x86 PSHUFB, ARM TBL). The integer sums are exact
// and the float steps are those of the kernel set's Q2_K kernel (ggml's
// generic ones, or on amd64 ggml's AVX2 lanes and FMAs: q2lut_amd64.s), so
// every row equals that kernel on the same row in plain Q2_K bit for bit:
// the layout stores the same numbers and gives the same logits.
//
// The tables depend only on the activations, so a matmul builds them once
// per activation row (16 bytes per column) and every group of rows reuses
// them.

const (
	q2lutRows       = layout.GroupRows      // rows per group
	q2lutGroupBytes = q2lutRows * q2_KBytes // one group's 256 columns
	// q2lutTabBytes is one 256-column block of tables: per pair of code
	// bytes k, k+1 (columns 4k..4k+7) 128 bytes, see buildQ2LUTTables.
	q2lutTabBytes = 4096
	// q2lutChunk is how many blocks the kernel runs per call of its
	// blocks function (the portable one collects their integer sums on
	// the stack, 32 int32 each, before it scales them).
	q2lutChunk = 4
	// q2lutTableBudget bounds the tables a State holds: the matmul of a
	// q2lut matrix builds them for as many tokens as fit at a time (at
	// least one: a token of a 14336-column row takes 224 KiB).
	q2lutTableBudget = 1 << 20
)

// q2lutKernel multiplies q2lut expert matrices. Its activations are Q8_K
// as for Q2_K; group computes 16 rows at once and dot (the kernel set's
// Q2_K kernel, installed with it) the tail rows of an expert whose row
// count is not a multiple of 16, which stay Q2_K rows. The kernel sets
// install their group kernel (installQ2LUT).
var q2lutKernel = &kernel{act: gguf.TypeQ8_K, dot: dotQ2_KGo, ref: refDotQ2_K, group: q2lutGroupGo}

// q2lutAsm reports that the installed group kernel and table builder are
// assembly (set with the kernel set).
var q2lutAsm bool

// groupFunc computes the 16 rows of one q2lut group g (n columns: n/256
// blocks of q2lutGroupBytes) with one Q8_K activation row a and its tables
// tab (buildQ2LUTTables) into out.
type groupFunc func(n int, g, a, tab []byte, out []float32)

// buildQ2LUTTables writes the tables of one Q8_K activation row a of nb
// blocks to tab (nb*q2lutTabBytes bytes). For code byte k of a block
// (columns 4k..4k+3) there are two tables over the 16 pair codes c,
// T0[c] = (c&3)*a[4k] + (c>>2)*a[4k+1] and T1 the same over a[4k+2],
// a[4k+3]. An entry reaches 3*128*2 in magnitude, more than a byte, so it
// is stored as two byte tables, T = 64*H + L with L = T&63 in [0, 63] and
// H = T>>6 in [-12, 11]: a kernel can add four L lookups (at most 252) or
// eight H lookups (at most 96 in magnitude) in bytes before widening.
// Bytes 128p.. of a block hold the pair k = 2p, 2p+1, 16 bytes each:
// L0(k) L0(k+1) H0(k) H0(k+1) L1(k) L1(k+1) H1(k) H1(k+1), so one 32-byte
// load gives a table for each of two code vectors. Assembly builds them
// where the kernel is assembly (q2lutAsm).
func buildQ2LUTTables(tab, a []byte, nb int) {
	if q2lutAsm {
		q2lutTablesAsm(tab, a, nb)
	} else {
		buildQ2LUTTablesGo(tab, a, nb)
	}
}

// buildQ2LUTTablesGo is the portable buildQ2LUTTables.
func buildQ2LUTTablesGo(tab, a []byte, nb int) {
	for b := 0; b < nb; b++ {
		q8 := a[b*q8_KBytes+4 : b*q8_KBytes+260]
		tb := tab[b*q2lutTabBytes : (b+1)*q2lutTabBytes]
		for k := 0; k < 64; k++ {
			for h := 0; h < 2; h++ {
				a0, a1 := int16(int8(q8[4*k+2*h])), int16(int8(q8[4*k+2*h+1]))
				t := tb[128*(k/2)+16*(k&1)+64*h:]
				for c := int16(0); c < 16; c++ {
					v := (c&3)*a0 + (c>>2)*a1
					t[c] = byte(v & 63)
					t[32+c] = byte(v >> 6)
				}
			}
		}
	}
}

// q2lutEntry returns table entry c of table h (0: T0, 1: T1) of code byte
// k in a block's tables tb.
func q2lutEntry(tb []byte, k, h int, c byte) int32 {
	t := tb[128*(k/2)+16*(k&1)+64*h:]
	return 64*int32(int8(t[32+c])) + int32(t[c])
}

// q2lutSumsGo is the portable integer part of the kernel: for each of nb
// blocks b of a group, out[32b+r] is row r's isum (each 16-column
// sub-block's sum of code*activation times its 4-bit scale) and
// out[32b+16+r] its summs (the activation block sums times the 4-bit
// mins), ggml's two integers per Q2_K block.
func q2lutSumsGo(g, tab, a []byte, nb int, out []int32) {
	for b := 0; b < nb; b++ {
		gb := g[b*q2lutGroupBytes : (b+1)*q2lutGroupBytes]
		tb := tab[b*q2lutTabBytes : (b+1)*q2lutTabBytes]
		bs := a[b*q8_KBytes+260 : (b+1)*q8_KBytes]
		o := out[32*b : 32*b+32 : 32*b+32]
		clear(o)
		for j := 0; j < 16; j++ {
			var sub [16]int32
			for k := 4 * j; k < 4*j+4; k++ {
				codes := gb[320+16*k : 336+16*k : 336+16*k]
				for r, v := range codes {
					sub[r] += q2lutEntry(tb, k, 0, v&15) + q2lutEntry(tb, k, 1, v>>4)
				}
			}
			bsum := int32(int16(le16(bs[2*j:])))
			sc := gb[64+16*j : 80+16*j : 80+16*j]
			for r, s := range sc {
				o[r] += int32(s&15) * sub[r]
				o[16+r] += int32(s>>4) * bsum
			}
		}
	}
}

// q2lutBlocksGo adds nb (at most q2lutChunk) blocks of one group g to its
// rows' sums acc: the integer sums, then each row's float steps.
func q2lutBlocksGo(g, tab, a []byte, nb int, acc []float32) {
	var sums [32 * q2lutChunk]int32
	q2lutSumsGo(g, tab, a, nb, sums[:])
	q2lutAdd(g, a, nb, sums[:], acc)
}

// q2lutAdd adds the float steps of nb blocks of one group g, whose integer
// sums are in sums (q2lutSumsGo's order), to the rows' sums acc, in block
// order, exactly as the portable Q2_K kernel (dotQ2_KGo) takes them.
func q2lutAdd(g, a []byte, nb int, sums []int32, acc []float32) {
	acc = acc[:q2lutRows:q2lutRows]
	for i := 0; i < nb; i++ {
		gb := g[i*q2lutGroupBytes : i*q2lutGroupBytes+64]
		yd := lef32(a[i*q8_KBytes:])
		s := sums[32*i : 32*i+32 : 32*i+32]
		for r := range acc {
			acc[r] = q2_KAddScaled(acc[r], s[r], s[16+r], yd, f16tab[le16(gb[2*r:])], f16tab[le16(gb[32+2*r:])])
		}
	}
}

// q2lutGroupGo is the portable group function (the generic Q2_K float
// steps).
func q2lutGroupGo(n int, g, a, tab []byte, out []float32) {
	q2lutChunks(q2lutBlocksGo, n, g, a, tab, out)
}

// q2lutChunks computes a group with blocks, a function adding nb blocks
// (at most q2lutChunk) to the rows' sums as q2lutBlocksGo does, q2lutChunk
// blocks of columns at a time.
func q2lutChunks(blocks func(g, tab, a []byte, nb int, acc []float32), n int, g, a, tab []byte, out []float32) {
	nb := n / 256
	g, a, tab, out = g[:nb*q2lutGroupBytes], a[:nb*q8_KBytes], tab[:nb*q2lutTabBytes], out[:q2lutRows]
	clear(out)
	for b0 := 0; b0 < nb; b0 += q2lutChunk {
		blocks(g[b0*q2lutGroupBytes:], tab[b0*q2lutTabBytes:], a[b0*q8_KBytes:], min(q2lutChunk, nb-b0), out)
	}
}

// q2lutTableBytes returns the bytes of one activation row's tables for
// rows of n columns.
func q2lutTableBytes(n int) int { return n / 256 * q2lutTabBytes }

// matmulQ2LUT is matmul for a q2lut matrix, whose activations are already
// quantized in act (stride bytes per row): the tables of as many tokens as
// s.lut holds at a time, then the groups of rows over the pool, each group
// against every one of those tokens. Tables built from the same
// activation bytes as the last ones are not built again (a MoE expert's
// gate and up take the same input).
func (s *Products) matmulQ2LUT(w *Matrix, act []byte, stride int, out []float32, nb int) {
	tb := q2lutTableBytes(w.Cols)
	per := len(s.lut) / tb
	groups := (w.Rows + q2lutRows - 1) / q2lutRows
	for j0 := 0; j0 < nb; j0 += per {
		n := min(per, nb-j0)
		if src := act[j0*stride : (j0+n)*stride]; !bytes.Equal(src, s.lutSrc) {
			for j := 0; j < n; j++ {
				buildQ2LUTTables(s.lut[j*tb:(j+1)*tb], act[(j0+j)*stride:], w.Cols/256)
			}
			s.lutSrc = append(s.lutSrc[:0], src...)
		}
		s.mt.w, s.mt.act, s.mt.stride, s.mt.out, s.mt.nb = w, act[j0*stride:], stride, out[j0*w.Rows:], n
		s.mt.tab, s.mt.tabStride = s.lut, tb
		s.pool.Run(&s.mt, groups, 1, w.Rows*w.RowBytes*n >= 256<<10)
	}
}

// runGroups computes groups [lo, hi) of a q2lut matrix: 16 rows each with
// the group kernel, every token of a group in turn while its bytes are in
// the cache, the last group's tail rows (Rows%16, plain Q2_K) with dot.
// Groups run in memory order: the kernels prefetch the bytes ahead.
func (t *matmulTask) runGroups(lo, hi int) {
	w, k := t.w, t.w.k
	full := w.Rows / q2lutRows
	for gi := lo; gi < min(hi, full); gi++ {
		r0 := gi * q2lutRows
		g := w.data[r0*w.RowBytes : (r0+q2lutRows)*w.RowBytes]
		for j := 0; j < t.nb; j++ {
			k.group(w.Cols, g, t.act[j*t.stride:(j+1)*t.stride], t.tab[j*t.tabStride:(j+1)*t.tabStride], t.out[j*w.Rows+r0:j*w.Rows+r0+q2lutRows])
		}
	}
	if hi > full {
		for r := full * q2lutRows; r < w.Rows; r++ {
			for j := 0; j < t.nb; j++ {
				t.out[j*w.Rows+r] = k.dot(w.Cols, w.Row(r), t.act[j*t.stride:(j+1)*t.stride])
			}
		}
	}
}
