package kernels

import (
	"bytes"
	"unsafe"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// The Q1_0 table-lookup kernel (T-MAC, the Four-Russians method; the
// seeds' E81/E120). A Q1_0 weight is a sign, so the dot of 4 weights with
// 4 activations is one of 16 sums of the activations with signs: per
// activation row and 4 columns a 16-entry table of those sums, indexed by
// the 4 sign bits (one nibble of a weight byte), replaces 4 multiply-adds
// by one lookup. A shuffle (x86 VPERMPS or VPSHUFB, ARM TBL or VTBL)
// looks up 16 rows' nibbles at once when the 16 rows' bytes of the same
// columns lie side by side, so the dense Q1_0 matrices are repacked at
// Open into groups of 16 rows.
//
// Group layout, per 128-column block of the 16 rows (288 bytes, the rows'
// 16 blocks' size): the 16 rows' f16 scales, then 16 vectors of 16 bytes,
// byte r of vector v being byte v of row r's sign bits (columns 8v..8v+7:
// the low nibble is the 4-column group 2v, the high one group 2v+1).
//
// The integer sums are exact (a table entry is the exact sum of its
// activations), and each kernel takes the float steps of the kernel set's
// Q1_0 row kernel in its order, so every row equals that kernel's result
// bit for bit: ggml's generic order (a 32-column block's integer sum times
// its activation scale added in float32, that sum times the weight scale)
// for the portable and ARM sets, ggml's AVX2 eight float lanes (lane l of
// a 32-column block is its columns 4l..4l+3, exactly one table entry) for
// the x86 sets (q1lutGroupAVX512, q1lutGroupAVX2). Activations are Q8_0
// as for the row kernels; their values are those of quantizeAct, in
// [-127, 127] (ggml's AVX2 kernel negates -128 to itself, which no table
// reproduces).
//
// The tables depend only on the activations: a matmul builds them once per
// activation row and every group of rows reuses them.

const (
	q1lutRows       = 16             // rows per group
	q1lutBlockBytes = 16 * q1_0Bytes // one 128-column block of a group
)

// q1lutKernel is one implementation of the kernel: its tables and its
// group function.
type q1lutKernel struct {
	// tabBytes returns the bytes of one activation row's tables for rows
	// of n columns.
	tabBytes func(n int) int
	// tables writes the tables of one Q8_0 activation row a of n columns
	// into tab.
	tables func(tab, a []byte, n int)
	// group computes the 16 rows of one group g (n columns) with the
	// activation row a and its tables tab into out.
	group groupFunc
	// group2, where a kernel has it, is group for two consecutive groups
	// (g holds both, out takes 32 rows), reading each table once for
	// both.
	group2 groupFunc
}

// q1lutGo is the portable kernel: int16 tables, ggml's generic float steps.
var q1lutGo = &q1lutKernel{tabBytes: q1lutTabBytesGo, tables: q1lutTablesGo, group: q1lutGroupGo}

// q1lutSet is the installed set's kernel, nil where a set's row kernel
// would be faster (every set has one today: installQ1LUT): Open repacks
// dense Q1_0 matrices only when it is set.
var q1lutSet *q1lutKernel

// q1lutRepack writes 16 Q1_0 rows (rowBytes apart in src, nb blocks each)
// into dst in the group layout.
func q1lutRepack(dst, src []byte, rowBytes, nb int) {
	_ = dst[nb*q1lutBlockBytes-1]
	_ = src[(q1lutRows-1)*rowBytes+nb*q1_0Bytes-1]
	for b := 0; b < nb; b++ {
		g := dst[b*q1lutBlockBytes : (b+1)*q1lutBlockBytes]
		for r := 0; r < q1lutRows; r++ {
			blk := src[r*rowBytes+b*q1_0Bytes : r*rowBytes+(b+1)*q1_0Bytes]
			copy(g[2*r:2*r+2], blk[:2])
			for v := 0; v < 16; v++ {
				g[32+16*v+r] = blk[2+v]
			}
		}
	}
}

// q1lutSigned returns the 16 table entries of the 4 activations y: entry
// c is the sum of y[i] where bit i of c is set less the others. Each entry
// is an earlier one with one bit more set: 15 additions, as the tables
// are built for every activation row of every matmul.
func q1lutSigned(y []int8) (t [16]int32) {
	y = y[:4:4]
	y0, y1, y2, y3 := int32(y[0]), int32(y[1]), int32(y[2]), int32(y[3])
	t[0] = -(y0 + y1 + y2 + y3)
	t[1] = t[0] + 2*y0
	t[2] = t[0] + 2*y1
	t[3] = t[1] + 2*y1
	for c := 4; c < 8; c++ {
		t[c] = t[c-4] + 2*y2
	}
	for c := 8; c < 16; c++ {
		t[c] = t[c-8] + 2*y3
	}
	return t
}

// q1lutTabBytesGo: per 4 columns 16 int16 entries.
func q1lutTabBytesGo(n int) int { return n * 8 }

// q1lutTablesGo writes, for each 4-column group G of the row (columns
// 4G..4G+3), its 16 entries as int16 at 32G.
func q1lutTablesGo(tab, a []byte, n int) {
	t16 := i16s(tab[:n*8])
	for G := 0; G < n/4; G++ {
		j := G / 8 // the q8_0 block
		y := i8s(a[j*q8_0Bytes+2+4*(G%8) : j*q8_0Bytes+6+4*(G%8)])
		e := q1lutSigned(y)
		for c, v := range e {
			t16[16*G+c] = int16(v)
		}
	}
}

// q1lutGroupGo is the portable group function: per row and 32-column
// block the exact integer sum of 8 lookups, then ggml's generic float
// steps (refDotQ1_0's), so each row equals dotQ1_0Go bit for bit.
func q1lutGroupGo(n int, g, a, tab []byte, out []float32) {
	nb := n / 128
	g, a, out = g[:nb*q1lutBlockBytes], a[:4*nb*q8_0Bytes], out[:q1lutRows:q1lutRows]
	t16 := i16s(tab[:n*8])
	var sumf [q1lutRows]float32
	for b := 0; b < nb; b++ {
		gb := g[b*q1lutBlockBytes : (b+1)*q1lutBlockBytes]
		tb := t16[b*512 : (b+1)*512]
		var sumi [q1lutRows]float32
		for k := 0; k < 4; k++ {
			var s [q1lutRows]int32
			for v := 4 * k; v < 4*k+4; v++ {
				codes := gb[32+16*v : 48+16*v : 48+16*v]
				t0 := tb[32*v : 32*v+16 : 32*v+16]
				t1 := tb[32*v+16 : 32*v+32 : 32*v+32]
				for r, x := range codes {
					s[r] += int32(t0[x&15]) + int32(t1[x>>4])
				}
			}
			d := f16tab[le16(a[(4*b+k)*q8_0Bytes:])]
			for r, v := range s {
				sumi[r] += float32(d * float32(v))
			}
		}
		for r := range sumf {
			sumf[r] += float32(f16tab[le16(gb[2*r:])] * sumi[r])
		}
	}
	copy(out, sumf[:])
}

// i16s views little-endian int16 bytes as []int16 (every target of the
// module is little-endian; tables are allocated 8-byte aligned).
func i16s(b []byte) []int16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*int16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// q1lutCall calls an assembly kernel asm of the given number of
// consecutive groups (1 or 2), whose tables take tabBlock bytes per 128
// columns, after checking the bounds of what it reads and writes once.
func q1lutCall(asm func(grp, tab *byte, nb int, out *float32), groups, tabBlock, n int, g, tab []byte, out []float32) {
	nb := n / 128
	if nb == 0 {
		clear(out[:groups*q1lutRows])
		return
	}
	_, _, _ = g[groups*nb*q1lutBlockBytes-1], tab[nb*tabBlock-1], out[groups*q1lutRows-1]
	asm(&g[0], &tab[0], nb, &out[0])
}

// q1lutAlloc returns n bytes of table space aligned to 64 bytes (a cache
// line: the x86 kernel reads 64-byte tables).
func q1lutAlloc(n int) []byte {
	b := make([]byte, n+64)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & 63)
	return b[off : off+n : off+n]
}

// The float tables of the x86 kernel, per 128-column block: the four q8_0
// activation scales as float32 (padded to 64 bytes), then for each
// 4-column group G (0-31) its 16 entries as float32 at 64+64G. An entry
// converted once here is what ggml's AVX2 kernel converts per row
// (VCVTDQ2PS of an exact integer): the same float.
const q1lutTabBlockF32 = 64 + 32*64

// q1lutTabBytesF32 is tabBytes of the float tables.
func q1lutTabBytesF32(n int) int { return n / 128 * q1lutTabBlockF32 }

// q1lutTablesF32 writes the float tables of activation row a.
func q1lutTablesF32(tab, a []byte, n int) {
	for b := 0; b < n/128; b++ {
		tb := F32s(tab[b*q1lutTabBlockF32 : (b+1)*q1lutTabBlockF32])
		for k := 0; k < 4; k++ {
			tb[k] = f16tab[le16(a[(4*b+k)*q8_0Bytes:])]
		}
		for G := 0; G < 32; G++ {
			y := a[(4*b+G/8)*q8_0Bytes+2+4*(G%8):]
			for c, v := range q1lutSigned(i8s(y[:4])) {
				tb[16+16*G+c] = float32(v)
			}
		}
	}
}

// The byte tables of the ARM kernel, per 128-column block: the four q8_0
// activation scales as float32, then for each sign byte vector v (0-15)
// 64 bytes: L(2v), L(2v+1), H(2v), H(2v+1), 16 each, where an entry T of
// group G is stored as T = 64*H + L, L = T&63 in [0, 63] and H = T>>6 in
// [-8, 7]: a kernel adds four L lookups (at most 252) or eight H lookups
// in bytes before widening.
const q1lutTabBlockLH = 16 + 16*64

// q1lutTabBytesLH is tabBytes of the byte tables.
func q1lutTabBytesLH(n int) int { return n / 128 * q1lutTabBlockLH }

// q1lutTablesLH writes the byte tables of activation row a.
func q1lutTablesLH(tab, a []byte, n int) {
	for b := 0; b < n/128; b++ {
		tb := tab[b*q1lutTabBlockLH : (b+1)*q1lutTabBlockLH]
		hd := F32s(tb[:16])
		for k := range hd {
			hd[k] = f16tab[le16(a[(4*b+k)*q8_0Bytes:])]
		}
		for G := 0; G < 32; G++ {
			y := a[(4*b+G/8)*q8_0Bytes+2+4*(G%8):]
			t := tb[16+64*(G/2)+16*(G%2):]
			for c, v := range q1lutSigned(i8s(y[:4])) {
				t[c] = byte(v & 63)
				t[32+c] = byte(v >> 6)
			}
		}
	}
}

// q1lutGroupLH is the specification of the ARM kernel in Go: the byte
// tables' sums, then the generic float steps (q1lutGroupGo's).
func q1lutGroupLH(n int, g, a, tab []byte, out []float32) {
	nb := n / 128
	var sumf [q1lutRows]float32
	for b := 0; b < nb; b++ {
		gb := g[b*q1lutBlockBytes : (b+1)*q1lutBlockBytes]
		tb := tab[b*q1lutTabBlockLH : (b+1)*q1lutTabBlockLH]
		hd := F32s(tb[:16])
		var sumi [q1lutRows]float32
		for k := 0; k < 4; k++ {
			var s [q1lutRows]int32
			for v := 4 * k; v < 4*k+4; v++ {
				t := tb[16+64*v : 16+64*v+64]
				for r, x := range gb[32+16*v : 48+16*v] {
					s[r] += int32(t[x&15]) + int32(t[16+x>>4]) + 64*(int32(int8(t[32+x&15]))+int32(int8(t[48+x>>4])))
				}
			}
			for r, v := range s {
				sumi[r] += float32(hd[k] * float32(v))
			}
		}
		for r := range sumf {
			sumf[r] += float32(f16tab[le16(gb[2*r:])] * sumi[r])
		}
	}
	copy(out[:q1lutRows], sumf[:])
}

// How Products runs dense Q1_0 matrices with the lookup kernel: their
// whole groups of 16 rows are repacked once (Matrix.Pack, at the model's
// Open), and a product builds each activation row's tables once for all
// the groups.

// q1lutTableBudget bounds the tables Products holds: a product builds them
// for as many activation rows as fit at a time (at least one).
const q1lutTableBudget = 1 << 20

// q1lutState is Products' table space: the tables of some activation rows,
// the Q8_0 rows they were built from and the kernel that built them.
type q1lutState struct {
	tab []byte
	src []byte
	k   *q1lutKernel
}

// q1lutRun returns the kernel that runs repacked matrices: the installed
// set's, or the portable one when the set was changed after Pack to one
// without (whose row kernel is then the portable one's float order).
func q1lutRun() *q1lutKernel {
	if q1lutSet != nil {
		return q1lutSet
	}
	return q1lutGo
}

// q1lutPackable reports whether m is a Q1_0 matrix that Pack puts in the
// lookup layout: the installed set has a lookup kernel, m has a whole
// group of rows, its bytes are there and it is not repacked yet.
func (m *Matrix) q1lutPackable() bool {
	return m.Type == gguf.TypeQ1_0 && q1lutSet != nil && m.q1 == nil && m.pk == nil && m.Rows >= q1lutRows && m.data != nil
}

// packQ1LUT is Pack for the lookup layout, which is the rows' size: in
// place one group at a time through a group-sized scratch, or into a new
// buffer, returning the row bytes it replaced.
func (m *Matrix) packQ1LUT(inPlace bool) []byte {
	nb := m.Cols / 128
	gb := q1lutRows * m.RowBytes
	rows := m.data[:m.Rows/q1lutRows*gb]
	if inPlace {
		tmp := make([]byte, gb)
		for g := 0; g < len(rows); g += gb {
			copy(tmp, rows[g:g+gb])
			q1lutRepack(rows[g:g+gb], tmp, m.RowBytes, nb)
		}
		m.q1 = rows
		return nil
	}
	dst := osmem.AlignedBytes(len(rows))
	for g := 0; g < len(rows); g += gb {
		q1lutRepack(dst[g:g+gb], rows[g:g+gb], m.RowBytes, nb)
	}
	m.q1 = dst
	return rows
}

// matmulQ1LUT is MatMul for a repacked Q1_0 matrix, whose activations are
// already quantized in act (stride bytes per row): the tables of as many
// rows as the budget holds at a time, then the groups over the pool, each
// group against every one of those rows while its bytes are in the cache.
// Tables built from the same activation bytes by the same kernel are not
// built again (q, k and v, or gate and up, take the same input).
func (s *Products) matmulQ1LUT(w *Matrix, act []byte, stride int, out []float32, nb int) {
	k := q1lutRun()
	tb := k.tabBytes(w.Cols)
	if len(s.q1.tab) < tb {
		s.q1.tab = q1lutAlloc(max(q1lutTableBudget, tb))
	}
	per := len(s.q1.tab) / tb
	groups := (w.Rows + q1lutRows - 1) / q1lutRows
	for j0 := 0; j0 < nb; j0 += per {
		n := min(per, nb-j0)
		if src := act[j0*stride : (j0+n)*stride]; k != s.q1.k || !bytes.Equal(src, s.q1.src) {
			for j := 0; j < n; j++ {
				k.tables(s.q1.tab[j*tb:(j+1)*tb], act[(j0+j)*stride:], w.Cols)
			}
			s.q1.src, s.q1.k = append(s.q1.src[:0], src...), k
		}
		s.mt.w, s.mt.act, s.mt.stride, s.mt.out, s.mt.nb = w, act[j0*stride:], stride, out[j0*w.Rows:], n
		s.mt.tab, s.mt.tabStride = s.q1.tab, tb
		s.pool.Run(&s.mt, groups, 1, w.Rows*w.RowBytes*n >= 256<<10)
	}
}

// runQ1LUT computes groups [lo, hi) of a repacked Q1_0 matrix, every
// activation row of a group in turn, and the rows past the last whole
// group (in the row layout) with the set's row kernel.
func (t *matmulTask) runQ1LUT(lo, hi int) {
	w, k := t.w, q1lutRun()
	full := w.Rows / q1lutRows
	gb := q1lutRows * w.RowBytes
	for gi := lo; gi < min(hi, full); {
		f, n := k.group, 1
		if k.group2 != nil && gi+2 <= min(hi, full) {
			f, n = k.group2, 2
		}
		r0 := gi * q1lutRows
		g := w.q1[gi*gb : (gi+n)*gb]
		for j := 0; j < t.nb; j++ {
			f(w.Cols, g, t.act[j*t.stride:(j+1)*t.stride], t.tab[j*t.tabStride:(j+1)*t.tabStride], t.out[j*w.Rows+r0:j*w.Rows+r0+n*q1lutRows])
		}
		gi += n
	}
	if hi > full {
		for r := full * q1lutRows; r < w.Rows; r++ {
			for j := 0; j < t.nb; j++ {
				t.out[j*w.Rows+r] = w.k.dot(w.Cols, w.Row(r), t.act[j*t.stride:(j+1)*t.stride])
			}
		}
	}
}
