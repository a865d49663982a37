package safetensors

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// file returns a safetensors file of a header and data bytes.
func file(hdr string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	return append(append(b, hdr...), make([]byte, data)...)
}

// TestRoundTrip: what Write writes, Parse reads back: names, dtypes,
// shapes, absolute offsets in data order, metadata, and the bytes there.
func TestRoundTrip(t *testing.T) {
	ts := []WriteTensor{
		{Name: "b", DType: "BF16", Shape: []int64{2, 3}, Data: []byte("0123456789ab")},
		{Name: "a", DType: "F32", Shape: []int64{1}, Data: []byte("wxyz")},
		{Name: "s", DType: "U8", Shape: []int64{}, Data: []byte("!")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, map[string]string{"format": "pt"}, ts); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f, err := Parse(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if f.DataOffset%8 != 0 || f.Metadata["format"] != "pt" || len(f.Tensors) != 3 {
		t.Fatalf("data offset %d, metadata %v, %d tensors", f.DataOffset, f.Metadata, len(f.Tensors))
	}
	for i, w := range ts {
		g := f.Tensors[i]
		if g.Name != w.Name || g.DType != w.DType || len(g.Shape) != len(w.Shape) || g.Elements()*ElemSize(g.DType) != g.Len {
			t.Fatalf("tensor %d: %+v, wrote %+v", i, g, w)
		}
		if got := b[g.Off : g.Off+g.Len]; !bytes.Equal(got, w.Data) {
			t.Fatalf("%s: %q, wrote %q", g.Name, got, w.Data)
		}
	}
	if _, ok := f.Tensor("a"); !ok {
		t.Fatal("no tensor a")
	}
}

// TestBadHeaders: each malformed file gives an error naming what is wrong.
func TestBadHeaders(t *testing.T) {
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "too short"},
		{"huge header", huge, "over the format's limit"},
		{"header past end", binary.LittleEndian.AppendUint64(nil, 100), "past the end"},
		{"not json", file("nope", 0), "not a JSON object"},
		{"array", file("[1]", 0), "not a JSON object"},
		{"truncated json", file(`{"a":`, 0), "header"},
		{"unknown dtype", file(`{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}`, 1), "unknown dtype"},
		{"missing offsets", file(`{"a":{"dtype":"U8","shape":[1]}}`, 1), "want dtype"},
		{"offsets past data", file(`{"a":{"dtype":"U8","shape":[9],"data_offsets":[0,9]}}`, 4), "within the 4 bytes"},
		{"reversed offsets", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}`, 4), "data_offsets"},
		{"negative dim", file(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`, 0), "negative"},
		{"overflow", file(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0), "int64"},
		{"size mismatch", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4), "is 8 bytes"},
		{"gap", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2), "tile"},
		{"overlap", file(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2), "tile"},
		{"trailing data", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, 2), "the data at 2"},
		{"bad metadata", file(`{"__metadata__":{"a":1}}`, 0), "__metadata__"},
		{"float offset", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0.5,1]}}`, 1), "tensor \"a\""},
	}
	for _, c := range cases {
		_, err := Parse(bytes.NewReader(c.b), int64(len(c.b)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// FuzzParse: no input panics, and whatever parses has tensors inside the
// file that tile its data.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, map[string]string{"k": "v"}, []WriteTensor{{Name: "w", DType: "BF16", Shape: []int64{2, 2}, Data: make([]byte, 8)}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, 1))
	f.Add(file(`{}`, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		end := st.DataOffset
		for _, x := range st.Tensors {
			if x.Off != end || x.Len < 0 || x.Elements()*ElemSize(x.DType) != x.Len {
				t.Fatalf("tensor %+v at %d", x, end)
			}
			end += x.Len
		}
		if end != int64(len(b)) {
			t.Fatalf("tensors end at %d of %d", end, len(b))
		}
	})
}

// TestParseIndex: a transformers index gives its weight_map; a shard
// outside the index's directory, no weight_map or bad JSON are errors.
func TestParseIndex(t *testing.T) {
	m, err := ParseIndex(strings.NewReader(`{"metadata":{"total_size":8},"weight_map":{"mtp.fc.weight":"model-00002-of-00002.safetensors","lm_head.weight":"model-00001-of-00002.safetensors"}}`))
	if err != nil || len(m) != 2 || m["mtp.fc.weight"] != "model-00002-of-00002.safetensors" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{`{"weight_map":{"a":"../x.safetensors"}}`, `{"metadata":{}}`, `{"weight_map":`, `{"weight_map":{"a":""}}`} {
		if _, err := ParseIndex(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
