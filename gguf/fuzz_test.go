package gguf_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// FuzzReader feeds arbitrary bytes to both readers (see checkReaders).
// Seeds are at most 256 bytes: an input that gains coverage is minimized
// first, in time quadratic in its length (the whole -fuzzminimizetime, a
// minute, for a mutation of a seed of a few KB, during which nothing is
// fuzzed). They are small files
// covering every value type, array nesting, both versions and several
// tensor types and shapes, every malformed file, and the first 128 bytes
// of every real GGUF file in the reference data. TestReadersOnWholeFiles
// checks the same properties on the generated models and the real files,
// whole.
func FuzzReader(f *testing.F) {
	for _, data := range fuzzSeeds(f) {
		f.Add(data)
	}
	for _, m := range fixture.MalformedFiles() {
		f.Add(m.Data)
	}
	for path := range realFiles(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 128)])
	}
	f.Fuzz(checkReaders)
}

// fuzzSeeds returns small valid files.
func fuzzSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "u8", Value: gguf.Uint8(7)}, {Key: "i8", Value: gguf.Int8(-7)},
		{Key: "u16", Value: gguf.Uint16(700)}, {Key: "i16", Value: gguf.Int16(-700)},
		{Key: "u32", Value: gguf.Uint32(70000)}, {Key: "i32", Value: gguf.Int32(-70000)},
		{Key: "u64", Value: gguf.Uint64(1 << 40)}, {Key: "i64", Value: gguf.Int64(-1 << 40)},
		{Key: "f32", Value: gguf.Float32(0.5)}, {Key: "f64", Value: gguf.Float64(-0.25)},
		{Key: "b", Value: gguf.Bool(true)},
		{Key: "tokens", Value: gguf.MustArray([]string{"<s>", "a", ""})},
		{Key: "ids", Value: gguf.MustArray([]int32{1, -2, 3})},
		{Key: "nested", Value: gguf.MustArray([]gguf.Value{gguf.MustArray([]uint8{1, 2}), gguf.MustArray([]bool{false})})},
	}
	tensors := []gguf.TensorInfo{
		{Name: "a", Dims: []uint64{4}, Type: gguf.TypeF32},
		{Name: "b", Dims: []uint64{32, 1}, Type: gguf.TypeQ8_0},
		{Name: "c", Dims: []uint64{2, 1, 2}, Type: gguf.TypeF16},
	}
	align := gguf.KV{Key: gguf.KeyAlignment, Value: gguf.Uint32(8)}
	var seeds [][]byte
	for _, c := range []struct {
		version uint32
		kvs     []gguf.KV
		tensors []gguf.TensorInfo
	}{
		{3, kvs[:1], tensors[:1]},
		{3, kvs[1:5], nil},
		{3, kvs[5:9], nil},
		{3, kvs[9:12], nil},
		{3, kvs[12:14], nil},
		{3, kvs[14:], nil},
		{3, []gguf.KV{align}, tensors},
		{2, kvs[11:12], tensors[1:2]},
		{3, nil, tensors[2:]},
	} {
		md, err := gguf.NewMetadata(c.kvs...)
		if err != nil {
			tb.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := gguf.NewWriter(&buf, c.version, md, c.tensors)
		if err != nil {
			tb.Fatal(err)
		}
		for i, t := range c.tensors {
			if _, err := w.Write(bytes.Repeat([]byte{byte(0x11 * (i + 1))}, int(t.Size()))); err != nil {
				tb.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	return seeds
}

// checkReaders: the readers must never panic on data; what the
// random-access reader accepts must describe bytes that exist, survive a
// rewrite unchanged, and be accepted by the stream reader too.
func checkReaders(t *testing.T, data []byte) {
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	sr, serr := gguf.NewStreamReader(bytes.NewReader(data))
	if err != nil {
		return
	}
	if serr != nil {
		t.Fatalf("stream reader refused what the random-access reader accepted: %v", serr)
	}
	// Without tensors the data offset depends on the file size, which a
	// stream does not know; otherwise both readers must agree.
	if len(sr.Tensors) != len(r.Tensors) || (len(r.Tensors) > 0 && sr.DataOffset != r.DataOffset) {
		t.Fatal("readers disagree")
	}
	for i := range r.Tensors {
		if end := r.TensorFileOffset(i) + r.Tensors[i].Size(); end > int64(len(data)) {
			t.Fatalf("tensor %d ends at %d, past the file's %d bytes", i, end, len(data))
		}
	}
	var out bytes.Buffer
	gw, err := gguf.NewWriter(&out, r.Version, r.Metadata, r.Tensors)
	if err != nil {
		t.Fatalf("accepted file cannot be rewritten: %v", err)
	}
	for i := range r.Tensors {
		if _, err := io.Copy(gw, r.TensorData(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := gguf.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatalf("rewrite does not parse: %v", err)
	}
	if r2.Metadata.Len() != r.Metadata.Len() || len(r2.Tensors) != len(r.Tensors) {
		t.Fatal("rewrite lost content")
	}
	for i, kv := range r.Metadata.KVs() {
		if kv2 := r2.Metadata.KVs()[i]; kv2.Key != kv.Key || !kv2.Value.Equal(kv.Value) {
			t.Fatalf("key %q changed in the rewrite", kv.Key)
		}
	}
}

// TestReadersOnWholeFiles checks what FuzzReader checks on inputs too big
// to be fuzz seeds (the generated models and every real GGUF file in the
// reference data, whole), and that the seeds are valid files, so that
// fuzzing starts from files the readers accept.
func TestReadersOnWholeFiles(t *testing.T) {
	accepted := func(t *testing.T, data []byte) {
		t.Helper()
		if _, err := gguf.NewReader(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatalf("refused, so the checks would pass vacuously: %v", err)
		}
	}
	for i, data := range fuzzSeeds(t) {
		t.Run(fmt.Sprintf("seed-%d", i), func(t *testing.T) {
			if len(data) > 256 {
				t.Errorf("seed of %d bytes: minimizing its mutations would stall fuzzing", len(data))
			}
			accepted(t, data)
			checkReaders(t, data)
		})
	}
	for _, m := range []fixture.Model{fixture.Dense(), fixture.MoE()} {
		t.Run(m.Name, func(t *testing.T) {
			data := m.Build()
			accepted(t, data)
			checkReaders(t, data)
		})
	}
	for path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			accepted(t, data)
			checkReaders(t, data)
		})
	}
}
