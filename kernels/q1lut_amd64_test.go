//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkQ1LUT also runs the AVX2 lookup kernel under the avx2 set
// ("avx2lut/avx2") on CPUs with AVX-512, whose installed one is the
// AVX-512 kernel.
func init() { q1lutForced["avx2lut/avx2"] = q1lutAVX2 }

// TestQ1LUTAVX2BitExact checks the AVX2 lookup kernel (installed on CPUs
// without AVX-512, forced here whatever the CPU) row by row against the
// avx2 set's Q1_0 row kernel (dotQ1_0AVX2), whose float steps it takes, on
// random and extreme rows of 1 to 48 blocks, bit for bit.
func TestQ1LUTAVX2BitExact(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	defer SelectKernels("")
	if err := SelectKernels("avx2"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{128, 256, 640, 2048, 6144} {
		const rows = 48
		w, acts := q1lutTestMatrix(t, rng, rows, n)
		rb := n / 128 * q1_0Bytes
		for ai, a := range acts {
			got := q1lutMatrixTest(q1lutAVX2, w, a, rows, n)
			for r := range got {
				want := dotQ1_0Asm(n, w[r*rb:(r+1)*rb], a)
				if math.Float32bits(got[r]) != math.Float32bits(want) {
					t.Fatalf("n %d act %d row %d: %.9g, row kernel %.9g", n, ai, r, got[r], want)
				}
			}
		}
	}
}

// TestQ1LUTInstallAVX2 checks that the avx2 set installs the AVX2 lookup
// kernel where the CPU has no AVX-512 (hasAVX512F cleared here, as
// GODEBUG=cpu.avx512f=off clears it for a whole process) and the AVX-512
// one where it has.
func TestQ1LUTInstallAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	saved := hasAVX512F
	defer func() { hasAVX512F = saved; SelectKernels("") }()
	for _, avx512 := range []bool{false, true} {
		hasAVX512F = avx512
		if err := SelectKernels("avx2"); err != nil {
			t.Fatal(err)
		}
		want := q1lutAVX2
		if avx512 {
			want = q1lutAVX512
		}
		if got := q1lutSet; got != want {
			name := "none"
			if got != nil {
				name = funcName(got.group)
			}
			t.Errorf("AVX-512 %v: the avx2 set installs %s, want %s", avx512, name, funcName(want.group))
		}
	}
}

// TestQ1LUTTablesAVX512 checks q1lutTablesAVX512 against q1lutTablesF32,
// its specification, byte for byte (a -0 entry for +0 included) on the
// random and extreme activation rows of 1 to 48 blocks.
func TestQ1LUTTablesAVX512(t *testing.T) {
	if !hasAVX512F {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{128, 256, 640, 6144} {
		_, acts := q1lutTestMatrix(t, rng, 16, n)
		acts = append(acts, make([]byte, len(acts[0]))) // zero activations and scales
		for ai, a := range acts {
			want := q1lutAlloc(q1lutTabBytesF32(n))
			got := q1lutAlloc(q1lutTabBytesF32(n))
			q1lutTablesF32(want, a, n)
			q1lutTablesF32Asm(got, a, n)
			if i := firstDiff(got, want); i >= 0 {
				b, o := i/q1lutTabBlockF32, i%q1lutTabBlockF32
				t.Fatalf("n %d act %d: block %d byte %d (group %d entry %d): %#x, q1lutTablesF32 %#x", n, ai, b, o, (o-64)/64, (o-64)%64/4, got[i], want[i])
			}
		}
	}
}

// firstDiff returns the first index where a and b differ (-1: none).
func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
