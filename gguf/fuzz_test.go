package gguf_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// FuzzReader feeds arbitrary bytes to both readers. They must never panic;
// what the random-access reader accepts must describe bytes that exist,
// survive a rewrite unchanged, and be accepted by the stream reader too.
// Seeds: the generated fixtures, every malformed file, and the start of
// every real GGUF file in the reference data.
func FuzzReader(f *testing.F) {
	for _, m := range []fixture.Model{fixture.Dense(), fixture.MoE()} {
		f.Add(m.Build())
	}
	for _, m := range fixture.MalformedFiles() {
		f.Add(m.Data)
	}
	for path := range realFiles(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 8<<10)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
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
	})
}
