package kernels

import (
	"encoding/binary"
	"math/bits"
)

// Portable kernels of the 1- and 2-bit types Q1_0 and Q2_0 (the Bonsai
// models'). Their per-q8-block integer sums are computed eight values at
// a time in 64-bit words (SWAR): the activation bytes y are biased to
// y+128 (unsigned), the weight bits turned into byte masks by table, and
// masked bytes summed in 16-bit lanes; the bias is taken out with the
// popcount of the weight bits. The float arithmetic is ggml's generic
// kernel's, step for step, so these equal refDotQ1_0 / refDotQ2_0 bit for
// bit.

const (
	bias8 = 0x8080808080808080 // xor: int8 y becomes uint8 y+128
	lo16  = 0x00FF00FF00FF00FF // the even bytes of a word
	sum16 = 0x0001000100010001 // multiplier adding four 16-bit lanes into the top one
)

// q1Masks[b] has byte k set to 0xFF where bit k of b is set.
var q1Masks = func() (t [256]uint64) {
	for b := range t {
		for k := 0; k < 8; k++ {
			if b>>k&1 != 0 {
				t[b] |= 0xFF << (8 * k)
			}
		}
	}
	return
}()

// q2Masks[b] has, for the four 2-bit fields k of b, byte k set to 0xFF
// where the field's low bit is set and byte 4+k where its high bit is.
var q2Masks = func() (t [256]uint64) {
	for b := range t {
		for k := 0; k < 4; k++ {
			if b>>(2*k)&1 != 0 {
				t[b] |= 0xFF << (8 * k)
			}
			if b>>(2*k+1)&1 != 0 {
				t[b] |= 0xFF << (8 * (4 + k))
			}
		}
	}
	return
}()

// pairs16 adds the odd bytes of u to the even ones: four 16-bit lanes.
func pairs16(u uint64) uint64 { return u&lo16 + (u>>8)&lo16 }

// lanes16 adds the four 16-bit lanes of u (each sum below 2^16).
func lanes16(u uint64) int32 { return int32((u * sum16) >> 48) }

// q1Sum is one q8_0 block of a Q1_0 dot: the sum of the 32 activations
// qs with the sign bits of m (4 bytes): +y where set, -y where clear.
// With u = y+128, S the sum of u where set and A of all u, that is
// 2S - A - 128(2*set - 32).
func q1Sum(m []byte, qs []byte) int32 {
	m, qs = m[:4:4], qs[:32:32]
	u0 := binary.LittleEndian.Uint64(qs[0:]) ^ bias8
	u1 := binary.LittleEndian.Uint64(qs[8:]) ^ bias8
	u2 := binary.LittleEndian.Uint64(qs[16:]) ^ bias8
	u3 := binary.LittleEndian.Uint64(qs[24:]) ^ bias8
	s := pairs16(u0&q1Masks[m[0]]) + pairs16(u1&q1Masks[m[1]]) + pairs16(u2&q1Masks[m[2]]) + pairs16(u3&q1Masks[m[3]])
	all := pairs16(u0) + pairs16(u1) + pairs16(u2) + pairs16(u3)
	set := int32(bits.OnesCount32(binary.LittleEndian.Uint32(m)))
	return 2*lanes16(s) - lanes16(all) - 128*(2*set-32)
}

// q2Word is eight values of a Q2_0 dot: u the biased activations, b0 and
// b1 the two weight bytes; it returns the lanes of u where the low bits
// are set and those where the high bits are.
func q2Word(u uint64, b0, b1 byte) (lo, hi uint64) {
	t0, t1 := q2Masks[b0], q2Masks[b1]
	mlo := t0&0xFFFFFFFF | t1<<32
	mhi := t0>>32 | t1&^0xFFFFFFFF
	return pairs16(u & mlo), pairs16(u & mhi)
}

// q2Sum is one q8_0 block of a Q2_0 dot: sum of (q-1)*y over 32 values, q
// the 2-bit fields of the 8 bytes qw. With u = y+128:
// sum q*y = sum q*u - 128 sum q, and sum y = sum u - 4096.
func q2Sum(qw []byte, qs []byte) int32 {
	qw, qs = qw[:8:8], qs[:32:32]
	u0 := binary.LittleEndian.Uint64(qs[0:]) ^ bias8
	u1 := binary.LittleEndian.Uint64(qs[8:]) ^ bias8
	u2 := binary.LittleEndian.Uint64(qs[16:]) ^ bias8
	u3 := binary.LittleEndian.Uint64(qs[24:]) ^ bias8
	l0, h0 := q2Word(u0, qw[0], qw[1])
	l1, h1 := q2Word(u1, qw[2], qw[3])
	l2, h2 := q2Word(u2, qw[4], qw[5])
	l3, h3 := q2Word(u3, qw[6], qw[7])
	all := pairs16(u0) + pairs16(u1) + pairs16(u2) + pairs16(u3)
	x := binary.LittleEndian.Uint64(qw)
	sq := int32(bits.OnesCount64(x&0x5555555555555555) + 2*bits.OnesCount64(x&0xAAAAAAAAAAAAAAAA))
	qu := lanes16(l0+l1+l2+l3) + 2*lanes16(h0+h1+h2+h3)
	return qu - 128*sq - (lanes16(all) - 4096)
}

func dotQ1_0Go(n int, w, a []byte) float32 {
	nb := n / 128
	w, a = w[:nb*q1_0Bytes], a[:4*nb*q8_0Bytes]
	var sumf float32
	for i := 0; i < nb; i++ {
		x := w[i*q1_0Bytes : (i+1)*q1_0Bytes]
		y := a[4*i*q8_0Bytes : 4*(i+1)*q8_0Bytes]
		var sums [4]int32
		for k := range sums {
			sums[k] = q1Sum(x[2+4*k:], y[k*q8_0Bytes+2:])
		}
		sumf = lowBitAdd(sumf, sums[:], x, y)
	}
	return sumf
}

// lowBitAdd adds one Q1_0 or Q2_0 weight block x to sumf from the integer
// sums of its q8_0 activation blocks y: ggml's generic order, each sum
// times its block's scale added in float32, then that times the weight
// scale, every product rounded (no FMA on any architecture).
func lowBitAdd(sumf float32, sums []int32, x, y []byte) float32 {
	var sumi float32
	for k, s := range sums {
		sumi += float32(f16tab[le16(y[k*q8_0Bytes:])] * float32(s))
	}
	return sumf + float32(f16tab[le16(x)]*sumi)
}

func dotQ2_0Go(n int, w, a []byte) float32 {
	nb := n / 64
	w, a = w[:nb*q2_0Bytes], a[:2*nb*q8_0Bytes]
	var sumf float32
	for i := 0; i < nb; i++ {
		x := w[i*q2_0Bytes : (i+1)*q2_0Bytes]
		y := a[2*i*q8_0Bytes : (2*i+2)*q8_0Bytes]
		sums := [2]int32{q2Sum(x[2:], y[2:]), q2Sum(x[10:], y[q8_0Bytes+2:])}
		sumf = lowBitAdd(sumf, sums[:], x, y)
	}
	return sumf
}
