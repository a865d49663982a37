package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the shared folder: $GGUF_SHARED if set,
// else ../shared relative to the repository root (the folder with go.mod).
func Dir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("GGUF_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(s); err != nil {
				tb.Fatalf("reference data not found at %s (set GGUF_SHARED): %v", s, err)
			}
			return s
		}
		if filepath.Dir(d) == d {
			tb.Fatal("repository root (go.mod) not found above " + wd)
		}
	}
}

// Path returns the path of a file under the shared folder, failing the test
// when it does not exist: missing reference data is an error, not a skip.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{Dir(tb)}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("reference file missing: %v", err)
	}
	return p
}

// Read returns the bytes of a file under the shared folder, failing the
// test when it cannot be read.
func Read(tb testing.TB, rel ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, rel...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Glob returns the shared files matching pattern (relative to the shared
// folder), failing the test when none match.
func Glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(Dir(tb), pattern))
	if err != nil || len(m) == 0 {
		tb.Fatalf("no reference files match %s", pattern)
	}
	return m
}
