package layout_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/quant"
)

// randRows returns rows x ne0 float32 weights in [-1, 1), with a few large
// ones so the scales vary.
func randRows(seed uint64, rows, ne0 int) []float32 {
	rng := fixture.SplitMix64(seed)
	x := make([]float32, rows*ne0)
	for i := range x {
		z := rng.Next()
		x[i] = float32(int32(z>>40)-1<<23) / (1 << 23)
		if z&63 == 0 {
			x[i] *= 8
		}
	}
	return x
}

func quantized(t testing.TB, typ gguf.Type, x []float32) []byte {
	t.Helper()
	n, _ := typ.RowSize(int64(len(x)))
	b := make([]byte, n)
	if err := quant.Quantize(typ, b, x, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQ2LUTRoundTrip packs whole experts of several shapes (row counts that
// are multiples of 16, with a tail, and with no full group) and unpacks
// them to the same bytes; tail rows stay Q2_K rows in place.
func TestQ2LUTRoundTrip(t *testing.T) {
	for _, c := range []struct{ ne0, rows, experts int64 }{
		{256, 16, 1}, {512, 32, 3}, {256, 20, 2}, {768, 7, 2}, {256, 48, 4},
	} {
		src := quantized(t, gguf.TypeQ2_K, randRows(uint64(c.ne0+c.rows), int(c.rows*c.experts), int(c.ne0)))
		packed := make([]byte, len(src))
		if err := layout.PackQ2LUT(packed, src, c.ne0, c.rows); err != nil {
			t.Fatal(err)
		}
		rb := c.ne0 / 256 * 84
		full := c.rows / 16 * 16
		for e := int64(0); e < c.experts; e++ {
			base := e * c.rows * rb
			if full > 0 && bytes.Equal(packed[base:base+full*rb], src[base:base+full*rb]) {
				t.Errorf("%+v: expert %d's groups are unchanged", c, e)
			}
			if tail := base + full*rb; !bytes.Equal(packed[tail:base+c.rows*rb], src[tail:base+c.rows*rb]) {
				t.Errorf("%+v: expert %d's %d tail rows changed", c, e, c.rows-full)
			}
		}
		back := make([]byte, len(src))
		if err := layout.UnpackQ2LUT(back, packed, c.ne0, c.rows); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, src) {
			t.Errorf("%+v: round trip differs", c)
		}
	}
	if err := layout.PackQ2LUT(make([]byte, 84*3), make([]byte, 84*3), 256, 2); err == nil {
		t.Error("a chunk that is not whole experts was accepted")
	}
}

// TestQ2LUTGroupBytes checks the documented byte positions of one group on
// a hand-checkable case: row r, column c's code is at byte 320 + (c/4)*16 + r.
func TestQ2LUTGroupBytes(t *testing.T) {
	src := quantized(t, gguf.TypeQ2_K, randRows(7, 16, 256))
	g := make([]byte, len(src))
	if err := layout.PackQ2LUT(g, src, 256, 16); err != nil {
		t.Fatal(err)
	}
	deq := make([]float32, 16*256)
	if err := quant.Dequantize(gguf.TypeQ2_K, deq, src); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 16; r++ {
		blk := src[r*84 : (r+1)*84]
		d := quant.FP16ToFP32(binary.LittleEndian.Uint16(g[2*r:]))
		dmin := quant.FP16ToFP32(binary.LittleEndian.Uint16(g[32+2*r:]))
		for c := 0; c < 256; c++ {
			sc := g[64+(c/16)*16+r]
			v := g[320+(c/4)*16+r] >> (4 * ((c % 4) / 2))
			q := (v >> (2 * (c % 2))) & 3
			want := deq[r*256+c]
			got := float32(float32(d*float32(sc&15))*float32(q)) - float32(dmin*float32(sc>>4))
			if got != want {
				t.Fatalf("row %d col %d: %g from the group, %g from Q2_K", r, c, got, want)
			}
		}
		if blk[80] != g[2*r] || blk[83] != g[33+2*r] {
			t.Fatalf("row %d: scales not where documented", r)
		}
	}
}

// vecdot returns ggml-cpu's 8 q2_K x q8_K dots from refdata/quant/vecdot.txt.
func vecdot(t *testing.T) [8]float32 {
	f, err := os.Open(shared.Path(t, "refdata", "quant", "vecdot.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[0] != "q2_K" {
			continue
		}
		var out [8]float32
		for i := range out {
			v, err := strconv.ParseFloat(fs[2+i], 32)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = float32(v)
		}
		return out
	}
	t.Fatal("no q2_K line in vecdot.txt")
	return [8]float32{}
}

// TestQ2LUTAgainstGGML: ggml's own 8 Q2_K rows (refdata, quantized by
// ggml) tiled to a 16-row expert (a full group) plus a 9-row one (8 rows in
// no group: the Q2_K tail path), repacked, multiplied through package
// kernels (the runtime's kernels, every set this CPU runs) with ggml's
// input row (which kernels quantizes to ggml's Q8_K activation,
// kernels.TestActivationQuantizers), give ggml-cpu's vec_dot results, and
// exactly the bits of the same product of the Q2_K original: the layout
// stores the same numbers, and the same kernels read both.
func TestQ2LUTAgainstGGML(t *testing.T) {
	defer kernels.SelectKernels("")
	w8 := shared.Read(t, "refdata", "quant", "q2_K.ref.q")
	want := vecdot(t)
	raw := shared.Read(t, "refdata", "quant", "input.f32")
	input := make([]float32, len(raw)/4)
	for i := range input {
		input[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	product := func(typ string, data []byte, rows int, q2lut bool) []float32 {
		w, err := kernels.NewMatrix(typ, gguf.TypeQ2_K, 256, rows, 84, data)
		if err != nil {
			t.Fatal(err)
		}
		cols := 0
		if q2lut {
			w.UseQ2LUT()
			cols = 256
		}
		pool := kernels.NewPool(1)
		defer pool.Close()
		out := make([]float32, rows)
		kernels.NewProducts(pool, 1, 256, cols).MatMul(w, input[:256], out, 1)
		return out
	}
	for _, set := range kernels.KernelSets() {
		if err := kernels.SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{16, 9} {
			src := make([]byte, 0, rows*84)
			for r := 0; r < rows; r++ {
				src = append(src, w8[(r%8)*84:(r%8+1)*84]...)
			}
			packed := make([]byte, len(src))
			if err := layout.PackQ2LUT(packed, src, 256, int64(rows)); err != nil {
				t.Fatal(err)
			}
			out := product("q2lut", packed, rows, true)
			orig := product("q2_K", src, rows, false)
			for r := range out {
				if math.Float32bits(out[r]) != math.Float32bits(orig[r]) {
					t.Errorf("set %s, %d rows, row %d: q2lut %.9g, its Q2_K original %.9g", set, rows, r, out[r], orig[r])
				}
				// ggml's AVX-512 kernel sums in another order than its
				// generic C and the kernel sets; the tolerance is float32
				// rounding relative to the sum of |terms|.
				mag := 1e-3
				for i := 0; i < 256; i++ {
					mag += math.Abs(float64(input[(r%8)*256+i] * input[i]))
				}
				if d := math.Abs(float64(out[r]) - float64(want[r%8])); d > mag*2e-6 {
					t.Errorf("set %s, %d rows, row %d: %.9g, ggml %.9g", set, rows, r, out[r], want[r%8])
				}
			}
		}
	}
}

// ternarySources returns rows of each ternary type made by the project's
// quantizers (bit-exact ggml), from weights that are mostly ternary.
func ternarySources(t testing.TB, rows, ne0 int) map[gguf.Type][]byte {
	x := randRows(uint64(rows*ne0), rows, ne0)
	out := map[gguf.Type][]byte{}
	for _, typ := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		out[typ] = quantized(t, typ, x)
	}
	return out
}

// TestTernaryRoundTrip: every lossless layout gives back the same bytes for
// every source type and several row lengths; ter2s128 does for TQ1_0 and
// TQ2_0 (one scale per 256 already) and for Q2_0 keeps every code, merging
// only the scales.
func TestTernaryRoundTrip(t *testing.T) {
	for _, ne0 := range []int{256, 512, 1280} {
		for typ, src := range ternarySources(t, 5, ne0) {
			for _, k := range []layout.Kind{layout.Ter3, layout.Ter2, layout.Ter2S128} {
				info, err := layout.Stored(gguf.TensorInfo{Name: "w", Dims: []uint64{uint64(ne0), 5}, Type: typ}, k)
				if err != nil {
					t.Fatal(err)
				}
				packed := make([]byte, info.Size())
				if err := layout.PackTernary(k, typ, packed, src, int64(ne0), 0); err != nil {
					t.Fatalf("%s %s: %v", typ, k, err)
				}
				back := make([]byte, len(src))
				if err := layout.UnpackTernary(k, typ, back, packed, int64(ne0), 0); err != nil {
					t.Fatalf("%s %s: %v", typ, k, err)
				}
				same := bytes.Equal(back, src)
				if lossless := k.Lossless() || typ != gguf.TypeQ2_0; lossless != same {
					t.Errorf("%s %s ne0 %d: round trip identical %v, want %v", typ, k, ne0, same, lossless)
				}
				if !same {
					checkMergedQ2_0(t, src, back)
				}
				bpw := float64(len(packed)*8) / float64(5*ne0)
				want := map[layout.Kind]float64{layout.Ter3: 1.875, layout.Ter2: 2.25, layout.Ter2S128: 2.125}[k]
				if bpw != want {
					t.Errorf("%s %s: %.4f bits/weight, want %.4f", typ, k, bpw, want)
				}
			}
		}
	}
}

// checkMergedQ2_0: a lossy ter2s128 round trip of Q2_0 keeps every code and
// gives both 64-weight blocks of each 128 one scale.
func checkMergedQ2_0(t *testing.T, src, back []byte) {
	t.Helper()
	for b := 0; b < len(src)/18; b++ {
		if !bytes.Equal(src[b*18+2:b*18+18], back[b*18+2:b*18+18]) {
			t.Fatalf("Q2_0 block %d: codes changed", b)
		}
		if b%2 == 1 && !bytes.Equal(back[b*18:b*18+2], back[(b-1)*18:(b-1)*18+2]) {
			t.Fatalf("Q2_0 blocks %d and %d: scales not merged", b-1, b)
		}
	}
}

// TestTernaryRefusesFourthCode: a Q2_0 (or TQ2_0) block using code 3 (+2)
// is refused with an error naming the block.
func TestTernaryRefusesFourthCode(t *testing.T) {
	src := ternarySources(t, 3, 256)
	q2 := append([]byte(nil), src[gguf.TypeQ2_0]...)
	q2[9*18+2+5] |= 3 << 2 // block 9 = row 2, block 1 of that row; weight 21
	err := layout.PackTernary(layout.Ter3, gguf.TypeQ2_0, make([]byte, 3*60), q2, 256, 0)
	var be *layout.BlockError
	if !errors.As(err, &be) || be.Block != 9 || be.Row != 2 || !strings.Contains(err.Error(), "fourth code (+2)") {
		t.Fatalf("got %v", err)
	}
	tq2 := append([]byte(nil), src[gguf.TypeTQ2_0]...)
	tq2[66+3] |= 3
	err = layout.PackTernary(layout.Ter2, gguf.TypeTQ2_0, make([]byte, 3*72), tq2, 256, 10)
	if !errors.As(err, &be) || be.Block != 11 || be.Row != 11 {
		t.Fatalf("TQ2_0: got %v", err)
	}
	// A TQ1_0 byte ggml's quantizer cannot write (0x01 decodes to trits
	// 0 0 0 0 0, which encode as 0x00) would not come back: refused.
	tq1 := append([]byte(nil), src[gguf.TypeTQ1_0]...)
	tq1[4] = 0x01
	if err := layout.PackTernary(layout.Ter3, gguf.TypeTQ1_0, make([]byte, 3*60), tq1, 256, 0); !errors.As(err, &be) || be.Block != 0 {
		t.Fatalf("TQ1_0: got %v", err)
	}
}

// TestEntriesMetadata: the layout arrays round-trip and are removed when
// empty, and malformed ones are refused.
func TestEntriesMetadata(t *testing.T) {
	md := &gguf.Metadata{}
	md.Set("general.name", gguf.String("x"))
	es := []layout.Entry{{Name: "blk.0.ffn_up_exps.weight.q2lut", Kind: layout.Q2LUT, From: gguf.TypeQ2_K},
		{Name: "output.weight.ter3", Kind: layout.Ter3, From: gguf.TypeQ2_0}}
	layout.SetEntries(md, es)
	got, err := layout.Entries(md)
	if err != nil || len(got) != 2 || got[1] != es[1] || got[0].Original() != "blk.0.ffn_up_exps.weight" {
		t.Fatalf("%v %+v", err, got)
	}
	layout.SetEntries(md, nil)
	if md.Len() != 1 {
		t.Errorf("%d keys left", md.Len())
	}
	md.Set(layout.KeyTensors, gguf.MustArray([]string{"a.ter3"}))
	md.Set(layout.KeyKinds, gguf.MustArray([]string{"q2lut"}))
	md.Set(layout.KeyTypes, gguf.MustArray([]uint32{uint32(gguf.TypeQ2_K)}))
	if _, err := layout.Entries(md); err == nil {
		t.Error("a name without its layout suffix was accepted")
	}
	if _, err := layout.StoredName(strings.Repeat("x", 60), layout.Ter2S128); err == nil {
		t.Error("a name over GGUF's limit was accepted")
	}
}

// TestWorkedExample checks the ternary example of docs/layouts.md byte for
// byte (the bytes there were worked out by hand from the format).
func TestWorkedExample(t *testing.T) {
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	codes := "52 55 55 51 56 55 55 55 55 55 55 55 55 55 55 55"
	src := unhex("00 3c " + codes + " 00 38 " + codes)
	t3 := "b9 2b 80 9c 80 80 80 80 80 80 80 80 80"
	t2 := "5a 54 55 55 55 55 55 55 55 55 55 55 55 54 55 55"
	for k, want := range map[layout.Kind]string{
		layout.Ter3:     "00 3c 00 38 " + t3 + t3,
		layout.Ter2:     "00 3c 00 38 " + t2 + t2,
		layout.Ter2S128: "00 3a " + t2 + t2,
	} {
		info, err := layout.Stored(gguf.TensorInfo{Name: "w", Dims: []uint64{128, 1}, Type: gguf.TypeQ2_0}, k)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, info.Size())
		if err := layout.PackTernary(k, gguf.TypeQ2_0, got, src, 128, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, unhex(want)) {
			t.Errorf("%s: % x, docs say %s", k, got, want)
		}
	}
}
