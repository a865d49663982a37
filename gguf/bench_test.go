package gguf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
)

// BenchmarkParseHeader decodes the header of each vocab file from memory
// (1-4 MB of tokenizer arrays each). Reported: ms per parse and MB/s.
func BenchmarkParseHeader(b *testing.B) {
	for _, path := range shared.Glob(b, "models/vocab/*.gguf") {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(path), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := gguf.NewReader(bytes.NewReader(data), int64(len(data))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
