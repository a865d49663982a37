package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// imatrixEntry is one tensor's raw statistics as llama-imatrix stores them.
type imatrixEntry struct {
	name   string
	sums   []float32 // ne0 * nmat summed squared activations
	counts []float32 // nmat call counts (GGUF); legacy files use counts[0]
}

// writeGGUFImatrix builds a GGUF imatrix the way llama-imatrix writes one:
// "<name>.in_sum2" (ne0 x nmat, F32), "<name>.counts" (1 x nmat, F32) and the
// imatrix.* metadata.
func writeGGUFImatrix(t *testing.T, entries []imatrixEntry) []byte {
	t.Helper()
	md, err := gguf.NewMetadata(
		gguf.KV{Key: "general.type", Value: gguf.String("imatrix")},
		gguf.KV{Key: keyImatrixDatasets, Value: gguf.MustArray([]string{"calib.txt"})},
		gguf.KV{Key: keyImatrixChunkCount, Value: gguf.Uint32(7)},
		gguf.KV{Key: keyImatrixChunkSize, Value: gguf.Uint32(512)},
	)
	if err != nil {
		t.Fatal(err)
	}
	var ts []fixture.Tensor
	for _, e := range entries {
		nmat := uint64(len(e.counts))
		ne0 := uint64(len(e.sums)) / nmat
		ts = append(ts,
			fixture.Tensor{Info: gguf.TensorInfo{Name: e.name + ".in_sum2", Dims: []uint64{ne0, nmat}, Type: gguf.TypeF32}, Data: bytesLE(e.sums)},
			fixture.Tensor{Info: gguf.TensorInfo{Name: e.name + ".counts", Dims: []uint64{1, nmat}, Type: gguf.TypeF32}, Data: bytesLE(e.counts)})
	}
	return fixture.Write(md, ts)
}

// writeLegacyImatrix builds a legacy .dat file: entry count, then per entry
// name length, name, call count, value count, values; then the chunk count
// and dataset name.
func writeLegacyImatrix(entries []imatrixEntry, trailer bool) []byte {
	var b bytes.Buffer
	put := func(v int32) { binary.Write(&b, binary.LittleEndian, v) }
	put(int32(len(entries)))
	for _, e := range entries {
		put(int32(len(e.name)))
		b.WriteString(e.name)
		put(int32(e.counts[0]))
		put(int32(len(e.sums)))
		b.Write(bytesLE(e.sums))
	}
	if trailer {
		put(42)
		put(int32(len("calib.txt")))
		b.WriteString("calib.txt")
	}
	return b.Bytes()
}

func TestReadImatrixGGUF(t *testing.T) {
	entries := []imatrixEntry{
		{"blk.0.ffn_up.weight", []float32{3, 6, 9, 12}, []float32{3}},
		// Two experts; the second never saw input (count 0 -> weights 1).
		{"blk.0.ffn_up_exps.weight", []float32{2, 4, 5, 7}, []float32{2, 0}},
	}
	raw := writeGGUFImatrix(t, entries)
	m, err := ReadImatrix(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Legacy || m.ChunkCount != 7 || m.ChunkSize != 512 || len(m.Datasets) != 1 || m.Datasets[0] != "calib.txt" {
		t.Errorf("metadata: %+v", m)
	}
	check := func(name string, want []float32) {
		t.Helper()
		w, ok := m.Weights(name)
		if !ok {
			t.Fatalf("no weights for %s", name)
		}
		if d := diffFloats(w, want); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
	check("blk.0.ffn_up.weight", []float32{1, 2, 3, 4})
	check("blk.0.ffn_up_exps.weight", []float32{1, 2, 1, 1})
	if got := strings.Join(m.Names(), ","); got != "blk.0.ffn_up.weight,blk.0.ffn_up_exps.weight" {
		t.Errorf("Names = %s", got)
	}
	// The per-row division is float32, as llama-quantize does it.
	odd := []imatrixEntry{{"x.weight", []float32{1, 2}, []float32{3}}}
	raw = writeGGUFImatrix(t, odd)
	m, err = ReadImatrix(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := m.Weights("x.weight")
	if w[0] != float32(1)/float32(3) || w[1] != float32(2)/float32(3) {
		t.Errorf("weights %v", w)
	}
}

func TestReadImatrixLegacy(t *testing.T) {
	entries := []imatrixEntry{
		{"blk.0.attn_q.weight", []float32{4, 8, 12}, []float32{4}},
		{"blk.0.attn_k.weight", []float32{5, 6}, []float32{0}}, // ncall 0: values kept as they are
	}
	for _, trailer := range []bool{false, true} {
		raw := writeLegacyImatrix(entries, trailer)
		m, err := ReadImatrix(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if !m.Legacy {
			t.Error("not detected as legacy")
		}
		w, _ := m.Weights("blk.0.attn_q.weight")
		if d := diffFloats(w, []float32{1, 2, 3}); d != "" {
			t.Error(d)
		}
		w, _ = m.Weights("blk.0.attn_k.weight")
		if d := diffFloats(w, []float32{5, 6}); d != "" {
			t.Error(d)
		}
		if trailer && (m.ChunkCount != 42 || len(m.Datasets) != 1 || m.Datasets[0] != "calib.txt") {
			t.Errorf("trailer: %+v", m)
		}
	}
}

// TestReadImatrixHostile feeds truncated and lying files: every one must be
// an error, never a panic or a huge allocation.
func TestReadImatrixHostile(t *testing.T) {
	good := writeLegacyImatrix([]imatrixEntry{{"a.weight", []float32{1, 2}, []float32{1}}}, true)
	le32 := func(b []byte, off int, v int32) []byte {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(c[off:], uint32(v))
		return c
	}
	cases := map[string][]byte{
		"empty":            {},
		"zero entries":     le32(good, 0, 0),
		"huge entry count": le32(good, 0, math.MaxInt32),
		"negative name":    le32(good, 4, -1),
		"huge name":        le32(good, 4, math.MaxInt32),
		"zero values":      le32(good, 4+4+8+4, 0),
		"huge values":      le32(good, 4+4+8+4, math.MaxInt32),
		"huge dataset":     le32(good, len(good)-4-9, math.MaxInt32),
	}
	for n := 1; n < len(good); n++ {
		if n != len(good)-4-4-9 { // cutting exactly before the optional trailer is valid
			cases["truncated"+string(rune('A'+n%26))+string(rune('a'+n/26))] = good[:n]
		}
	}
	g := writeGGUFImatrix(t, []imatrixEntry{{"a.weight", []float32{1, 2}, []float32{1}}})
	gr, err := gguf.NewReader(bytes.NewReader(g), int64(len(g)))
	if err != nil {
		t.Fatal(err)
	}
	last := len(gr.Tensors) - 1
	dataEnd := int(gr.TensorFileOffset(last) + gr.Tensors[last].Size()) // the padding after it is optional
	for n := 4; n < dataEnd; n += 7 {
		cases["gguf truncated "+string(rune('a'+n%26))+string(rune('A'+n/26%26))] = g[:n]
	}
	for name, raw := range cases {
		if _, err := ReadImatrix(bytes.NewReader(raw), int64(len(raw))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestReadImatrixNonFinite: NaN, infinite or negative statistics, in either
// format, are an error naming the tensor.
func TestReadImatrixNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, bad := range []imatrixEntry{
		{"blk.0.attn_v.weight", []float32{1, nan}, []float32{1}},
		{"blk.0.attn_v.weight", []float32{inf, 1}, []float32{1}},
		{"blk.0.attn_v.weight", []float32{1, -2}, []float32{1}},
	} {
		entries := []imatrixEntry{{"blk.0.attn_q.weight", []float32{1, 2}, []float32{1}}, bad}
		raws := map[string][]byte{"gguf": writeGGUFImatrix(t, entries), "legacy": writeLegacyImatrix(entries, true)}
		for format, raw := range raws {
			_, err := ReadImatrix(bytes.NewReader(raw), int64(len(raw)))
			if err == nil || !strings.Contains(err.Error(), bad.name) {
				t.Errorf("%s %v: err %v, want one naming %s", format, bad.sums, err, bad.name)
			}
		}
	}
}

// TestImatrixInChoose: weights of the wrong size are an error except for the
// token embedding; a missing entry means no weights.
func TestImatrixInChoose(t *testing.T) {
	raw := writeLegacyImatrix([]imatrixEntry{
		{"blk.0.ffn_up.weight", make([]float32, 100), []float32{1}},
		{"token_embd.weight", make([]float32, 100), []float32{1}},
		{"blk.0.ffn_down.weight", make([]float32, 256), []float32{1}},
	}, false)
	m, err := ReadImatrix(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	f := &gguf.File{Metadata: &gguf.Metadata{}, Tensors: []gguf.TensorInfo{
		{Name: "blk.0.ffn_up.weight", Dims: []uint64{256, 4}, Type: gguf.TypeF32},
		{Name: "token_embd.weight", Dims: []uint64{256, 4}, Type: gguf.TypeF32},
		{Name: "blk.0.ffn_down.weight", Dims: []uint64{256, 4}, Type: gguf.TypeF32},
		{Name: "blk.0.ffn_gate.weight", Dims: []uint64{256, 4}, Type: gguf.TypeF32},
	}}
	r := &Rules{Default: gguf.TypeIQ2_XS, Pure: true, Imatrix: m}
	if _, err := r.Choose(f, &f.Tensors[0]); err == nil {
		t.Error("imatrix of the wrong size accepted")
	}
	for _, i := range []int{1, 2} {
		if _, err := r.Choose(f, &f.Tensors[i]); err != nil {
			t.Errorf("%s: %v", f.Tensors[i].Name, err)
		}
	}
	if _, err := r.Choose(f, &f.Tensors[3]); err == nil {
		t.Error("IQ2_XS without weights for the tensor accepted")
	}
}
