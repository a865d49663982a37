package testfiles

import (
	"os"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// Open opens a file, closed when the test ends, and returns it with its size.
func Open(tb testing.TB, path string) (*os.File, int64) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return f, st.Size()
}

// Reader decodes the GGUF file at path.
func Reader(tb testing.TB, path string) *gguf.Reader {
	tb.Helper()
	f, size := Open(tb, path)
	r, err := gguf.NewReader(f, size)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Content serves the file at path from a hubtest.Server.
func Content(tb testing.TB, path string) hubtest.Content {
	tb.Helper()
	f, size := Open(tb, path)
	return hubtest.Content{R: f, Size: size}
}

// Hub starts a loopback Hub serving files (repo path -> content) in repo
// at main, stopped when the test ends.
func Hub(tb testing.TB, opts hubtest.Options, repo string, files map[string]hubtest.Content) *hubtest.Server {
	tb.Helper()
	s, err := hubtest.NewServer("", opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	if files != nil {
		if _, err := s.Commit(repo, "main", files); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}
