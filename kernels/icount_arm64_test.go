//go:build arm64 && !purego

package kernels

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/layout"
)

// TestICountCoversArm64 checks that testdata/icount-arm64.txt has a row
// for every assembly kernel of every arm64 set: each sums and whole-dot
// function of neonSet and dotprodSet (found by reflection, so a kernel added to armSet
// without being counted fails here), the NEON F32 and F16 dots both sets use, and
// the q2lut kernel where the set installs its assembly, alone and with
// its tables (BenchmarkArm64Kernels), and the ternary layouts' kernels
// (BenchmarkTernaryKernels).
func TestICountCoversArm64(t *testing.T) {
	defer SelectKernels("")
	rows, _, _ := readICount(t)
	have := map[string]bool{}
	for _, r := range rows {
		have[r.kernel+"/"+r.set] = true
	}
	for _, s := range []*armSet{&neonSet, &dotprodSet} {
		want := []string{gguf.TypeF32.String(), gguf.TypeF16.String()}
		v := reflect.ValueOf(*s)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			isSums, isDot := f.Type == reflect.TypeFor[sumsFunc](), f.Type == reflect.TypeFor[blocksFunc]()
			if !isSums && !isDot || v.Field(i).IsNil() {
				continue
			}
			typ, err := gguf.ParseType(strings.TrimSuffix(f.Name, "Dot"))
			if err != nil || kernels[typ] == nil {
				t.Fatalf("armSet.%s names no weight type with a kernel", f.Name)
			}
			want = append(want, typ.String())
		}
		installQ2LUT(s.name) // as SelectKernels would (which this CPU may refuse)
		if q2lutAsm {
			want = append(want, icountQ2LUT, icountQ2LUTTables)
		}
		if installQ1LUT(s.name); q1lutSet != nil {
			want = append(want, icountQ1LUT, icountQ1LUTTables)
		}
		restorePortable()
		installPack(s.name)
		for _, typ := range icountPacked {
			if kernels[typ].pack != nil {
				want = append(want, typ.String()+icountGroups)
			}
		}
		want = append(want, icountTernary...)
		for _, typ := range want {
			if !have[typ+"/"+s.name] {
				t.Errorf("no instruction count for %s/%s in testdata/icount-arm64.txt (bench/icount.sh --update)", typ, s.name)
			}
		}
	}
}

// The kernel names of the q2lut rows of testdata/icount-arm64.txt and of
// BenchmarkArm64Kernels: the group kernel alone, and one token through a
// whole matrix with its tables.
const (
	icountQ2LUT       = "Q2_K." + string(layout.Q2LUT)
	icountQ2LUTTables = icountQ2LUT + "+tables"
	// icountQ2LUTRows is the matrix's row count: the tables of one
	// activation row are built once and serve its 64 groups, as
	// matmulQ2LUT does for any matrix.
	icountQ2LUTRows = 1024
	// icountQ1LUT and icountQ1LUTTables are the Q1_0 lookup kernel's rows
	// (q1lut.go): its group kernel alone (16 rows), and one token through
	// a 1024-row repacked matrix with matmulQ1LUT, its tables included.
	icountQ1LUT       = "Q1_0.q1lut"
	icountQ1LUTTables = icountQ1LUT + "+tables"
)

// icountTernary are the ternary layout rows of testdata/icount-arm64.txt
// (BenchmarkTernaryKernels: FROM.LAYOUT), one per layout kernel of
// ternary_arm64.s (the Q8_K kernels of ter3 and ter2 run TQ1_0 and TQ2_0
// originals alike: one of each is counted).
var icountTernary = []string{"TQ1_0.ter3", "TQ2_0.ter2", "TQ2_0.ter2s128", "Q2_0.ter3", "Q2_0.ter2", "Q2_0.ter2s128"}

// icountPacked are the types with group kernels (repack.go) whose
// "TYPE.groups" rows BenchmarkArm64Kernels measures where a set has them.
var icountPacked = []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K}

// BenchmarkArm64Kernels measures, under every kernel set this CPU offers,
// the arm64 kernels that BenchmarkKernelSets does not (bench/icount.sh
// counts both), rows of 4096 columns: "F16" is one row product of the F16
// dot (halves of normal random values), "Q2_K.q2lut" one call of the
// q2lut group kernel (16 rows against one Q8_K activation row whose
// tables are already built), "Q2_K.q2lut+tables" one token through a
// 1024-row q2lut matrix with matmulQ2LUT on one thread, building its
// tables included (once, for all 64 groups), "TYPE.groups" one call of the
// set's group kernel (8 interleaved rows against one activation row, its
// aux values made before). The weights are one quantized group repeated:
// the kernels take no data-dependent branches.
func BenchmarkArm64Kernels(b *testing.B) {
	defer SelectKernels("")
	const n = 4096
	rng := fixture.SplitMix64(11)
	c := newQ2LUTCase(b, &rng, n, q2lutRows, false)
	rb := len(c.q2k) / q2lutRows
	w := &Matrix{Name: "expert", Type: gguf.TypeQ2_K, Cols: n, Rows: icountQ2LUTRows, RowBytes: rb,
		data: osmem.AlignedCopy(bytes.Repeat(c.lut, icountQ2LUTRows/q2lutRows)), k: q2lutKernel}
	act := q8kRows(b, &rng, n, 1, nil)
	s := &Products{pool: NewPool(1), lut: make([]byte, q2lutTableBytes(n))}
	defer s.pool.Close()
	out := make([]float32, icountQ2LUTRows)
	f := make([]float32, n)
	f16w, f16a := make([]byte, 2*n), make([]byte, 2*n)
	for _, h := range [][]byte{f16w, f16a} {
		for i := range f {
			f[i] = float32(int32(rng.Next()>>40)-1<<23) / (1 << 23)
		}
		if err := quantizeAct(gguf.TypeF16, h, f); err != nil {
			b.Fatal(err)
		}
	}
	for _, set := range KernelSets() {
		for _, typ := range icountPacked {
			benchGroups(b, set, typ, n, &rng)
		}
		benchQ1LUT(b, set, n, &rng)
		b.Run("F16/"+set, func(b *testing.B) {
			if err := SelectKernels(set); err != nil {
				b.Fatal(err)
			}
			k := kernels[gguf.TypeF16]
			for b.Loop() {
				k.dot(n, f16w, f16a)
			}
		})
		b.Run(icountQ2LUT+"/"+set, func(b *testing.B) {
			if err := SelectKernels(set); err != nil {
				b.Fatal(err)
			}
			buildQ2LUTTables(s.lut, act, n/256)
			for b.Loop() {
				q2lutKernel.group(n, w.data, act, s.lut, out)
			}
		})
		b.Run(icountQ2LUTTables+"/"+set, func(b *testing.B) {
			if err := SelectKernels(set); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s.lutSrc = s.lutSrc[:0] // build the tables every time
				s.matmulQ2LUT(w, act, len(act), out, 1)
			}
		})
	}
}

// benchGroups is BenchmarkArm64Kernels' TYPE.groups/SET, when set has a
// group kernel for typ.
func benchGroups(b *testing.B, set string, typ gguf.Type, n int, rng *fixture.SplitMix64) {
	if err := SelectKernels(set); err != nil {
		b.Fatal(err)
	}
	k := kernels[typ]
	if k.pack == nil {
		return
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(int32(rng.Next()>>40)-1<<23) / (1 << 23)
	}
	rb, ab := ActRowBytes(typ, n), ActRowBytes(k.act, n)
	row, a := make([]byte, rb), make([]byte, ab)
	if err := quantizeAct(typ, row, f); err != nil {
		b.Fatal(err)
	}
	if err := quantizeAct(k.act, a, f); err != nil {
		b.Fatal(err)
	}
	nb := n / typ.BlockSize()
	m := &Matrix{Type: typ, Cols: n, Rows: packRows, RowBytes: rb, data: osmem.AlignedCopy(bytes.Repeat(row, packRows)), k: k}
	m.Pack(false)
	aux := make([]byte, nb*k.pack.auxBytes)
	k.pack.prep(aux, a, nb)
	var out [packRows]float32
	b.Run(typ.String()+icountGroups+"/"+set, func(b *testing.B) {
		if err := SelectKernels(set); err != nil {
			b.Fatal(err)
		}
		gemv := kernels[typ].pack.gemv
		for b.Loop() {
			gemv(m.pk.data, a, aux, nb, &out)
		}
	})
}

// benchQ1LUT is BenchmarkArm64Kernels' Q1_0.q1lut/SET (one call of the
// group kernel, the tables built before) and Q1_0.q1lut+tables/SET (one
// token through a 1024-row repacked matrix on one thread, its tables built
// every call), where set has a lookup kernel.
func benchQ1LUT(b *testing.B, set string, n int, rng *fixture.SplitMix64) {
	if err := SelectKernels(set); err != nil {
		b.Fatal(err)
	}
	if q1lutSet == nil {
		return
	}
	f := make([]float32, n)
	row, a := make([]byte, ActRowBytes(gguf.TypeQ1_0, n)), make([]byte, ActRowBytes(gguf.TypeQ8_0, n))
	for _, c := range []struct {
		t   gguf.Type
		dst []byte
	}{{gguf.TypeQ1_0, row}, {gguf.TypeQ8_0, a}} {
		for i := range f {
			f[i] = float32(int32(rng.Next()>>40)-1<<23) / (1 << 23)
		}
		if err := quantizeAct(c.t, c.dst, f); err != nil {
			b.Fatal(err)
		}
	}
	rows := bytes.Repeat(row, icountQ2LUTRows)
	grp := osmem.AlignedCopy(rows)
	for g := 0; g < icountQ2LUTRows/q1lutRows; g++ {
		q1lutRepack(grp[g*q1lutRows*len(row):], rows[g*q1lutRows*len(row):], len(row), n/128)
	}
	w := &Matrix{Name: "q1", Type: gguf.TypeQ1_0, Cols: n, Rows: icountQ2LUTRows, RowBytes: len(row), data: rows, k: kernels[gguf.TypeQ1_0], q1: grp}
	s := &Products{pool: NewPool(1)}
	defer s.pool.Close()
	out := make([]float32, icountQ2LUTRows)
	b.Run(icountQ1LUT+"/"+set, func(b *testing.B) {
		if err := SelectKernels(set); err != nil {
			b.Fatal(err)
		}
		tab := q1lutAlloc(q1lutSet.tabBytes(n))
		q1lutSet.tables(tab, a, n)
		for b.Loop() {
			q1lutSet.group(n, grp, a, tab, out)
		}
	})
	b.Run(icountQ1LUTTables+"/"+set, func(b *testing.B) {
		if err := SelectKernels(set); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			s.q1.k = nil // build the tables every time
			s.matmulQ1LUT(w, a, len(a), out, 1)
		}
	})
}
