package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func names(t *testing.T, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestCommitAndAbort: nothing is visible under the final name before
// Commit; Abort leaves nothing at all; Commit replaces an existing file.
func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.gguf")
	os.WriteFile(final, []byte("old"), 0o644)

	o, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("partial"))
	if got, _ := os.ReadFile(final); string(got) != "old" {
		t.Fatalf("final name changed before commit: %q", got)
	}
	o.Abort()
	if n := names(t, dir); len(n) != 1 || n[0] != "out.gguf" {
		t.Fatalf("after abort: %v", n)
	}

	o, err = Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte(strings.Repeat("x", 3<<20)))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	o.Abort() // after commit: no effect
	got, _ := os.ReadFile(final)
	if len(got) != 3<<20 {
		t.Fatalf("committed %d bytes", len(got))
	}
	st, _ := os.Stat(final)
	if st.Mode().Perm()&0o044 == 0 {
		t.Errorf("output mode %v is not readable by others", st.Mode())
	}
	if n := names(t, dir); len(n) != 1 {
		t.Fatalf("leftovers: %v", n)
	}
}

func TestRemoveAll(t *testing.T) {
	dir := t.TempDir()
	o, err := Create(filepath.Join(dir, "a.gguf"), false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("x"))
	RemoveAll()
	if err := o.Commit(); err == nil {
		t.Error("commit after RemoveAll succeeded")
	}
	if n := names(t, dir); len(n) != 0 {
		t.Fatalf("leftovers: %v", n)
	}
}

func TestCreateDirectory(t *testing.T) {
	if _, err := Create(t.TempDir(), false); err == nil {
		t.Fatal("a directory accepted as output")
	}
}
