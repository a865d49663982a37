//go:build (arm64 || arm) && !purego

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// armCase is one ARM kernel under test: its weight type, the block sizes
// it walks, how many sums a sums kernel writes per weight block (it also
// sizes the rows TestArmDots tries), where the weight block's f16 scales
// sit, and, for the types with a sums kernel (armv7's), the plain-Go
// integer sums it must equal.
type armCase struct {
	typ            gguf.Type
	sums           func(*armSet) sumsFunc // nil: whole-dot kernels only
	wBytes, aBytes int                    // per weight block: weight bytes, activation bytes
	perBlock       int                    // int32 sums per weight block
	scales         []int
	want           func(w, a []byte, nb int) []int32
}

var armCases = []armCase{
	{gguf.TypeQ8_0, func(s *armSet) sumsFunc { return s.q8_0 }, q8_0Bytes, q8_0Bytes, 1, []int{0},
		func(w, a []byte, nb int) (out []int32) {
			for i := 0; i < nb; i++ {
				s := int32(0)
				for j := 0; j < 32; j++ {
					s += int32(int8(w[i*q8_0Bytes+2+j])) * int32(int8(a[i*q8_0Bytes+2+j]))
				}
				out = append(out, s)
			}
			return
		}},
	{gguf.TypeQ4_K, func(s *armSet) sumsFunc { return s.q4_K }, q4_KBytes, q8_KBytes, 8, []int{0, 2},
		func(w, a []byte, nb int) (out []int32) {
			for i := 0; i < nb; i++ {
				q, y := w[i*q4_KBytes+16:], a[i*q8_KBytes+4:]
				for g := 0; g < 8; g++ {
					s := int32(0)
					for l := 0; l < 32; l++ {
						v := q[32*(g/2)+l]
						if g%2 == 0 {
							v &= 0xF
						} else {
							v >>= 4
						}
						s += int32(v) * int32(int8(y[32*g+l]))
					}
					out = append(out, s)
				}
			}
			return
		}},
	{gguf.TypeQ6_K, nil, q6_KBytes, q8_KBytes, 16, []int{208}, nil},
	{gguf.TypeQ2_K, nil, q2_KBytes, q8_KBytes, 16, []int{80, 82}, nil},
	{gguf.TypeQ1_0, nil, q1_0Bytes, 4 * q8_0Bytes, 4, []int{0}, nil},
	{gguf.TypeQ2_0, nil, q2_0Bytes, 2 * q8_0Bytes, 2, []int{0}, nil},
}

// TestArmSums checks every assembly sums kernel, each variant, against
// plain Go integer arithmetic, bit for bit, on random bytes (every int8
// value, -128 included) for every block count from 1 to past two chunks
// (the four-block loops and their tails).
func TestArmSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	checked := 0
	for _, s := range armVariants(t) {
		for _, c := range armCases {
			if c.sums == nil || c.sums(s) == nil {
				continue // no sums kernel for this type in this build
			}
			checked++
			for nb := 1; nb <= 2*sumsChunk/c.perBlock+5; nb++ {
				w, a := randBytes(rng, nb*c.wBytes), randBytes(rng, nb*c.aBytes)
				got := make([]int32, nb*c.perBlock)
				c.sums(s)(&w[0], &a[0], nb, &got[0])
				want := c.want(w, a, nb)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s %s nb=%d: sum %d = %d, want %d", s.name, c.typ, nb, i, got[i], want[i])
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Skip("no sums kernels in this build: its kernels are whole dots, which TestArmDots checks")
	}
}

// TestArmDots checks every ARM dot (sums kernels scaled in Go and the
// whole-dot kernels), each variant installed through
// SelectKernels, against the portable Go kernel bit for bit (same integer
// sums, same unfused float order) on random rows of every length from one
// block to past two chunks, activations quantized from random floats.
func TestArmDots(t *testing.T) {
	defer SelectKernels("")
	rng := rand.New(rand.NewPCG(23, 24))
	for _, s := range armVariants(t) {
		if err := SelectKernels(s.name); err != nil {
			t.Fatal(err)
		}
		for _, c := range armCases {
			if (c.sums == nil || c.sums(s) == nil) && wholeDot(s, c.typ) == nil {
				continue // no sums or whole-dot assembly for this type
			}
			k := kernels[c.typ]
			port := portableKernels[c.typ].dot
			block := c.typ.BlockSize()
			for nb := 1; nb <= 2*sumsChunk/c.perBlock+5; nb++ {
				n := nb * block
				w := randBytes(rng, nb*c.wBytes)
				for b := 0; b < nb; b++ {
					for _, off := range c.scales {
						// finite halves of either sign, 2^-11 to 2^-3
						h := uint16(0x1000+rng.IntN(0x2000)) | uint16(rng.IntN(2))<<15
						w[b*c.wBytes+off], w[b*c.wBytes+off+1] = byte(h), byte(h>>8)
					}
				}
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				a := make([]byte, ActRowBytes(k.act, n))
				if err := quantizeAct(k.act, a, x); err != nil {
					t.Fatal(err)
				}
				if got, want := k.dot(n, w, a), port(n, w, a); got != want {
					t.Fatalf("%s %s n=%d: %v, portable %v", s.name, c.typ, n, got, want)
				}
			}
		}
	}
}

// wholeDot returns set s's whole-dot kernel for type t, nil if it has none.
func wholeDot(s *armSet, t gguf.Type) blocksFunc {
	switch t {
	case gguf.TypeQ8_0:
		return s.q8_0Dot
	case gguf.TypeQ4_K:
		return s.q4_KDot
	case gguf.TypeQ6_K:
		return s.q6_KDot
	case gguf.TypeQ2_K:
		return s.q2_KDot
	case gguf.TypeQ1_0:
		return s.q1_0Dot
	case gguf.TypeQ2_0:
		return s.q2_0Dot
	}
	return nil
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
