package quant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
)

// splitMix64 is the generator of refdata/quant/README.txt.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// refInput regenerates refdata/quant/input.f32: 8 rows of 256 values with
// the row recipes of the README (uniform, small, wide range, zero,
// non-negative, sparse spikes, ternary, outliers).
func refInput() []float32 {
	s := splitMix64(42)
	x := make([]float32, 8*256)
	for r := 0; r < 8; r++ {
		for c := 0; c < 256; c++ {
			z := s.next()
			u24 := z >> 40
			pm1 := float32(int32(u24)-8388608) * 0x1p-23
			u01 := float32(u24) * 0x1p-24
			e := int(z&0xff)%17 - 8
			var v float32
			switch r {
			case 0:
				v = pm1
			case 1:
				v = pm1 * 0x1p-6
			case 2:
				v = pm1 * float32(math.Ldexp(1, e))
			case 3:
				v = 0
			case 4:
				v = u01
			case 5:
				if c%16 == 0 {
					v = pm1 * 8
				}
			case 6:
				v = float32(int(u24%3)-1) * 0.5
			case 7:
				if c%32 == 7 {
					v = pm1 * 1024
				} else {
					v = pm1
				}
			}
			x[r*256+c] = v
		}
	}
	return x
}

// refImatrix regenerates the importance vector of refdata/quant-imatrix.
func refImatrix(n int) []float32 {
	s := splitMix64(99)
	w := make([]float32, n)
	for j := range w {
		u01 := float32(s.next()>>40) * 0x1p-24
		w[j] = float32(float32(u01*u01) + float32(0.1))
	}
	return w
}

func readRef(t *testing.T, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func floatsLE(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

func bytesLE(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// diffBytes describes the first difference between got and want in terms of
// blocks of blockBytes, or returns "" when they are identical.
func diffBytes(got, want []byte, blockBytes int) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	n := 0
	first := -1
	for i := range got {
		if got[i] != want[i] {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if first < 0 {
		return ""
	}
	blk := first / blockBytes
	lo := blk * blockBytes
	return fmt.Sprintf("%d bytes differ; first at byte %d (block %d, offset %d)\n got  %x\n want %x",
		n, first, blk, first-lo, got[lo:lo+blockBytes], want[lo:lo+blockBytes])
}

func diffFloats(got, want []float32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Sprintf("first difference at element %d (row %d): got %v (%08x), want %v (%08x)",
				i, i/256, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return ""
}

func TestRefInputRegenerated(t *testing.T) {
	want := readRef(t, "refdata", "quant", "input.f32")
	if got := bytesLE(refInput()); !bytes.Equal(got, want) {
		t.Fatalf("regenerated input.f32 differs: %s", diffBytes(got, want, 1024))
	}
	wantW := readRef(t, "refdata", "quant-imatrix", "seed42", "imatrix.f32")
	if got := bytesLE(refImatrix(256)); !bytes.Equal(got, wantW) {
		t.Fatalf("regenerated imatrix.f32 differs: %s", diffBytes(got, wantW, 64))
	}
	in2 := readRef(t, "refdata", "quant-imatrix", "seed42", "input.f32")
	if !bytes.Equal(in2, want) {
		t.Fatal("quant-imatrix/seed42/input.f32 is not quant/input.f32")
	}
}

// refCase is one type of refdata/quant: which files exist for it.
type refCase struct {
	name  string
	typ   gguf.Type
	ref   bool // T.ref.q exists (and equals ggml_quantize_chunk unless chunk is set)
	chunk bool // T.chunk.q exists
	ones  bool // chunk made with imatrix = 256 x 1.0
	deq   bool // .deq.f32 files exist
}

var refCases = []refCase{
	{"f16", gguf.TypeF16, true, false, false, true},
	{"bf16", gguf.TypeBF16, true, false, false, true},
	{"q4_0", gguf.TypeQ4_0, true, false, false, true},
	{"q4_1", gguf.TypeQ4_1, true, false, false, true},
	{"q5_0", gguf.TypeQ5_0, true, false, false, true},
	{"q5_1", gguf.TypeQ5_1, true, false, false, true},
	{"q8_0", gguf.TypeQ8_0, true, false, false, true},
	{"q8_1", gguf.TypeQ8_1, true, false, false, false},
	{"q2_K", gguf.TypeQ2_K, true, false, false, true},
	{"q3_K", gguf.TypeQ3_K, true, false, false, true},
	{"q4_K", gguf.TypeQ4_K, true, false, false, true},
	{"q5_K", gguf.TypeQ5_K, true, false, false, true},
	{"q6_K", gguf.TypeQ6_K, true, false, false, true},
	{"q8_K", gguf.TypeQ8_K, true, false, false, true},
	{"iq2_xxs", gguf.TypeIQ2_XXS, false, true, true, true},
	{"iq2_xs", gguf.TypeIQ2_XS, false, true, true, true},
	{"iq3_xxs", gguf.TypeIQ3_XXS, true, false, false, true},
	{"iq1_s", gguf.TypeIQ1_S, false, true, true, true},
	{"iq4_nl", gguf.TypeIQ4_NL, true, true, false, true},
	{"iq3_s", gguf.TypeIQ3_S, true, false, false, true},
	{"iq2_s", gguf.TypeIQ2_S, true, false, false, true},
	{"iq4_xs", gguf.TypeIQ4_XS, true, false, false, true},
	{"iq1_m", gguf.TypeIQ1_M, false, true, false, true},
	{"tq1_0", gguf.TypeTQ1_0, true, false, false, true},
	{"tq2_0", gguf.TypeTQ2_0, true, false, false, true},
	{"mxfp4", gguf.TypeMXFP4, true, false, false, true},
	{"nvfp4", gguf.TypeNVFP4, true, false, false, true},
	{"q1_0", gguf.TypeQ1_0, true, false, false, true},
	{"q2_0", gguf.TypeQ2_0, true, false, false, true},
}

func rowBytes(t gguf.Type, n int) int { return n / t.BlockSize() * t.TypeSize() }

// TestRefVectors checks every quantizer and dequantizer against ggml's
// outputs in refdata/quant: reference quantizer per row of 256, the
// ggml_quantize_chunk entry point over the 8 rows, and to_float.
func TestRefVectors(t *testing.T) {
	in := refInput()
	ones := make([]float32, 256)
	for i := range ones {
		ones[i] = 1
	}
	for _, tc := range refCases {
		t.Run(tc.name, func(t *testing.T) {
			rb := rowBytes(tc.typ, 256)
			if tc.ref {
				want := readRef(t, "refdata", "quant", tc.name+".ref.q")
				// ggml made the file with one call per row. All rows go into
				// one call here, which is equivalent for every type (blocks
				// are independent) and reproduces one accident: ggml's IQ4_NL
				// reference leaves an all-zero block's levels as the previous
				// block's, which for the zero row 3 were still on the stack
				// from the call for row 2.
				got := make([]byte, 8*rb)
				if err := QuantizeRef(tc.typ, got, in); err != nil {
					t.Fatal(err)
				}
				if d := diffBytes(got, want, tc.typ.TypeSize()); d != "" {
					t.Errorf("reference quantizer: %s", d)
				}
				if !tc.chunk {
					got := make([]byte, 8*rb)
					if err := Quantize(tc.typ, got, in, nil); err != nil {
						t.Fatal(err)
					}
					if d := diffBytes(got, want, tc.typ.TypeSize()); d != "" {
						t.Errorf("Quantize (chunk entry point): %s", d)
					}
				}
				if tc.deq {
					checkDeq(t, tc.typ, want, readRef(t, "refdata", "quant", tc.name+".ref.deq.f32"))
				}
			}
			if tc.chunk {
				want := readRef(t, "refdata", "quant", tc.name+".chunk.q")
				var w []float32
				if tc.ones {
					w = ones
				}
				got := make([]byte, 8*rb)
				if err := Quantize(tc.typ, got, in, w); err != nil {
					t.Fatal(err)
				}
				if d := diffBytes(got, want, tc.typ.TypeSize()); d != "" {
					t.Errorf("Quantize: %s", d)
				}
				checkDeq(t, tc.typ, want, readRef(t, "refdata", "quant", tc.name+".chunk.deq.f32"))
			}
		})
	}
}

func checkDeq(t *testing.T, typ gguf.Type, q, wantF []byte) {
	t.Helper()
	got := make([]float32, len(wantF)/4)
	if err := Dequantize(typ, got, q); err != nil {
		t.Fatal(err)
	}
	if d := diffFloats(got, floatsLE(wantF)); d != "" {
		t.Errorf("Dequantize: %s", d)
	}
}

// TestActivationVectors checks how ggml-cpu quantizes activations (row 0).
func TestActivationVectors(t *testing.T) {
	in := refInput()[:256]
	for _, c := range []struct {
		name string
		typ  gguf.Type
	}{{"q8_0", gguf.TypeQ8_0}, {"q8_1", gguf.TypeQ8_1}, {"q8_K", gguf.TypeQ8_K}, {"f16", gguf.TypeF16}, {"bf16", gguf.TypeBF16}} {
		want := readRef(t, "refdata", "quant", "act."+c.name+".cpu.q")
		got := make([]byte, rowBytes(c.typ, 256))
		if err := QuantizeRef(c.typ, got, in); err != nil {
			t.Fatal(err)
		}
		if d := diffBytes(got, want, c.typ.TypeSize()); d != "" {
			t.Errorf("%s: %s", c.name, d)
		}
	}
}

// TestImatrixVectors checks weighted quantization against
// refdata/quant-imatrix/seed42 for every type there.
func TestImatrixVectors(t *testing.T) {
	in := refInput()
	w := refImatrix(256)
	for _, tc := range refCases {
		if tc.typ == gguf.TypeF16 || tc.typ == gguf.TypeBF16 || tc.typ == gguf.TypeQ8_1 || tc.typ == gguf.TypeQ8_K {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			want := readRef(t, "refdata", "quant-imatrix", "seed42", tc.name+".imat.q")
			got := make([]byte, 8*rowBytes(tc.typ, 256))
			if err := Quantize(tc.typ, got, in, w); err != nil {
				t.Fatal(err)
			}
			if d := diffBytes(got, want, tc.typ.TypeSize()); d != "" {
				t.Errorf("Quantize with imatrix: %s", d)
			}
			checkDeq(t, tc.typ, want, readRef(t, "refdata", "quant-imatrix", "seed42", tc.name+".imat.deq.f32"))
		})
	}
}
