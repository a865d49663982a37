package quant

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

func openGGUF(t *testing.T, rel ...string) *gguf.Reader {
	t.Helper()
	return testfiles.Reader(t, shared.Path(t, rel...))
}

func tensorBytes(t *testing.T, r *gguf.Reader, i int) []byte {
	t.Helper()
	b, err := io.ReadAll(r.TensorData(i))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ffnDownF16() []TensorTypeRule {
	return []TensorTypeRule{{regexp.MustCompile("ffn_down"), gguf.TypeF16}}
}

// logEntry is one tensor line of a llama-quantize log.
type logEntry struct {
	name    string
	typ     string // output type name as ggml spells it
	newSize string // "0.03" (MiB, two decimals) when converted
}

var logLine = regexp.MustCompile(`^\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[[^]]*\], type =\s+(\S+), (?:converting to (\S+) \.\. size =\s+\S+ MiB ->\s+(\S+) MiB|size =)`)

func readQuantizeLog(t *testing.T, rel ...string) (entries []logEntry, fallbacks int) {
	t.Helper()
	b := readRef(t, rel...)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "warning: ") && strings.Contains(line, "falling back") {
			fallbacks++
		}
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		e := logEntry{name: m[1], typ: m[2]}
		if m[3] != "" {
			e.typ, e.newSize = m[3], m[4]
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		t.Fatal("no tensor lines in log")
	}
	return entries, fallbacks
}

// checkAgainstLog runs Choose on every tensor of f and compares the types,
// converted sizes and number of fallbacks with a llama-quantize log.
func checkAgainstLog(t *testing.T, f *gguf.File, rules *Rules, entries []logEntry, wantFallbacks int) {
	t.Helper()
	if len(entries) != len(f.Tensors) {
		t.Fatalf("log has %d tensors, file %d", len(entries), len(f.Tensors))
	}
	fallbacks := 0
	for _, e := range entries {
		ti, ok := f.Tensor(e.name)
		if !ok {
			t.Fatalf("log names tensor %q, not in the file", e.name)
		}
		d, err := rules.Choose(f, ti)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if d.Fallback {
			fallbacks++
		}
		tr, _ := d.Type.Traits()
		if tr.Name != e.typ {
			t.Errorf("%s: chose %s (%s), llama-quantize chose %s", e.name, tr.Name, d.Reason, e.typ)
		}
		if d.Quantize != (e.newSize != "") {
			t.Errorf("%s: Quantize=%v, log converted=%v", e.name, d.Quantize, e.newSize != "")
		}
		if e.newSize != "" {
			size, _ := d.Type.RowSize(int64(ti.RowLen()))
			size *= int64(ti.NumRows())
			if got := fmt.Sprintf("%.2f", float64(size)/1024/1024); got != e.newSize {
				t.Errorf("%s: new size %s MiB, log %s MiB", e.name, got, e.newSize)
			}
		}
	}
	if fallbacks != wantFallbacks {
		t.Errorf("%d fallbacks, log has %d", fallbacks, wantFallbacks)
	}
}

// TestRulesAgainstQuantizeLogs replays the three stories260K quantizations
// of refdata/llama-cpp/quantize-logs.
func TestRulesAgainstQuantizeLogs(t *testing.T) {
	r := openGGUF(t, "models", "stories260K-f32.gguf")
	cases := []struct {
		log   string
		rules *Rules
	}{
		// llama-quantize --tensor-type ffn_down=f16 ... Q8_0
		{"quantize-Q8_0.log", &Rules{Default: gguf.TypeQ8_0, TensorTypes: ffnDownF16()}},
		// llama-quantize --tensor-type ffn_down=f16 ... Q4_0 (output.weight: Q6_K falls back to Q8_0)
		{"quantize-Q4_0.log", &Rules{Default: gguf.TypeQ4_0, TensorTypes: ffnDownF16()}},
		// llama-quantize ... Q4_K (the Q4_K_M mix, with fallbacks everywhere: rows of 64 and 172)
		{"quantize-Q4_K.log", &Rules{Default: gguf.TypeQ4_K}},
	}
	for _, c := range cases {
		t.Run(c.log, func(t *testing.T) {
			entries, fb := readQuantizeLog(t, "refdata", "llama-cpp", "quantize-logs", c.log)
			checkAgainstLog(t, r.File, c.rules, entries, fb)
		})
	}
	// The command: --output-type Q8_0 gives the same types without
	// the fallback.
	entries, _ := readQuantizeLog(t, "refdata", "llama-cpp", "quantize-logs", "quantize-Q4_0.log")
	q8 := gguf.TypeQ8_0
	checkAgainstLog(t, r.File, &Rules{Default: gguf.TypeQ4_0, TensorTypes: ffnDownF16(), OutputType: &q8}, entries, 0)

	// Plain Q8_0 fails as it does in llama.cpp: no fallback for rows of 172.
	ti, _ := r.Tensor("blk.0.ffn_down.weight")
	if _, err := (&Rules{Default: gguf.TypeQ8_0}).Choose(r.File, ti); err == nil {
		t.Error("plain Q8_0 accepted ffn_down rows of 172")
	}
}

// TestRulesAgainstSyntheticFiles checks --pure decisions on the synthetic
// llama model (width 256, GQA) against the types llama-quantize wrote: the
// source header is the quantized file's with every tensor back to F32.
func TestRulesAgainstSyntheticFiles(t *testing.T) {
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ2_K} {
		t.Run(typ.String(), func(t *testing.T) {
			q := openGGUF(t, "refdata", "synthetic", "models", "syn-dense-256-"+typ.String()+".gguf")
			src := &gguf.File{Metadata: q.Metadata, Tensors: append([]gguf.TensorInfo(nil), q.Tensors...)}
			for i := range src.Tensors {
				src.Tensors[i].Type = gguf.TypeF32
			}
			rules := &Rules{Default: typ, Pure: true}
			for i := range src.Tensors {
				d, err := rules.Choose(src, &src.Tensors[i])
				if err != nil {
					t.Fatal(err)
				}
				if want := q.Tensors[i].Type; d.Type != want {
					t.Errorf("%s: chose %s (%s), llama-quantize wrote %s", src.Tensors[i].Name, d.Type, d.Reason, want)
				}
			}
		})
	}
}

// TestStoriesQ8_0Bytes rebuilds every tensor of llama.cpp's
// stories260K-Q8_0.gguf from the F32 model with Rules and ConvertTensor and
// compares types and bytes.
func TestStoriesQ8_0Bytes(t *testing.T) {
	src := openGGUF(t, "models", "stories260K-f32.gguf")
	ref := openGGUF(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")
	rules := &Rules{Default: gguf.TypeQ8_0, TensorTypes: ffnDownF16()}
	if len(src.Tensors) != len(ref.Tensors) {
		t.Fatalf("%d tensors, reference has %d", len(src.Tensors), len(ref.Tensors))
	}
	for i := range src.Tensors {
		ti := &src.Tensors[i]
		j := ref.TensorIndex(ti.Name)
		if j < 0 {
			t.Fatalf("reference lacks %s", ti.Name)
		}
		d, err := rules.Choose(src.File, ti)
		if err != nil {
			t.Fatal(err)
		}
		if d.Type != ref.Tensors[j].Type {
			t.Errorf("%s: type %s, reference %s", ti.Name, d.Type, ref.Tensors[j].Type)
			continue
		}
		in := tensorBytes(t, src, i)
		want := tensorBytes(t, ref, j)
		for _, threads := range []int{1, 8} {
			got := make([]byte, len(want))
			if err := ConvertTensor(got, in, ti.Type, d.Type, int(ti.RowLen()), nil, threads); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			if d := diffBytes(got, want, d.Type.TypeSize()); d != "" {
				t.Errorf("%s (%d threads): %s", ti.Name, threads, d)
			}
		}
	}
}

func TestRulesNeverQuantized(t *testing.T) {
	f := &gguf.File{Metadata: &gguf.Metadata{}, Tensors: []gguf.TensorInfo{
		{Name: "blk.0.attn_norm.weight", Dims: []uint64{64}, Type: gguf.TypeF32},
		{Name: "blk.0.attn_q.bias", Dims: []uint64{64, 64}, Type: gguf.TypeF32},
		{Name: "output_ids", Dims: []uint64{64, 8}, Type: gguf.TypeI32},
		{Name: "position_embd.weight", Dims: []uint64{64, 512}, Type: gguf.TypeF32},
		{Name: "blk.0.ffn_gate_inp.weight", Dims: []uint64{64, 8}, Type: gguf.TypeF32},
		{Name: "blk.0.attn_q.weight", Dims: []uint64{64, 64}, Type: gguf.TypeQ4_0},
		{Name: "blk.0.attn_k.weight", Dims: []uint64{64, 64}, Type: gguf.TypeF16},
		{Name: "blk.0.ffn_up.weight", Dims: []uint64{256, 8}, Type: gguf.TypeF32},
	}}
	r := &Rules{Default: gguf.TypeQ8_0}
	for i := range f.Tensors[:5] {
		d, err := r.Choose(f, &f.Tensors[i])
		if err != nil || d.Quantize || d.Type != f.Tensors[i].Type {
			t.Errorf("%s: %+v, %v; want kept", f.Tensors[i].Name, d, err)
		}
	}
	if _, err := r.Choose(f, &f.Tensors[5]); err == nil {
		t.Error("requantizing Q4_0 without AllowRequantize accepted")
	}
	r.AllowRequantize = true
	if d, err := r.Choose(f, &f.Tensors[5]); err != nil || d.Type != gguf.TypeQ8_0 {
		t.Errorf("with AllowRequantize: %+v, %v", d, err)
	}
	r.Keep = []gguf.Type{gguf.TypeQ4_0}
	if d, err := r.Choose(f, &f.Tensors[5]); err != nil || d.Quantize {
		t.Errorf("with Keep: %+v, %v", d, err)
	}
	// F16 sources convert without AllowRequantize, as in llama.cpp.
	if d, err := (&Rules{Default: gguf.TypeQ8_0}).Choose(f, &f.Tensors[6]); err != nil || d.Type != gguf.TypeQ8_0 {
		t.Errorf("F16 source: %+v, %v", d, err)
	}
	// Types that need an importance matrix are refused without one.
	if _, err := (&Rules{Default: gguf.TypeIQ2_XXS, Pure: true}).Choose(f, &f.Tensors[7]); err == nil {
		t.Error("IQ2_XXS without imatrix accepted")
	}
	// ... unless the row is too short for it: the IQ4_NL fallback needs none.
	if d, err := (&Rules{Default: gguf.TypeIQ2_XXS, Pure: true}).Choose(f, &f.Tensors[6]); err != nil || d.Type != gguf.TypeIQ4_NL || !d.Fallback {
		t.Errorf("IQ2_XXS on rows of 64: %+v, %v", d, err)
	}
}

// TestStoriesQ4_0SharedTensors: in the Q4_0 run (--tensor-type
// ffn_down=F16 --output-type Q8_0) every tensor that gets the type it has in
// llama.cpp's Q8_0 file (output.weight as Q8_0, ffn_down as F16, the F32
// norms) must have that file's bytes; the Q4_0 tensors have no reference
// file, only the log (TestRulesAgainstQuantizeLogs).
func TestStoriesQ4_0SharedTensors(t *testing.T) {
	src := openGGUF(t, "models", "stories260K-f32.gguf")
	ref := openGGUF(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")
	q8 := gguf.TypeQ8_0
	rules := &Rules{Default: gguf.TypeQ4_0, TensorTypes: ffnDownF16(), OutputType: &q8}
	shared, q4 := 0, 0
	for i := range src.Tensors {
		ti := &src.Tensors[i]
		d, err := rules.Choose(src.File, ti)
		if err != nil {
			t.Fatal(err)
		}
		j := ref.TensorIndex(ti.Name)
		if d.Type != ref.Tensors[j].Type {
			if d.Type != gguf.TypeQ4_0 {
				t.Errorf("%s: %s, expected Q4_0 where the Q8_0 file differs", ti.Name, d.Type)
			}
			q4++
			continue
		}
		want := tensorBytes(t, ref, j)
		got := make([]byte, len(want))
		if err := ConvertTensor(got, tensorBytes(t, src, i), ti.Type, d.Type, int(ti.RowLen()), nil, 2); err != nil {
			t.Fatal(err)
		}
		if d := diffBytes(got, want, d.Type.TypeSize()); d != "" {
			t.Errorf("%s: %s", ti.Name, d)
		}
		shared++
	}
	if shared != 1+5+11 || q4 != 31 {
		t.Errorf("%d tensors shared with the Q8_0 file, %d Q4_0; want 17 and 31", shared, q4)
	}
}

// TestSyntheticQ8_0Requantize: Q8_0 requantizes its own output unchanged
// (TestRequantizeStable), so dequantizing llama.cpp's Q8_0 synthetic model
// and quantizing it again must give llama.cpp's bytes: a check of both
// directions on 3.4 million weights that are not in refdata/quant.
func TestSyntheticQ8_0Requantize(t *testing.T) {
	r := openGGUF(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	n := 0
	for i := range r.Tensors {
		ti := &r.Tensors[i]
		if ti.Type != gguf.TypeQ8_0 {
			continue
		}
		want := tensorBytes(t, r, i)
		x := make([]float32, ti.NumElements())
		if err := Dequantize(ti.Type, x, want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if err := QuantizeRows(ti.Type, got, x, int(ti.RowLen()), nil, 2); err != nil {
			t.Fatal(err)
		}
		if d := diffBytes(got, want, 34); d != "" {
			t.Errorf("%s: %s", ti.Name, d)
		}
		n++
	}
	if n != 30 {
		t.Errorf("%d Q8_0 tensors, want 30", n)
	}
}
