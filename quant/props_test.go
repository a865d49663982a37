package quant

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// These tests check properties on inputs other than refdata's. They are
// self-consistency checks (the code against itself or against plain
// arithmetic), not comparisons with ggml: only refdata_test.go and
// rules_test.go compare with ggml's own output.

// typesWhere lists the valid types for which ok holds.
func typesWhere(ok func(gguf.Type) bool) []gguf.Type {
	var ts []gguf.Type
	for _, t := range gguf.Types() {
		if ok(t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// allQuantTypes is every type Quantize supports.
func allQuantTypes() []gguf.Type { return typesWhere(CanQuantize) }

// randomRows returns rows x 256 values: uniform in [-1,1) scaled per row by
// 2^e for e in -10..10, a different generator seed than refdata's.
func randomRows(seed uint64, rows int) []float32 { return randomRowsExp(seed, rows, 10) }

// randomRowsExp is randomRows with scales 2^-maxExp..2^maxExp.
func randomRowsExp(seed uint64, rows, maxExp int) []float32 {
	s := splitMix64(seed)
	x := make([]float32, rows*256)
	for r := 0; r < rows; r++ {
		scale := float32(math.Ldexp(1, int(s.next()%uint64(2*maxExp+1))-maxExp))
		for c := 0; c < 256; c++ {
			u := float32(int32(s.next()>>40)-8388608) * 0x1p-23
			x[r*256+c] = u * scale
		}
	}
	return x
}

func weightsFor(t gguf.Type, n int) []float32 {
	if !RequiresImatrix(t) {
		return nil
	}
	return refImatrix(n)
}

// summaryRow0Error reads refdata/quant/summary.txt: per type name, ggml's
// max |x - dequantized| on input row 0 (uniform in [-1,1), max |x| ~ 1).
func summaryRow0Error(t *testing.T) map[string]float64 {
	t.Helper()
	errs := map[string]float64{}
	for _, line := range strings.Split(string(readRef(t, "refdata", "quant", "summary.txt")), "\n") {
		parts := strings.Split(line, "|")
		if strings.HasPrefix(line, "#") || len(parts) != 3 {
			continue
		}
		name := strings.Fields(parts[0])
		vals := strings.Fields(parts[2])
		if len(name) < 2 || len(vals) != 8 {
			continue
		}
		v, err := strconv.ParseFloat(vals[0], 64)
		if err != nil {
			t.Fatalf("summary.txt: %q: %v", line, err)
		}
		errs[name[1]] = v
	}
	if len(errs) < 25 {
		t.Fatalf("summary.txt: only %d types read", len(errs))
	}
	return errs
}

// TestRoundTripErrorBound: on other uniform data (rows scaled by 2^-4..2^4,
// within every format's range; NVFP4's scales have no super-block factor
// and flush tiny blocks to zero) the quantize/dequantize error relative to
// the row's max |x| stays within 1.6 times what ggml's own output shows on
// refdata's uniform row. A broken codec fails this; a last-bit change does
// not (the byte-exact tests catch those).
func TestRoundTripErrorBound(t *testing.T) {
	ref := summaryRow0Error(t)
	x := randomRowsExp(7, 16, 4)
	for _, typ := range typesWhere(func(t gguf.Type) bool { return CanQuantize(t) && CanDequantize(t) && t != gguf.TypeF32 }) {
		tr, _ := typ.Traits()
		e0, ok := ref[tr.Name]
		if !ok {
			t.Errorf("%s: not in summary.txt", typ)
			continue
		}
		bound := 1.6 * e0
		q := make([]byte, rowBytes(typ, len(x)))
		var w []float32 // as for summary.txt: none, or all ones where required
		if RequiresImatrix(typ) {
			w = slices.Repeat([]float32{1}, 256)
		}
		if err := Quantize(typ, q, x, w); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		y := make([]float32, len(x))
		if err := Dequantize(typ, y, q); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for r := 0; r < len(x)/256; r++ {
			var amax, emax float64
			for c := r * 256; c < (r+1)*256; c++ {
				amax = math.Max(amax, math.Abs(float64(x[c])))
				emax = math.Max(emax, math.Abs(float64(x[c]-y[c])))
			}
			if emax > bound*amax {
				t.Errorf("%s row %d: max error %.3g = %.4f of max |x|; ggml's on uniform data %.4f", typ, r, emax, emax/amax, e0)
			}
		}
	}
}

// TestRequantizeStable: for these types quantizing the dequantized values
// gives the same bytes again (the scale survives the f16 round trip and every
// level is reproduced); it follows from the reference algorithms, which put
// the block maximum on an extreme level.
func TestRequantizeStable(t *testing.T) {
	x := randomRows(11, 16)
	for _, typ := range []gguf.Type{gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeTQ2_0} {
		q := make([]byte, rowBytes(typ, len(x)))
		if err := Quantize(typ, q, x, nil); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(x))
		if err := Dequantize(typ, y, q); err != nil {
			t.Fatal(err)
		}
		q2 := make([]byte, len(q))
		if err := Quantize(typ, q2, y, nil); err != nil {
			t.Fatal(err)
		}
		if d := diffBytes(q2, q, typ.TypeSize()); d != "" {
			t.Errorf("%s: requantized bytes differ: %s", typ, d)
		}
	}
}

// TestThreadsIndependent: QuantizeRows and ConvertTensor give the same bytes
// with 1 and 8 goroutines, with and without weights.
func TestThreadsIndependent(t *testing.T) {
	x := randomRows(3, 288) // enough values for QuantizeRows to split the rows
	if testing.Short() {
		x = x[:24*256]
	}
	w := refImatrix(256)
	for _, typ := range allQuantTypes() {
		for _, weights := range [][]float32{nil, w} {
			if weights == nil && RequiresImatrix(typ) {
				continue
			}
			one := make([]byte, rowBytes(typ, len(x)))
			many := make([]byte, len(one))
			if err := QuantizeRows(typ, one, x, 256, weights, 1); err != nil {
				t.Fatal(err)
			}
			if err := QuantizeRows(typ, many, x, 256, weights, 8); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(one, many) {
				t.Errorf("%s: 1 and 8 threads differ", typ)
			}
			ref := make([]byte, len(one))
			if err := Quantize(typ, ref, x, weights); weights != nil && err == nil && !bytes.Equal(ref, one) {
				t.Errorf("%s: QuantizeRows differs from Quantize", typ)
			}
		}
	}
}

// TestConvertTensorRequantize: ConvertTensor from a quantized type is
// dequantize-then-quantize, row by row.
func TestConvertTensorRequantize(t *testing.T) {
	x := randomRows(5, 8)
	q8 := make([]byte, rowBytes(gguf.TypeQ8_0, len(x)))
	if err := Quantize(gguf.TypeQ8_0, q8, x, nil); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := Dequantize(gguf.TypeQ8_0, y, q8); err != nil {
		t.Fatal(err)
	}
	for _, to := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeF16, gguf.TypeIQ4_NL} {
		want := make([]byte, rowBytes(to, len(x)))
		if err := Quantize(to, want, y, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if err := ConvertTensor(got, q8, gguf.TypeQ8_0, to, 256, nil, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Q8_0 -> %s differs from Dequantize+Quantize", to)
		}
	}
	// F32 source bytes.
	want := make([]byte, rowBytes(gguf.TypeQ5_K, len(x)))
	if err := Quantize(gguf.TypeQ5_K, want, x, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := ConvertTensor(got, bytesLE(x), gguf.TypeF32, gguf.TypeQ5_K, 256, nil, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("F32 -> Q5_K differs from Quantize")
	}
	// Size errors are errors.
	if err := ConvertTensor(got[1:], bytesLE(x), gguf.TypeF32, gguf.TypeQ5_K, 256, nil, 2); err == nil {
		t.Error("short destination accepted")
	}
	if err := ConvertTensor(got, bytesLE(x)[1:], gguf.TypeF32, gguf.TypeQ5_K, 256, nil, 2); err == nil {
		t.Error("partial row accepted")
	}
	if err := ConvertTensor(got, bytesLE(x), gguf.TypeF32, gguf.TypeQ5_K, 100, nil, 2); err == nil {
		t.Error("row length that is no multiple of the block accepted")
	}
}

// TestFP16Exhaustive: every half converts to float32 and back unchanged
// (NaNs to ggml's canonical 0x7E00 with their sign), and FP32ToFP16 agrees
// with an independent round-to-nearest-even on float64 for a sweep of
// float32 bit patterns.
func TestFP16Exhaustive(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := FP16ToFP32(uint16(h))
		back := FP32ToFP16(f)
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		want := uint16(h)
		if isNaN {
			want = uint16(h)&0x8000 | 0x7e00
			if !math.IsNaN(float64(f)) {
				t.Fatalf("%04x: not NaN", h)
			}
		}
		if back != want {
			t.Fatalf("%04x -> %v -> %04x", h, f, back)
		}
	}
	s := splitMix64(1)
	for i := 0; i < 1<<20; i++ {
		bits := uint32(s.next())
		f := math.Float32frombits(bits)
		if math.IsNaN(float64(f)) {
			continue
		}
		if got, want := FP32ToFP16(f), fp16RNE(float64(f)); got != want {
			t.Fatalf("FP32ToFP16(%g [%08x]) = %04x, want %04x", f, bits, got, want)
		}
	}
}

// fp16RNE rounds a float64 to binary16 by exhaustive search of the two
// neighbours: slow, simple and independent of the bit tricks.
func fp16RNE(v float64) uint16 {
	sign := uint16(0)
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	if v >= 65520 { // halfway between 65504 and 65536 rounds up to infinity
		return sign | 0x7c00
	}
	lo, hi := uint16(0), uint16(0x7bff)
	for lo < hi { // largest h with value <= v
		mid := (lo + hi + 1) / 2
		if float64(FP16ToFP32(mid)) <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0x7bff {
		return sign | lo
	}
	a, b := float64(FP16ToFP32(lo)), float64(FP16ToFP32(lo+1))
	switch {
	case v-a < b-v:
		return sign | lo
	case v-a > b-v:
		return sign | (lo + 1)
	case lo%2 == 0:
		return sign | lo
	}
	return sign | (lo + 1)
}

func TestBF16(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81},
		{0x7f7fffff, 0x7f80}, {0x7f800000, 0x7f80}, {0x7f800001, 0x7fc0}, {0xffc00001, 0xffc0},
		{0x00000001, 0x0000}, {0x80008000, 0x8000},
	}
	for _, c := range cases {
		if got := FP32ToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("FP32ToBF16(%08x) = %04x, want %04x", c.in, got, c.want)
		}
	}
	for h := 0; h < 1<<16; h++ {
		if h&0x7f80 == 0x7f80 && h&0x7f != 0 {
			continue // NaN payloads get the quiet bit
		}
		if got := FP32ToBF16(BF16ToFP32(uint16(h))); got != uint16(h) {
			t.Fatalf("%04x round trip -> %04x", h, got)
		}
	}
}

// TestLatticeTables checks the transcribed codebooks: strictly ascending (as
// ggml lists them), levels in range (2-bit grids use levels 0-2 only), and a
// non-empty neighbour list for every off-grid vector the quantizers can
// produce.
func TestLatticeTables(t *testing.T) {
	tables := []struct {
		name  string
		k     []uint16
		nbits int
		dim   int
		lat   func() *lattice
	}{
		{"kgrid_2bit_256", kgrid2bit256[:], 2, 8, latIQ2XXS},
		{"kgrid_2bit_512", kgrid2bit512[:], 2, 8, latIQ2XS},
		{"kgrid_2bit_1024", kgrid2bit1024[:], 2, 8, latIQ2S},
		{"kgrid_1bit_2048", kgrid1bit2048[:], 2, 8, latIQ1},
		{"kgrid_256", kgrid3bit256[:], 3, 4, latIQ3XXS},
		{"kgrid_512", kgrid3bit512[:], 3, 4, latIQ3S},
	}
	for _, tb := range tables {
		if !slices.IsSorted(tb.k) || len(slices.Compact(slices.Clone(tb.k))) != len(tb.k) {
			t.Errorf("%s is not strictly ascending", tb.name)
		}
		for _, v := range tb.k {
			for i := 0; i < tb.dim; i++ {
				if tb.nbits == 2 && v>>(2*i)&3 == 3 {
					t.Errorf("%s: entry %d uses level 3", tb.name, v)
				}
			}
			if int(v) >= 1<<(tb.nbits*tb.dim) {
				t.Errorf("%s: entry %d out of range", tb.name, v)
			}
		}
		lt := tb.lat()
		maxLevel := 2
		if tb.nbits == 3 {
			maxLevel = 7
		}
		var L [8]int8
		count := 0
		var walk func(i int)
		walk = func(i int) {
			if i == tb.dim {
				u := packLevels(L[:tb.dim], tb.nbits)
				if lt.kmap[u] < 0 && len(lt.neighboursOf(u)) == 0 {
					t.Errorf("%s: vector %v has no neighbours", tb.name, L[:tb.dim])
				}
				count++
				return
			}
			for l := 0; l <= maxLevel; l++ {
				L[i] = int8(l)
				walk(i + 1)
			}
		}
		walk(0)
		if count == 0 {
			t.Errorf("%s: nothing checked", tb.name)
		}
	}
	// Spot checks against ggml-common.h's expanded tables.
	for _, c := range []struct {
		got, want uint64
	}{
		{le.Uint64(iq2xxsGrid[27][:]), 0x080808192b192b08},
		{le.Uint64(iq2sGrid[7][:]), 0x080808080819192b},
		{le.Uint64(iq1sGrid[7][:]), 0xffffffffff01ffff},
		{uint64(le.Uint32(iq3xxsGrid[10][:])), 0x04043e1c},
		{uint64(le.Uint32(iq3sGrid[5][:])), 0x01010301},
	} {
		if c.got != c.want {
			t.Errorf("grid entry %016x, ggml-common.h has %016x", c.got, c.want)
		}
	}
}

// TestRoundToInt32 compares the add-and-truncate rounding with C's roundf
// (math.Round) followed by cvttss2si on every 97th float32 bit pattern and
// around each halfway point of the int8 range. The full 2^32 sweep passed
// once (about 20 s on two cores); this sample keeps the test quick.
func TestRoundToInt32(t *testing.T) {
	check := func(x float32) {
		if got, want := roundToInt32(x), cvtt32(float32(math.Round(float64(x)))); got != want {
			t.Fatalf("roundToInt32(%g [%08x]) = %d, want %d", x, math.Float32bits(x), got, want)
		}
	}
	for u := uint64(0); u < 1<<32; u += 97 {
		check(math.Float32frombits(uint32(u)))
	}
	for k := -130; k <= 130; k++ {
		h := float32(k) + 0.5
		for _, x := range []float32{h, math.Nextafter32(h, -1000), math.Nextafter32(h, 1000)} {
			check(x)
			check(-x)
		}
	}
}

// TestSpecialValuesNoPanic runs every codec over NaN, infinities, huge,
// tiny and subnormal inputs. ggml has no defined output for these (its IQ
// quantizers abort), so only the absence of panics and well-formed errors
// are checked.
func TestSpecialValuesNoPanic(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32,
		-math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-30, 0, float32(math.Copysign(0, -1)), 65504, 1e20}
	x := randomRows(9, 4)
	for i := range x {
		if i%5 == 0 {
			x[i] = specials[(i/5)%len(specials)]
		}
	}
	w := refImatrix(256)
	for _, typ := range allQuantTypes() {
		q := make([]byte, rowBytes(typ, len(x)))
		_ = Quantize(typ, q, x, w)
		if CanDequantize(typ) {
			y := make([]float32, len(x))
			if err := Dequantize(typ, y, q); err != nil {
				t.Errorf("%s: %v", typ, err)
			}
		}
	}
}

func TestAPIErrors(t *testing.T) {
	x := make([]float32, 256)
	if err := Quantize(gguf.TypeQ4_0, make([]byte, 10), x, nil); err == nil {
		t.Error("wrong destination size accepted")
	}
	if err := Quantize(gguf.TypeQ4_K, make([]byte, 144), x[:100], nil); err == nil {
		t.Error("partial block accepted")
	}
	if err := Quantize(gguf.TypeIQ2_XXS, make([]byte, 66), x, nil); err == nil {
		t.Error("IQ2_XXS without imatrix accepted")
	}
	if err := Quantize(gguf.TypeI32, make([]byte, 1024), x, nil); err == nil {
		t.Error("I32 accepted")
	}
	if err := Quantize(gguf.Type(4), make([]byte, 1024), x, nil); err == nil {
		t.Error("removed type id accepted")
	}
	if err := Dequantize(gguf.TypeQ8_1, make([]float32, 32), make([]byte, 36)); err == nil {
		t.Error("Q8_1 dequantized (ggml has no dequantizer)")
	}
	if err := Dequantize(gguf.TypeQ4_0, make([]float32, 32), make([]byte, 17)); err == nil {
		t.Error("partial block accepted")
	}
	if err := QuantizeRows(gguf.TypeQ4_0, make([]byte, 144), x, 256, make([]float32, 32), 2); err == nil {
		t.Error("imatrix of the wrong length accepted")
	}
	if err := QuantizeRef(gguf.TypeIQ1_M, make([]byte, 56), x); err == nil {
		t.Error("IQ1_M has no reference quantizer in ggml")
	}
}

// TestQuantizeAllocationFree: once a type's tables exist, Quantize and
// Dequantize allocate nothing, however many rows they process.
func TestQuantizeAllocationFree(t *testing.T) {
	x := randomRowsExp(13, 4, 2)
	w := refImatrix(256)
	for _, typ := range allQuantTypes() {
		q := make([]byte, rowBytes(typ, len(x)))
		if err := Quantize(typ, q, x, w); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(3, func() { _ = Quantize(typ, q, x, w) }); n != 0 {
			t.Errorf("Quantize %s: %v allocations", typ, n)
		}
		if CanDequantize(typ) {
			y := make([]float32, len(x))
			if n := testing.AllocsPerRun(3, func() { _ = Dequantize(typ, y, q) }); n != 0 {
				t.Errorf("Dequantize %s: %v allocations", typ, n)
			}
		}
	}
}
