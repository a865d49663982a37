package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// TestSplitCLI: --split-max-size writes llama-gguf-split's files, the first
// opens as the whole model, and what cannot work is refused in one line.
func TestSplitCLI(t *testing.T) {
	t.Parallel()
	path := shared.Path(t, "models", "stories260K-f32.gguf")
	dir := t.TempDir()
	out := filepath.Join(dir, "s.gguf")
	r := mustRun(t, nil, "build", path, "--split-max-size", "1M", "-o", out)
	first, second := filepath.Join(dir, "s-00001-of-00002.gguf"), filepath.Join(dir, "s-00002-of-00002.gguf")
	for _, f := range []string{first, second} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v\n%s", err, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the output directory, want 2", len(entries))
	}
	// Merging gives back every tensor: same data, and the only metadata
	// differences are llama-gguf-split --merge's three keys.
	merged := filepath.Join(dir, "merged.gguf")
	mustRun(t, nil, "build", first, "-o", merged)
	r = runGGUF(t, nil, "diff", path, merged)
	if r.code != exitFound || bytes.Count(r.stdout, []byte("+ key split.")) != 3 || bytes.Contains(r.stdout, []byte(" tensor ")) {
		t.Errorf("diff original merged: exit %d\n%s", r.code, r.stdout)
	}
	checkOneLineError(t, runGGUF(t, nil, "info", second), exitUsage, "open the first one, ")
	checkOneLineError(t, runGGUF(t, nil, "build", path, "--split-max-size", "1K", "-o", out), exitUsage, "--split-max-size")
	checkOneLineError(t, runGGUF(t, nil, "build", path, "--split-max-size", "1M", "-o", "-"), exitUsage, "give -o a path")
}
