package kernels

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// Interleaved matrices. A weight row's dot product in the row kernels ends
// in a horizontal sum, and its block scales are converted one at a time;
// llama.cpp instead repacks Q4_0 (and others) at load into tiles of 8 rows
// whose blocks lie side by side, so that one vector lane holds one row:
// the 8 scales of a block index convert in one instruction, the
// activations are loaded once for the 8 rows, and no horizontal sum is
// left. The runtime does the same for the types with a packKernel: the rows
// in whole groups of packRows are copied at Open into the group layout
// (the tail rows stay in the row layout), and matmul runs them with the
// kernel set's gemv.
//
// Q4_0 group layout, per block index b of the 8 rows (8*18 bytes, the same
// as the rows'): the 8 rows' f16 scales, then four 32-byte vectors; vector
// p holds, for rows 0-7, bytes 4p..4p+3 of the row's 16 nibble bytes: their
// low nibbles are elements 4p..4p+3 (chunk p), their high nibbles elements
// 16+4p..16+4p+3 (chunk p+4). Each 32-bit lane of an unpacked vector is
// then 4 weights of one row, which one VPDPBUSD (or VPMADDUBSW and
// VPMADDWD) multiplies by the same 4 activations broadcast to every lane.
//
// The sums: per row and block the integer dot of the unsigned nibbles with
// the activations less 8 times the activation sum (exactly the signed
// sum), then acc += float32(isum) * (d_w * d_a), multiply and add rounded
// separately, blocks in order. The Go version below and every assembly
// version compute exactly this, so their results agree bit for bit on
// every architecture, and are the portable row kernel's; they differ from
// amd64's AVX2 row kernel's (8 float lanes per row, as ggml's) in the
// last bits. Every type's group kernels keep to its portable row kernel's
// sums (TestPackedKernels).

// packRows is the number of rows interleaved in a group.
const packRows = 8

// packKernel multiplies the groups of a matrix in a type's group layout.
type packKernel struct {
	// repack writes one group (packRows rows of nb blocks, rowBytes each,
	// in src) into dst in the group layout.
	repack func(dst, src []byte, rowBytes, nb int)
	// prep writes the per-block values gemv needs of one activation row
	// (nb blocks) into aux, auxBytes per block.
	prep     func(aux, act []byte, nb int)
	auxBytes int
	// groupBytes is the size of one block index of a group.
	groupBytes int
	// gemv computes the packRows dots of one group g (nb blocks) with one
	// activation row act and its aux values.
	gemv func(g, act, aux []byte, nb int, out *[packRows]float32)
	// gemm4, where set, is gemv for 4 activation rows (astride bytes
	// apart, their aux rows auxStride apart) with each weight unpacked
	// once: out[8i:8i+8] is row i's gemv, bit for bit.
	gemm4 func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32)
	// repack2, where set, writes two groups (2*packRows rows) into dst in
	// the pair layout (pairRepack), which gemv2 and gemm2x4 read: Pack
	// then puts a matrix's groups in pairs, an odd last one alone.
	repack2 func(dst, src []byte, rowBytes, nb int)
	// gemv2 (set with repack2) is gemv for the two groups of a pair (g
	// holds them, nb blocks each): out[:8] is the first group's gemv,
	// out[8:] the second's, bit for bit.
	gemv2 func(g, act, aux []byte, nb int, out *[2 * packRows]float32)
	// gemm2x4, where set, is gemv2 for 4 activation rows (as gemm4):
	// out[16i:16i+16] is row i's gemv2, bit for bit.
	gemm2x4 func(g, act, aux []byte, astride, auxStride, nb int, out *[8 * packRows]float32)
}

// packKernels holds the portable Go group kernels: the reference the
// assembly is tested against, and what runs a packed matrix when a kernel
// set without group kernels is selected after it was opened.
var packKernels = map[gguf.Type]*packKernel{
	gguf.TypeQ4_0: {repack: repackQ4_0, prep: prepQ4_0, auxBytes: 8, gemv: gemvQ4_0Go, groupBytes: packRows * q4_0Bytes},
	gguf.TypeQ8_0: {repack: repackQ8_0, prep: prepQ8_0, auxBytes: 4, gemv: gemvQ8_0Go, groupBytes: packRows * q8_0Bytes},
	gguf.TypeQ4_K: {repack: repackQ4_K, prep: prepQ4_K, auxBytes: 32, gemv: gemvQ4_KGo, groupBytes: q4KGroupBytes},
	gguf.TypeQ6_K: {repack: repackQ6_K, prep: prepQ6_K, auxBytes: q6KAuxBytes, gemv: gemvQ6_KGo, groupBytes: q6KGroupBytes},
}

// The pair layout of two groups, for kernels with 16 lanes (one row each):
// per block index, each unit of the group layout (a run of bytes holding
// one field for the 8 rows: their scales, or a 32-byte vector) of the
// first group, then the same unit of the second. A 32-byte vector unit
// becomes a 64-byte vector of 16 rows, and the pair is read as one
// sequential stream. pairUnits lists each type's units per block.
var pairUnits = map[gguf.Type][]int{
	gguf.TypeQ4_0: units(16, 1, 32, 4),
	gguf.TypeQ8_0: units(16, 1, 32, 8),
	gguf.TypeQ4_K: append(units(16, 2, 8, 8), units(16, 4, 32, 32)...),
	gguf.TypeQ6_K: append(units(16, 1, 8, 16), units(32, 48, 0, 0)...),
}

// units returns n1 units of size s1, then n2 of size s2.
func units(s1, n1, s2, n2 int) []int {
	u := make([]int, 0, n1+n2)
	for i := 0; i < n1; i++ {
		u = append(u, s1)
	}
	for i := 0; i < n2; i++ {
		u = append(u, s2)
	}
	return u
}

// pairRepack returns the repack of two groups into the pair layout: per
// block index, each group's block into the group layout (repack of one
// block: rowBlock bytes per row block, groupBlock per group block), then
// their units interleaved. The scratch of two group blocks is pooled: Pack
// calls it once per pair, and a fresh one each time left the garbage of a
// Q6_K head (32 MB for Qwen3-0.6B's) in the peak RSS of `gguf run`.
func pairRepack(repack func(dst, src []byte, rowBytes, nb int), rowBlock, groupBlock int, us []int) func(dst, src []byte, rowBytes, nb int) {
	scratch := sync.Pool{New: func() any { b := make([]byte, 2*groupBlock); return &b }}
	return func(dst, src []byte, rowBytes, nb int) {
		bp := scratch.Get().(*[]byte)
		defer scratch.Put(bp)
		tmp := *bp
		o := 0
		for b := 0; b < nb; b++ {
			repack(tmp[:groupBlock], src[b*rowBlock:], rowBytes, 1)
			repack(tmp[groupBlock:], src[packRows*rowBytes+b*rowBlock:], rowBytes, 1)
			u0 := 0
			for _, n := range us {
				o += copy(dst[o:o+n], tmp[u0:u0+n])
				o += copy(dst[o:o+n], tmp[groupBlock+u0:groupBlock+u0+n])
				u0 += n
			}
		}
	}
}

// repackQ4_0 interleaves 8 Q4_0 rows block by block (see above).
func repackQ4_0(dst, src []byte, rowBytes, nb int) { interleave32(dst, src, rowBytes, nb, q4_0Bytes) }

// interleave32 interleaves 8 rows of 32-value blocks of blockBytes bytes,
// an f16 scale and then the values' bytes: per block index the 8 scales,
// then for each 4 bytes c of a block a 32-byte vector of the 8 rows' 4
// bytes c (the Q4_0 and Q8_0 group layouts).
func interleave32(dst, src []byte, rowBytes, nb, blockBytes int) {
	eachRowBlock(dst, src, rowBytes, nb, blockBytes, packRows*blockBytes, func(g, blk []byte, r int) {
		copy(g[2*r:2*r+2], blk[:2])
		for c := 0; c < (blockBytes-2)/4; c++ {
			mov4(g[16+32*c+4*r:], blk[2+4*c:])
		}
	})
}

// mov4 copies 4 bytes as one load and store: copy's call to memmove was
// most of the time of packing a model's matrices at Open.
func mov4(dst, src []byte) { binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src)) }

// eachRowBlock calls fn for every block index b and row r of a group of
// packRows rows (rowBytes apart in src, blocks of blockBytes) with the
// row's block and the group layout's block b in dst (groupBlock bytes).
func eachRowBlock(dst, src []byte, rowBytes, nb, blockBytes, groupBlock int, fn func(g, blk []byte, r int)) {
	_ = dst[nb*groupBlock-1]
	_ = src[(packRows-1)*rowBytes+nb*blockBytes-1]
	for b := 0; b < nb; b++ {
		g := dst[b*groupBlock : (b+1)*groupBlock]
		for r := 0; r < packRows; r++ {
			fn(g, src[r*rowBytes+b*blockBytes:r*rowBytes+(b+1)*blockBytes], r)
		}
	}
}

// prepQ4_0 writes, per q8_0 activation block, its scale as float32 and -8
// times the sum of its 32 values as int32: the unsigned nibbles' dot plus
// that is the dot with the weights less 8.
func prepQ4_0(aux, act []byte, nb int) {
	_, _ = aux[nb*8-1], act[nb*q8_0Bytes-1]
	for b := 0; b < nb; b++ {
		blk := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		var s int32
		for _, v := range i8s(blk[2:34]) {
			s += int32(v)
		}
		binary.LittleEndian.PutUint32(aux[8*b:], math.Float32bits(f16tab[le16(blk)]))
		binary.LittleEndian.PutUint32(aux[8*b+4:], uint32(-8*s))
	}
}

// gemvQ4_0Go is the group kernel in Go.
func gemvQ4_0Go(g, act, aux []byte, nb int, out *[packRows]float32) {
	var acc [packRows]float32
	_, _, _ = g[nb*packRows*q4_0Bytes-1], act[nb*q8_0Bytes-1], aux[nb*8-1]
	for b := 0; b < nb; b++ {
		gb := g[b*packRows*q4_0Bytes : (b+1)*packRows*q4_0Bytes]
		a := i8s(act[b*q8_0Bytes+2 : (b+1)*q8_0Bytes])
		da := math.Float32frombits(le32(aux[8*b:]))
		corr := int32(le32(aux[8*b+4:]))
		a = a[:32:32]
		for r := range acc {
			s := corr
			for p := 0; p < 4; p++ {
				q := gb[16+32*p+4*r : 16+32*p+4*r+4 : 16+32*p+4*r+4]
				lo, hi := a[4*p:4*p+4:4*p+4], a[16+4*p:20+4*p:20+4*p]
				s += int32(q[0]&15)*int32(lo[0]) + int32(q[1]&15)*int32(lo[1]) + int32(q[2]&15)*int32(lo[2]) + int32(q[3]&15)*int32(lo[3])
				s += int32(q[0]>>4)*int32(hi[0]) + int32(q[1]>>4)*int32(hi[1]) + int32(q[2]>>4)*int32(hi[2]) + int32(q[3]>>4)*int32(hi[3])
			}
			acc[r] += float32(float32(s) * float32(f16tab[le16(gb[2*r:])]*da))
		}
	}
	*out = acc
}

// Q8_0 group layout, per block index of the 8 rows (8*34 bytes, the same
// as the rows'): the 8 rows' f16 scales, then eight 32-byte vectors; vector
// c holds, for rows 0-7, values 4c..4c+3 of the row's block. The kernels
// multiply |w| by the activations given w's signs (VPSIGNB), as ggml's
// x86 q8_0 code does; the sums are Q4_0's: an exact integer dot per row
// and block, then acc += float32(isum) * (d_w * d_a).

// repackQ8_0 interleaves 8 Q8_0 rows block by block.
func repackQ8_0(dst, src []byte, rowBytes, nb int) { interleave32(dst, src, rowBytes, nb, q8_0Bytes) }

// prepQ8_0 writes, per q8_0 activation block, its scale as float32.
func prepQ8_0(aux, act []byte, nb int) {
	_, _ = aux[nb*4-1], act[nb*q8_0Bytes-1]
	for b := 0; b < nb; b++ {
		binary.LittleEndian.PutUint32(aux[4*b:], math.Float32bits(f16tab[le16(act[b*q8_0Bytes:])]))
	}
}

// prepQ8_0Sum writes prepQ8_0's scales, then per block -128 times the sum
// of its 32 values as int32 (at 4*nb+4*b), for Q8_0 kernels that make the
// weights unsigned (w + 128) where there is no signed byte product (amd64's
// 512-bit VPDPBUSD); the kernels that read prepQ8_0's values read these
// the same.
func prepQ8_0Sum(aux, act []byte, nb int) {
	prepQ8_0(aux, act, nb)
	_ = aux[nb*8-1]
	for b := 0; b < nb; b++ {
		var s int32
		for _, v := range i8s(act[b*q8_0Bytes+2 : (b+1)*q8_0Bytes]) {
			s += int32(v)
		}
		binary.LittleEndian.PutUint32(aux[4*nb+4*b:], uint32(-128*s))
	}
}

// gemvQ8_0Go is the Q8_0 group kernel in Go.
func gemvQ8_0Go(g, act, aux []byte, nb int, out *[packRows]float32) {
	var acc [packRows]float32
	_, _, _ = g[nb*packRows*q8_0Bytes-1], act[nb*q8_0Bytes-1], aux[nb*4-1]
	for b := 0; b < nb; b++ {
		gb := g[b*packRows*q8_0Bytes : (b+1)*packRows*q8_0Bytes]
		a := i8s(act[b*q8_0Bytes+2 : (b+1)*q8_0Bytes])
		da := math.Float32frombits(le32(aux[4*b:]))
		for r := range acc {
			var s int32
			for c := 0; c < 8; c++ {
				for i, v := range i8s(gb[16+32*c+4*r : 16+32*c+4*r+4]) {
					s += int32(v) * int32(a[4*c+i])
				}
			}
			acc[r] += float32(float32(s) * float32(f16tab[le16(gb[2*r:])]*da))
		}
	}
	*out = acc
}

// Q4_K group layout, per super-block index of the 8 rows (1184 bytes, 32
// more than the rows' 1152: the 6-bit scales and mins are stored unpacked,
// a byte each):
//
//	0    the 8 rows' d (f16)
//	16   the 8 rows' dmin (f16)
//	32   scales: for group g (32 values) 0-7, a byte per row
//	96   mins: for pair h (groups 2h, 2h+1) 0-3, per row the two mins
//	160  nibbles: for 64-value part j 0-3 and p 0-7 a 32-byte vector whose
//	     lane k is bytes 32j+4p..32j+4p+3 of row k's qs: low nibbles are
//	     4 values of group 2j, high nibbles of group 2j+1
//
// Sums per row and super-block: isum = sum over groups of scale times the
// group's integer dot, imin = sum of min times the activations' group
// sum; acc += float32(isum) * (d * d_a) - float32(imin) * (dmin * d_a),
// each step rounded: the portable row kernel's sums (q4_KAdd), so that a
// packed matrix gives its bits on every set that promises them.
const q4KGroupBytes = 1184

// repackQ4_K interleaves 8 Q4_K rows super-block by super-block.
func repackQ4_K(dst, src []byte, rowBytes, nb int) {
	eachRowBlock(dst, src, rowBytes, nb, q4_KBytes, q4KGroupBytes, func(g, blk []byte, r int) {
		copy(g[2*r:2*r+2], blk[0:2])
		copy(g[16+2*r:16+2*r+2], blk[2:4])
		sc, mn := kScales(blk[4:16])
		for k := 0; k < 8; k++ {
			g[32+8*k+r] = sc[k]
			g[96+16*(k/2)+2*r+k%2] = mn[k]
		}
		for j := 0; j < 4; j++ {
			for p := 0; p < 8; p++ {
				mov4(g[160+256*j+32*p+4*r:], blk[16+32*j+4*p:])
			}
		}
	})
}

// prepQ4_K writes, per q8_K activation block, its scale (float32) at 0 and
// at 4+4h the int16 pair of group sums (2h, 2h+1), a group sum being two of
// the block's 16-value bsums.
func prepQ4_K(aux, act []byte, nb int) {
	_, _ = aux[nb*32-1], act[nb*q8_KBytes-1]
	for b := 0; b < nb; b++ {
		y := act[b*q8_KBytes : (b+1)*q8_KBytes]
		x := aux[32*b : 32*(b+1)]
		copy(x[0:4], y[0:4])
		for g := 0; g < 8; g++ {
			s := int16(le16(y[260+4*g:])) + int16(le16(y[262+4*g:]))
			binary.LittleEndian.PutUint16(x[4+2*g:], uint16(s))
		}
	}
}

// gemvQ4_KGo is the Q4_K group kernel in Go.
func gemvQ4_KGo(g, act, aux []byte, nb int, out *[packRows]float32) {
	var acc [packRows]float32
	_, _, _ = g[nb*q4KGroupBytes-1], act[nb*q8_KBytes-1], aux[nb*32-1]
	for b := 0; b < nb; b++ {
		gb := g[b*q4KGroupBytes : (b+1)*q4KGroupBytes]
		a := i8s(act[b*q8_KBytes+4 : b*q8_KBytes+260])
		x := aux[32*b : 32*(b+1)]
		da := math.Float32frombits(le32(x))
		for r := range acc {
			var isum, imin int32
			for k := 0; k < 8; k++ {
				imin += int32(gb[96+16*(k/2)+2*r+k%2]) * int32(int16(le16(x[4+2*k:])))
			}
			for j := 0; j < 4; j++ {
				var lo, hi int32
				for p := 0; p < 8; p++ {
					q := gb[160+256*j+32*p+4*r : 160+256*j+32*p+4*r+4]
					for i, v := range q {
						lo += int32(v&15) * int32(a[64*j+4*p+i])
						hi += int32(v>>4) * int32(a[64*j+32+4*p+i])
					}
				}
				isum += lo*int32(gb[32+8*(2*j)+r]) + hi*int32(gb[32+8*(2*j+1)+r])
			}
			acc[r] += float32(float32(float32(isum)*float32(f16tab[le16(gb[2*r:])]*da)) -
				float32(float32(imin)*float32(f16tab[le16(gb[16+2*r:])]*da)))
		}
	}
	*out = acc
}

// Q6_K group layout, per super-block index of the 8 rows (1680 bytes, the
// same as the rows'):
//
//	0     the 8 rows' d (f16)
//	16    scales: for 16-value group g 0-15, a signed byte per row
//	144   for half j 0-1 and p 0-7, at 144+96(8j+p): for s 0-1 a 32-byte
//	      vector of ql whose lane k is bytes 64j+32s+4p..+3 of row k's
//	      ql, then a 32-byte vector of qh, lane k bytes 32j+4p..+3 of row
//	      k's qh
//
// Vector (j, s, p) of ql with (j, p) of qh gives the 6-bit values
// 128j+32t+4p..+3, t = s (low nibbles, qh bits 2s..2s+1) and t = s+2 (high
// nibbles, bits 4+2s..5+2s), of 16-value group 8j+2t+p/4. Sums per row
// and super-block: isum = sum over groups of scale times (the unsigned
// values' dot less 32 times the activations' group sum), then acc +=
// float32(isum) * (d * d_a), rounded apart. The three vectors a kernel
// loads together lie side by side so that a group (and a pair in the pair
// layout) is read front to back: with ql s=0, s=1 and qh 256 and 1024
// bytes apart the 512-bit pair kernels streamed the Qwen3-0.6B head from
// memory at a third of the speed (BenchmarkPacked512Head).
const q6KGroupBytes = 1680

// repackQ6_K interleaves 8 Q6_K rows super-block by super-block.
func repackQ6_K(dst, src []byte, rowBytes, nb int) {
	eachRowBlock(dst, src, rowBytes, nb, q6_KBytes, q6KGroupBytes, func(g, blk []byte, r int) {
		copy(g[2*r:2*r+2], blk[208:210])
		for k := 0; k < 16; k++ {
			g[16+8*k+r] = blk[192+k]
		}
		for j := 0; j < 2; j++ {
			for p := 0; p < 8; p++ {
				o := 144 + 96*(8*j+p) + 4*r
				for s := 0; s < 2; s++ {
					mov4(g[o+32*s:], blk[64*j+32*s+4*p:])
				}
				mov4(g[o+64:], blk[128+32*j+4*p:])
			}
		}
	})
}

// prepQ6_K writes, per q8_K activation block, its scale (float32) at 0 and
// at 4+4g 32 times the sum of 16-value group g (int32): the bsums.
func prepQ6_K(aux, act []byte, nb int) {
	_, _ = aux[nb*q6KAuxBytes-1], act[nb*q8_KBytes-1]
	for b := 0; b < nb; b++ {
		y := act[b*q8_KBytes : (b+1)*q8_KBytes]
		x := aux[q6KAuxBytes*b : q6KAuxBytes*(b+1)]
		copy(x[0:4], y[0:4])
		for g := 0; g < 16; g++ {
			binary.LittleEndian.PutUint32(x[4+4*g:], uint32(32*int32(int16(le16(y[260+2*g:])))))
		}
	}
}

// q6KAuxBytes is prepQ6_K's size per block.
const q6KAuxBytes = 68

// q6KValue returns 6-bit value i (0-3) of lane r of vector (j, t, p) of a
// Q6_K group block gb.
func q6KValue(gb []byte, j, t, p, r, i int) int32 {
	s := t % 2
	ql := gb[144+96*(8*j+p)+32*s+4*r+i]
	qh := gb[144+96*(8*j+p)+64+4*r+i]
	if t >= 2 {
		ql >>= 4
	}
	return int32(ql&15) | int32(qh>>(2*t)&3)<<4
}

// gemvQ6_KGo is the Q6_K group kernel in Go.
func gemvQ6_KGo(g, act, aux []byte, nb int, out *[packRows]float32) {
	var acc [packRows]float32
	_, _, _ = g[nb*q6KGroupBytes-1], act[nb*q8_KBytes-1], aux[nb*q6KAuxBytes-1]
	for b := 0; b < nb; b++ {
		gb := g[b*q6KGroupBytes : (b+1)*q6KGroupBytes]
		a := i8s(act[b*q8_KBytes+4 : b*q8_KBytes+260])
		x := aux[q6KAuxBytes*b : q6KAuxBytes*(b+1)]
		da := math.Float32frombits(le32(x))
		for r := range acc {
			var isum int32
			for j := 0; j < 2; j++ {
				for t := 0; t < 4; t++ {
					for h := 0; h < 2; h++ {
						grp := 8*j + 2*t + h
						dot := -int32(le32(x[4+4*grp:]))
						for p := 4 * h; p < 4*h+4; p++ {
							for i := 0; i < 4; i++ {
								dot += q6KValue(gb, j, t, p, r, i) * int32(a[128*j+32*t+4*p+i])
							}
						}
						isum += int32(int8(gb[16+8*grp+r])) * dot
					}
				}
			}
			acc[r] += float32(float32(isum) * float32(f16tab[le16(gb[2*r:])]*da))
		}
	}
	*out = acc
}

// packed is a matrix's rows [0, 8*groups) in its type's group layout (in
// pairs of groups in the pair layout where pairs is set, an odd last
// group alone; group g starts at g*groupBytes either way).
type packed struct {
	data   []byte
	groups int
	// groupBytes is the size of one group (packRows rows).
	groupBytes int
	pairs      bool
	// k is the kernel that packed the matrix.
	k *packKernel
}

// Pack puts the whole groups of m's rows in the group layout of its
// kernel's pack (a Q1_0 matrix, where the set has a lookup kernel, in the
// lookup layout of q1lut.go): in place when inPlace (the layout must be the rows' size;
// one group at a time through a group-sized scratch), else into a new
// buffer. It returns the bytes of the row layout a copy replaced (nil in
// place), for the caller to release.
func (m *Matrix) Pack(inPlace bool) []byte {
	if m.q1lutPackable() {
		return m.packQ1LUT(inPlace)
	}
	k := m.k.pack
	nb := m.Cols / m.Type.BlockSize()
	groups := m.Rows / packRows
	rb, gb := packRows*m.RowBytes, nb*k.groupBytes
	rows := m.data[:groups*rb]
	// each step packs n groups from group g: a pair, or one
	step := func(g int) (int, func(dst, src []byte, rowBytes, nb int)) {
		if k.repack2 != nil && g+2 <= groups {
			return 2, k.repack2
		}
		return 1, k.repack
	}
	pk := &packed{groups: groups, groupBytes: gb, pairs: k.repack2 != nil, k: k}
	m.pk = pk
	if inPlace {
		tmp := make([]byte, 2*rb)
		for g := 0; g < groups; {
			n, repack := step(g)
			r := rows[g*rb : (g+n)*rb]
			copy(tmp, r)
			repack(r, tmp[:n*rb], m.RowBytes, nb)
			g += n
		}
		pk.data = rows
		return nil
	}
	pk.data = osmem.AlignedBytes(groups * gb)
	for g := 0; g < groups; {
		n, repack := step(g)
		repack(pk.data[g*gb:(g+n)*gb], rows[g*rb:(g+n)*rb], m.RowBytes, nb)
		g += n
	}
	return rows
}

// packKernelOf returns the kernel that runs m's groups: the installed set's,
// or, when the set was changed after m was packed, the Go one (the 8-row
// layout) or the one that packed it (the pair layout, which only its
// kernels read; every group kernel gives the same bits).
func (m *Matrix) packKernelOf() *packKernel {
	if k := m.k.pack; k != nil && (k.repack2 != nil) == m.pk.pairs {
		return k
	}
	if m.pk.pairs {
		return m.pk.k
	}
	return packKernels[m.Type]
}

// Packable reports whether m can be packed: its bytes are there, not
// packed yet, it has a whole group of rows and the installed kernel set
// has a group kernel for its type (or a Q1_0 lookup kernel).
func (m *Matrix) Packable() bool {
	return m.pk == nil && m.k.pack != nil && m.Rows >= packRows && m.data != nil || m.q1lutPackable()
}

// PackFitsRows reports whether m's group layout takes the bytes of its
// rows, so that Pack can work in place.
func (m *Matrix) PackFitsRows() bool {
	if m.q1lutPackable() {
		return true // the lookup layout is the rows' size
	}
	return m.k.pack.groupBytes == packRows*m.RowBytes/(m.Cols/m.Type.BlockSize())
}

// SlotPackBytes is the size of m's rows in the group layout of the
// installed set when m is packed as a paged expert's slot is (PackSlot),
// or 0 when it is not: no group kernel for its type (Q1_0's lookup
// layout included) or rows that are not whole groups, whose tail rows
// would have to stay at their place in the row layout.
func (m *Matrix) SlotPackBytes() int {
	if m.k.pack == nil || m.Rows%packRows != 0 {
		return 0
	}
	return m.Rows / packRows * (m.Cols / m.Type.BlockSize()) * m.k.pack.groupBytes
}

// PackSlot puts m's rows, all in whole groups (SlotPackBytes > 0), in the
// group layout in place, in bytes that have room for it (len(Data()) at
// least SlotPackBytes: Q4_K's layout is larger than its rows). The groups
// are packed last first, each through a scratch copy of its rows, so that
// a larger group never overwrites rows not packed yet. It is for a paged
// expert's slot, packed again after every read into it; scratch (2 groups
// of rows) is reused, and returned, grown if it was short.
func (m *Matrix) PackSlot(scratch []byte) []byte {
	k := m.k.pack
	nb := m.Cols / m.Type.BlockSize()
	groups := m.Rows / packRows
	rb, gb := packRows*m.RowBytes, nb*k.groupBytes
	if len(scratch) < 2*rb {
		scratch = make([]byte, 2*rb)
	}
	// the steps of Pack, a pair or one group from g, last first
	g := groups
	if k.repack2 != nil && groups%2 == 1 {
		g--
		copy(scratch, m.data[g*rb:(g+1)*rb])
		k.repack(m.data[g*gb:(g+1)*gb], scratch[:rb], m.RowBytes, nb)
	}
	for g > 0 {
		n, repack := 1, k.repack
		if k.repack2 != nil {
			n, repack = 2, k.repack2
		}
		g -= n
		copy(scratch, m.data[g*rb:(g+n)*rb])
		repack(m.data[g*gb:(g+n)*gb], scratch[:n*rb], m.RowBytes, nb)
	}
	m.pk = &packed{data: m.data[:groups*gb], groups: groups, groupBytes: gb, pairs: k.repack2 != nil, k: k}
	return scratch
}

// PackedData returns the bytes of m's packed groups (nil: not packed).
func (m *Matrix) PackedData() []byte {
	if m.q1 != nil {
		return m.q1
	}
	if m.pk == nil {
		return nil
	}
	return m.pk.data
}
