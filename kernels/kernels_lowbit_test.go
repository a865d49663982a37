package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// fma32 is a*b+c rounded once to float32, as VFMADD231PS computes it
// (exact in a 400-bit float first: float32 products and sums fit).
func fma32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// hsum8 is ggml's hsum_float_8: halves added, then (0+2)+(1+3).
func hsum8(v [8]float32) float32 {
	r0, r1, r2, r3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (r0 + r2) + (r1 + r3)
}

// lowBitValue returns weight j of a Q1_0 or Q2_0 block x as an integer
// (the multiple of its scale).
func lowBitValue(t gguf.Type, x []byte, j int) int32 {
	if t == gguf.TypeQ1_0 {
		return 2*int32(x[2+j/8]>>(j%8)&1) - 1
	}
	return int32(x[2+j/4]>>(2*(j%4))&3) - 1
}

// haswellLowBit is ggml-cpu's AVX2 (haswell) q1_0 / q2_0 x q8_0 dot,
// written lane by lane from its float order: eight int32 lanes of four
// products per q8_0 block; Q1_0 scales a block's four q8 lanes by their
// scales (multiply, then FMAs) and FMAs that times the weight scale into
// one accumulator; Q2_0 FMAs each q8 block's lanes with d_w*d_a into one
// of two accumulators (even and odd weight blocks), added at the end.
func haswellLowBit(t gguf.Type, n int, w, a []byte) float32 {
	var acc [2][8]float32
	per := t.BlockSize() / 32
	for i := 0; i < n/t.BlockSize(); i++ {
		x := w[i*18:]
		d0 := f16(x)
		var blk [8]float32
		for k := 0; k < per; k++ {
			y := a[(per*i+k)*q8_0Bytes:]
			d1 := f16(y)
			for l := 0; l < 8; l++ {
				s := int32(0)
				for j := 4 * l; j < 4*l+4; j++ {
					s += lowBitValue(t, x, 32*k+j) * int32(int8(y[2+j]))
				}
				switch {
				case t == gguf.TypeQ2_0:
					acc[i%2][l] = fma32(d0*d1, float32(s), acc[i%2][l])
				case k == 0:
					blk[l] = d1 * float32(s)
				default:
					blk[l] = fma32(d1, float32(s), blk[l])
				}
			}
		}
		if t == gguf.TypeQ1_0 {
			for l := range blk {
				acc[0][l] = fma32(d0, blk[l], acc[0][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = acc[0][l] + acc[1][l]
	}
	return hsum8(v)
}

// lowBitRows returns weight rows of type t quantized from Gaussian values
// and q8_0 activation rows, n elements each; the last activation row has
// constant blocks, whose values all quantize to +-127 (the largest
// integer sums).
func lowBitRows(t testing.TB, rng *rand.Rand, typ gguf.Type, n int) (ws, as [][]byte) {
	f := make([]float32, n)
	for r := 0; r < 4; r++ {
		for i := range f {
			f[i] = float32(rng.NormFloat64() * math.Pow(4, float64(r-2)))
		}
		w := make([]byte, ActRowBytes(typ, n))
		a := make([]byte, ActRowBytes(gguf.TypeQ8_0, n))
		if err := quantizeAct(typ, w, f); err != nil {
			t.Fatal(err)
		}
		if r == 3 {
			for i := range f {
				f[i] = float32(1 - 2*float64((i/32)%2))
			}
		}
		if err := quantizeAct(gguf.TypeQ8_0, a, f); err != nil {
			t.Fatal(err)
		}
		ws, as = append(ws, w), append(as, a)
	}
	return
}

// TestLowBitKernels checks the Q1_0 and Q2_0 kernels on random rows of
// several lengths (one to 32 blocks, odd and even counts): the portable
// kernel equals the reference (ggml's generic C) bit for bit, and the
// assembly kernel, where the CPU runs it, equals ggml's AVX2 kernel's
// float order (haswellLowBit) bit for bit. The integer sums of all three
// are exact, so any difference would be a wrong bit, not rounding.
func TestLowBitKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		typ     gguf.Type
		goDot   dotFunc
		lengths []int
	}{
		{gguf.TypeQ1_0, dotQ1_0Go, []int{128, 256, 384, 640, 1024, 4096}},
		{gguf.TypeQ2_0, dotQ2_0Go, []int{64, 128, 192, 320, 1024, 2048}},
	} {
		k := kernels[c.typ]
		for _, n := range c.lengths {
			ws, as := lowBitRows(t, rng, c.typ, n)
			for r := range ws {
				for ar := range as {
					name := fmt.Sprintf("%s n=%d w%d a%d", c.typ, n, r, ar)
					ref := refDotQ1_0(n, ws[r], as[ar])
					if c.typ == gguf.TypeQ2_0 {
						ref = refDotQ2_0(n, ws[r], as[ar])
					}
					if got := c.goDot(n, ws[r], as[ar]); got != ref {
						t.Errorf("%s: portable %v, reference %v", name, got, ref)
					}
					if !useAVX2 {
						continue
					}
					want := haswellLowBit(c.typ, n, ws[r], as[ar])
					if got := k.dot(n, ws[r], as[ar]); got != want {
						t.Errorf("%s: assembly %v, ggml AVX2 order %v (reference %v)", name, got, want, ref)
					}
				}
			}
		}
	}
}

// BenchmarkLowBitDot measures one row product of 4096 elements for Q1_0
// and Q2_0: the integer kernels (portable Go and, on AVX2 machines,
// assembly) against the generic path they replace (dequantize the row,
// then an F32 dot with the q8_0-rounded activations in float32) and the
// reference kernel.
func BenchmarkLowBitDot(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	for _, c := range []struct {
		typ   gguf.Type
		goDot dotFunc
		ref   dotFunc
	}{{gguf.TypeQ1_0, dotQ1_0Go, refDotQ1_0}, {gguf.TypeQ2_0, dotQ2_0Go, refDotQ2_0}} {
		w := make([]byte, ActRowBytes(c.typ, n))
		a := make([]byte, ActRowBytes(gguf.TypeQ8_0, n))
		if err := quantizeAct(c.typ, w, f); err != nil {
			b.Fatal(err)
		}
		if err := quantizeAct(gguf.TypeQ8_0, a, f); err != nil {
			b.Fatal(err)
		}
		af := make([]float32, n)
		if err := DequantizeRow(gguf.TypeQ8_0, af, a); err != nil {
			b.Fatal(err)
		}
		scratch := make([]float32, n)
		kinds := []struct {
			name string
			dot  func() float32
		}{
			{"generic", func() float32 {
				_ = DequantizeRow(c.typ, scratch, w)
				return dotF32(n, BytesOf(scratch), BytesOf(af))
			}},
			{"ref", func() float32 { return c.ref(n, w, a) }},
			{"go", func() float32 { return c.goDot(n, w, a) }},
		}
		if useAVX2 {
			kinds = append(kinds, struct {
				name string
				dot  func() float32
			}{"asm", func() float32 { return kernels[c.typ].dot(n, w, a) }})
		}
		for _, k := range kinds {
			b.Run(c.typ.String()+"/"+k.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				var s float32
				for b.Loop() {
					s += k.dot()
				}
				_ = s
			})
		}
	}
}
