package kernels

import (
	"encoding/binary"
	"fmt"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// Integer kernels of the ternary weights: the types TQ1_0 and TQ2_0 and the
// layouts ter3, ter2 and ter2s128 (docs/layouts.md) of Q2_0, TQ1_0 and
// TQ2_0 tensors. Every format is read 64 weights (a group) at a time into
// eight words of codes in weight order, one code (0, 1, 2: weight -1, 0,
// +1) per byte, and one function sums a group against its activations in
// 64-bit words (SWAR, as kernels_lowbit.go): with u = y+128, sum (q-1)*y =
// sum q*u - 128*sum q - sum y, and q*u is u where the code's low bit is set
// plus 2u where its high bit is. The sums are exact, and the float steps
// are those of ggml's generic kernel for the original type (TQ1_0/TQ2_0:
// per 256 weights sumf += float(sum) * (d*y.d); Q2_0: per 32 weights the
// q8_0 scale, per 64 the weight scale), so a file in a lossless layout
// gives its original's logits bit for bit, and the results are the same
// on every architecture.

const (
	tq1_0Bytes = 54 // qs[48] (5 trits a byte), qh[4] (4 trits a byte), d f16
	tq2_0Bytes = 66 // qs[64] (2-bit codes q, weight (q-1)*d), d f16

	ones8 = 0x0101010101010101 // one in every byte
	code8 = 0x0303030303030303 // a 2-bit code in every byte
)

// terCodes is the eight code words of one 64-weight group: word i holds
// weights 8i..8i+7, one code per byte.
type terCodes [8]uint64

// trits8 returns trit n of each of the eight TQ1_0-encoded bytes of x as
// ggml decodes it, ((byte * 3^n mod 256) * 3) >> 8, with p = 3^n: the even
// and the odd bytes in 16-bit lanes, where neither product carries into
// the next lane.
func trits8(x, p uint64) uint64 {
	e := x & lo16 * p & lo16
	o := (x >> 8) & lo16 * p & lo16
	return (e*3>>8)&lo16 | (o*3)&^lo16
}

// pow3 are the multipliers of trits 0..4 (trit 0 most significant).
var pow3 = [5]uint64{1, 3, 9, 27, 81}

// terSums is the running integer sums of a dot (terSums.add): the lanes of
// u where codes have the low bit set (lo) and the high bit (hi), the
// lanes of all u (all), and the codes byte-wise (sq).
type terSums struct{ lo, hi, all, sq uint64 }

// add takes eight weights: codes x and activation bytes y (eight int8).
func (s *terSums) add(x uint64, y []byte) {
	u := binary.LittleEndian.Uint64(y) ^ bias8
	l, h := x&ones8, x>>1&ones8
	s.lo += pairs16(u & (l<<8 - l))
	s.hi += pairs16(u & (h<<8 - h))
	s.all += pairs16(u)
	s.sq += x
}

// sum returns sum (q-1)*y of the n weights added (lanes within 16 bits:
// at most 256 weights).
func (s *terSums) sum(n int) int32 {
	qu := lanes16(s.lo) + 2*lanes16(s.hi)
	sq := lanes16(pairs16(s.sq))
	return qu - 128*sq - (lanes16(s.all) - 128*int32(n))
}

// sumQ8K returns sum (q-1)*y of one 256-weight block added, sum y taken
// from the Q8_K block's bsums.
func (s *terSums) sumQ8K(bsums []byte) int32 {
	qu := lanes16(s.lo) + 2*lanes16(s.hi)
	sq := lanes16(pairs16(s.sq))
	var sy int32
	for j := 0; j < 16; j++ {
		sy += int32(int16(le16(bsums[2*j:])))
	}
	return qu - 128*sq - sy
}

// addQ8K is add without the sum of u (Q8_K blocks carry theirs).
func (s *terSums) addQ8K(x uint64, y []byte) {
	u := binary.LittleEndian.Uint64(y) ^ bias8
	l, h := x&ones8, x>>1&ones8
	s.lo += pairs16(u & (l<<8 - l))
	s.hi += pairs16(u & (h<<8 - h))
	s.sq += x
}

// ter2Group reads the 16 code bytes of a ter2 group: byte m holds weights
// m, m+16, m+32, m+48 in bits 0-1, 2-3, 4-5, 6-7.
func ter2Group(c []byte, out *terCodes) {
	c0, c1 := binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:16])
	for n := 0; n < 4; n++ {
		out[2*n] = c0 >> (2 * n) & code8
		out[2*n+1] = c1 >> (2 * n) & code8
	}
}

// ter3Group reads the 13 code bytes of a ter3 group: byte m holds weights
// m, m+13, m+26, m+39, m+52 as trits (the 65th, a pad, is dropped). Trit n
// of bytes 0-7 and of bytes 5-12 are weights 13n.. and 13n+5..; they are
// written in weight order to a buffer (the later writes over the first
// one's tail) and read back as words.
func ter3Group(c []byte, out *terCodes) {
	c = c[:13:13]
	a := binary.LittleEndian.Uint64(c)
	b := binary.LittleEndian.Uint64(c[5:])
	var buf [72]byte
	for n, p := range pow3 {
		binary.LittleEndian.PutUint64(buf[13*n:], trits8(a, p))
		binary.LittleEndian.PutUint64(buf[13*n+5:], trits8(b, p))
	}
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
}

// tq2Block reads one TQ2_0 block's codes as four groups: weight w is in
// byte 32*(w/128) + w%32, bits 2*((w%128)/32).
func tq2Block(x []byte, out *[4]terCodes) {
	for i := 0; i < 32; i++ {
		c := binary.LittleEndian.Uint64(x[32*(i/16)+8*(i%4):])
		out[i/8][i%8] = c >> (2 * ((i % 16) / 4)) & code8
	}
}

// tq1Block reads one TQ1_0 block's codes as four groups: trit n of bytes
// 0-31 are weights 32n.., of bytes 32-47 weights 160+16n.., of bytes 48-51
// (qh) weights 240+4n...
func tq1Block(x []byte, out *[4]terCodes) {
	for i := 0; i < 20; i++ {
		out[i/8][i%8] = trits8(binary.LittleEndian.Uint64(x[8*(i%4):]), pow3[i/4])
	}
	for i := 20; i < 30; i++ {
		out[i/8][i%8] = trits8(binary.LittleEndian.Uint64(x[32+8*(i%2):]), pow3[(i-20)/2])
	}
	qh := uint64(binary.LittleEndian.Uint32(x[48:]))
	qh |= qh << 32
	out[3][6] = trits8(qh, 1)&0xFFFFFFFF | trits8(qh, 3)&^0xFFFFFFFF
	out[3][7] = trits8(qh, 9)&0xFFFFFFFF | trits8(qh, 27)&^0xFFFFFFFF
}

// tqDot is the TQ1_0/TQ2_0 dot: each block's codes (read by codes) against
// its Q8_K activation block, ggml's generic float steps.
func tqDot(n int, w, a []byte, bs int, codes func([]byte, *[4]terCodes)) float32 {
	nb := n / 256
	w, a = w[:nb*bs], a[:nb*q8_KBytes]
	var sumf float32
	var g [4]terCodes
	for i := 0; i < nb; i++ {
		x := w[i*bs : (i+1)*bs]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		codes(x, &g)
		var s terSums
		for k := range g {
			for j, c := range g[k] {
				s.addQ8K(c, y[4+64*k+8*j:])
			}
		}
		d := float32(f16(x[bs-2:]) * lef32(y))
		sumf += float32(float32(s.sumQ8K(y[260:])) * d)
	}
	return sumf
}

func dotTQ1_0Go(n int, w, a []byte) float32 { return tqDot(n, w, a, tq1_0Bytes, tq1Block) }

func dotTQ2_0Go(n int, w, a []byte) float32 { return tqDot(n, w, a, tq2_0Bytes, tq2Block) }

// refDotTQ1_0 is ggml's generic tq1_0 x q8_K dot.
func refDotTQ1_0(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*tq1_0Bytes:], a[i*q8_KBytes:]
		qs := y[4:260]
		var sum int32
		trit := func(b byte, l int) int32 { return int32(uint16(b*byte(pow3[l]))*3>>8) - 1 }
		for m := 0; m < 32; m++ {
			for l := 0; l < 5; l++ {
				sum += trit(x[m], l) * int32(int8(qs[l*32+m]))
			}
		}
		for m := 0; m < 16; m++ {
			for l := 0; l < 5; l++ {
				sum += trit(x[32+m], l) * int32(int8(qs[160+l*16+m]))
			}
		}
		for l := 0; l < 4; l++ {
			for j := 0; j < 4; j++ {
				sum += trit(x[48+j], l) * int32(int8(qs[240+l*4+j]))
			}
		}
		sumf += float32(float32(sum) * float32(f16(x[52:])*lef32(y)))
	}
	return sumf
}

// refDotTQ2_0 is ggml's generic tq2_0 x q8_K dot.
func refDotTQ2_0(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*tq2_0Bytes:], a[i*q8_KBytes:]
		var sum int32
		for j := 0; j < 64; j += 32 {
			for l := 0; l < 4; l++ {
				for k := 0; k < 32; k++ {
					sum += int32(int8(y[4+j*4+l*32+k])) * (int32(x[j+k]>>(l*2)&3) - 1)
				}
			}
		}
		sumf += float32(float32(sum) * float32(lef32(y)*f16(x[64:])))
	}
	return sumf
}

// terLayout is one ternary layout's row format.
type terLayout struct {
	codeBytes int // per 64 weights
	perScale  int // groups per scale
	group     func([]byte, *terCodes)
}

var terLayouts = map[layout.Kind]terLayout{
	layout.Ter3:     {13, 1, ter3Group},
	layout.Ter2:     {16, 1, ter2Group},
	layout.Ter2S128: {16, 2, ter2Group},
}

// split returns the scales and the codes of a row of n weights.
func (l terLayout) split(n int, w []byte) (scales, codes []byte) {
	ns := n / 64 / l.perScale
	return w[:2*ns], w[2*ns : 2*ns+n/64*l.codeBytes]
}

// dotQ8_0 is the dot of a row of an original Q2_0 tensor with Q8_0
// activations: ggml's generic q2_0 float steps per group (two q8_0 blocks).
func (l terLayout) dotQ8_0(n int, w, a []byte) float32 {
	scales, codes := l.split(n, w)
	a = a[:n/32*q8_0Bytes]
	var sumf float32
	var g terCodes
	var y [64]byte
	for i := 0; i < n/64; i++ {
		l.group(codes[i*l.codeBytes:], &g)
		y0, y1 := a[2*i*q8_0Bytes:(2*i+1)*q8_0Bytes], a[(2*i+1)*q8_0Bytes:(2*i+2)*q8_0Bytes]
		copy(y[:32], y0[2:])
		copy(y[32:], y1[2:])
		var s0, s1 terSums
		for j := 0; j < 4; j++ {
			s0.add(g[j], y[8*j:])
			s1.add(g[4+j], y[32+8*j:])
		}
		var sumi float32
		sumi += float32(f16(y0) * float32(s0.sum(32)))
		sumi += float32(f16(y1) * float32(s1.sum(32)))
		sumf += float32(f16(scales[2*(i/l.perScale):]) * sumi)
	}
	return sumf
}

// dotQ8_K is the dot of a row of an original TQ1_0 or TQ2_0 tensor with
// Q8_K activations: per 256 weights one integer sum and ggml's generic
// float step. The four scales of a block are equal in a file made from
// TQ1_0/TQ2_0 (one scale per block); where they are not, each group's sum
// is scaled by its own.
func (l terLayout) dotQ8_K(n int, w, a []byte) float32 {
	scales, codes := l.split(n, w)
	nb := n / 256
	a = a[:nb*q8_KBytes]
	var sumf float32
	for b := 0; b < nb; b++ {
		sumf = l.blockQ8_K(b, scales, codes, a, sumf)
	}
	return sumf
}

// blockQ8_K adds block b (256 weights) of dotQ8_K to sumf.
func (l terLayout) blockQ8_K(b int, scales, codes, a []byte, sumf float32) float32 {
	var g terCodes
	y := a[b*q8_KBytes : (b+1)*q8_KBytes]
	sc := [4]uint16{}
	for k := range sc {
		sc[k] = le16(scales[2*((4*b+k)/l.perScale):])
	}
	if sc[0] == sc[1] && sc[0] == sc[2] && sc[0] == sc[3] {
		var s terSums
		for k := 0; k < 4; k++ {
			l.group(codes[(4*b+k)*l.codeBytes:], &g)
			for j, c := range g {
				s.addQ8K(c, y[4+64*k+8*j:])
			}
		}
		return sumf + float32(float32(s.sumQ8K(y[260:]))*float32(f16tab[sc[0]]*lef32(y)))
	}
	for k := 0; k < 4; k++ {
		l.group(codes[(4*b+k)*l.codeBytes:], &g)
		var s terSums
		for j, c := range g {
			s.add(c, y[4+64*k+8*j:])
		}
		sumf += float32(float32(s.sum(64)) * float32(f16tab[sc[k]]*lef32(y)))
	}
	return sumf
}

// terPortable returns the portable kernel of layout entry e: dotQ8_0 for
// a Q2_0 original, dotQ8_K for a TQ1_0 or TQ2_0 one (installTernary puts
// it back under the portable set).
func terPortable(e layout.Entry) dotFunc {
	l := terLayouts[e.Kind]
	if e.From == gguf.TypeQ2_0 {
		return l.dotQ8_0
	}
	return l.dotQ8_K
}

// terRef is the reference of a layout's kernel: the row restored to its
// original type (layout.UnpackTernary), then that type's reference dot.
func terRef(kind layout.Kind, from gguf.Type) dotFunc {
	ref := map[gguf.Type]dotFunc{gguf.TypeQ2_0: refDotQ2_0, gguf.TypeTQ1_0: refDotTQ1_0, gguf.TypeTQ2_0: refDotTQ2_0}[from]
	return func(n int, w, a []byte) float32 {
		rb, _ := from.RowSize(int64(n))
		row := make([]byte, rb)
		if err := layout.UnpackTernary(kind, from, row, w, int64(n), 0); err != nil {
			panic(err)
		}
		return ref(n, row, a)
	}
}

// terKernel is the kernel of a tensor in a ternary layout, and what its
// rows restore to (for embedding lookups).
type terKernel struct {
	kernel
	kind layout.Kind
	from gguf.Type
}

// terKernels holds one kernel per layout and original type.
var terKernels = func() map[layout.Entry]*terKernel {
	m := map[layout.Entry]*terKernel{}
	for kind := range terLayouts {
		for _, from := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
			e := layout.Entry{Kind: kind, From: from}
			k := &terKernel{kind: kind, from: from}
			k.act, k.dot = gguf.TypeQ8_K, terPortable(e)
			if from == gguf.TypeQ2_0 {
				k.act = gguf.TypeQ8_0
			}
			k.ref = terRef(kind, from)
			m[e] = k
		}
	}
	return m
}()

// terKernelOf returns the ternary-layout kernel behind k, or nil.
func terKernelOf(k *kernel) *terKernel {
	for _, t := range terKernels {
		if &t.kernel == k {
			return t
		}
	}
	return nil
}

// EmbedRow converts row r of the embedding matrix m to float32: a row in
// a ternary layout is restored to its original type first.
func EmbedRow(m *Matrix, dst []float32, r int) error {
	t := terKernelOf(m.k)
	if t == nil {
		return DequantizeRow(m.Type, dst, m.Row(r))
	}
	rb, _ := t.from.RowSize(int64(m.Cols))
	row := make([]byte, rb)
	if err := layout.UnpackTernary(t.kind, t.from, row, m.Row(r), int64(m.Cols), int64(r)); err != nil {
		return err
	}
	return DequantizeRow(t.from, dst, row)
}

// NewTernaryMatrix wraps data, rows rows of cols weights of a tensor of
// type e.From stored in ternary layout e.Kind as type t (rowBytes each,
// layout.Stored), with the kernel of that layout and original type, after
// checking that its rows fit the layout and the kernel's activation type.
func NewTernaryMatrix(e layout.Entry, t gguf.Type, cols, rows, rowBytes int, data []byte) (*Matrix, error) {
	k, ok := terKernels[layout.Entry{Kind: e.Kind, From: e.From}]
	if !ok {
		return nil, fmt.Errorf("tensor %q: no kernel for layout %s of %s", e.Name, e.Kind, e.From)
	}
	if cols%e.From.BlockSize() != 0 || cols%k.act.BlockSize() != 0 || (e.Kind == layout.Ter2S128 && cols%128 != 0) {
		return nil, fmt.Errorf("tensor %q: rows of %d weights do not fit layout %s of %s", e.Name, cols, e.Kind, e.From)
	}
	return &Matrix{Name: e.Name, Type: t, Cols: cols, Rows: rows, RowBytes: rowBytes, data: data, k: &k.kernel}, nil
}
