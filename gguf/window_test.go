package gguf_test

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/headergen"
	"github.com/ggufkit/gguf/internal/shared"
)

// countingReaderAt counts the reads of a header: over the network each is
// one request.
type countingReaderAt struct {
	r            io.ReaderAt
	mu           sync.Mutex
	reads, bytes int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.reads++
	c.bytes += int64(len(p))
	c.mu.Unlock()
	return c.r.ReadAt(p, off)
}

// checkHeaderCost decodes a header through a counter and checks the remote
// budget: at most maxReads reads (3 for all but headergen.BeyondLimit: with
// the resolve, 4 requests) and at most 1.25 x the header size + 1 MiB read.
func checkHeaderCost(t *testing.T, name string, r io.ReaderAt, size, wantHeader int64, maxReads int64) {
	t.Helper()
	c := &countingReaderAt{r: r}
	f, err := gguf.NewReader(c, size)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if wantHeader >= 0 && f.HeaderSize != wantHeader {
		t.Errorf("%s: header size %d, generated %d", name, f.HeaderSize, wantHeader)
	}
	budget := f.HeaderSize + f.HeaderSize/4 + 1<<20
	t.Logf("%-32s header %9d bytes: %d reads, %9d bytes read (%.3f x header; budget %d)",
		name, f.HeaderSize, c.reads, c.bytes, float64(c.bytes)/float64(f.HeaderSize), budget)
	if c.reads > maxReads {
		t.Errorf("%s: %d reads for a %d-byte header, want at most %d", name, c.reads, f.HeaderSize, maxReads)
	}
	if c.bytes > budget {
		t.Errorf("%s: read %d bytes for a %d-byte header, budget %d", name, c.bytes, f.HeaderSize, budget)
	}
}

// TestHeaderReadCostGenerated: headers from a few hundred bytes to 12 MB,
// shaped like real tokenizers and like unusual files.
func TestHeaderReadCostGenerated(t *testing.T) {
	for _, s := range headergen.Specs() {
		f, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		checkHeaderCost(t, s.Name, f, f.Size, f.HeaderSize, 3)
	}
	// Where 3 reads are impossible, the bytes still keep to the budget.
	for _, s := range headergen.BeyondLimit() {
		f, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		checkHeaderCost(t, s.Name, f, f.Size, f.HeaderSize, 5)
	}
}

// TestHeaderReadCostRealFiles: every GGUF file of the reference data.
func TestHeaderReadCostRealFiles(t *testing.T) {
	var paths []string
	for _, pat := range []string{"models/*.gguf", "models/vocab/*.gguf", "refdata/*/*.gguf", "refdata/*/models/*.gguf"} {
		paths = append(paths, shared.Glob(t, pat)...)
	}
	if len(paths) < 15 {
		t.Fatalf("found only %d reference GGUF files", len(paths))
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		checkHeaderCost(t, filepath.Base(p), f, st.Size(), -1, 3)
		// The vocab files are only a header: reads stop at their end. Served
		// with 32 MiB more behind them, as if weights followed, the reads
		// are sized by the estimates alone.
		checkHeaderCost(t, filepath.Base(p)+"+tail", zeroTail{f, st.Size()}, st.Size()+32<<20, -1, 3)
		f.Close()
	}
}

// zeroTail is a file followed by zeros.
type zeroTail struct {
	r    io.ReaderAt
	size int64
}

func (z zeroTail) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < z.size {
		k, err := z.r.ReadAt(p[:min(int64(len(p)), z.size-off)], off)
		if err != nil && err != io.EOF {
			return k, err
		}
		n = k
	}
	clear(p[n:])
	return len(p), nil
}
