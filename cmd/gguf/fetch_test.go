package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// TestFetchLocal: fetch keeps all metadata and exactly the selected
// tensors, in order, byte for byte; with no filter it copies the file.
func TestFetchLocal(t *testing.T) {
	t.Parallel()
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q4_K.gguf")
	src := testfiles.Reader(t, path)
	dir := t.TempDir()
	for _, c := range []struct{ tensors, exclude string }{
		{`attn_(q|k)\.`, ""},
		{"", `^blk\.[12]\.`},
		{`^blk\.`, `norm`},
	} {
		out := filepath.Join(dir, "sub.gguf")
		args := []string{"fetch", path, "-o", out}
		if c.tensors != "" {
			args = append(args, "--tensors", c.tensors)
		}
		if c.exclude != "" {
			args = append(args, "--exclude", c.exclude)
		}
		mustRun(t, nil, args...)
		got := testfiles.Reader(t, out)
		inc, exc := regexp.MustCompile(c.tensors), regexp.MustCompile(c.exclude)
		j := 0
		for i, ti := range src.Tensors {
			if !inc.MatchString(ti.Name) || (c.exclude != "" && exc.MatchString(ti.Name)) {
				continue
			}
			if j >= len(got.Tensors) || got.Tensors[j].Name != ti.Name {
				t.Fatalf("%+v: tensor %d is not %s", c, j, ti.Name)
			}
			a, _ := io.ReadAll(src.TensorData(i))
			b, _ := io.ReadAll(got.TensorData(j))
			if !bytes.Equal(a, b) {
				t.Fatalf("%+v: %s differs", c, ti.Name)
			}
			j++
		}
		if j != len(got.Tensors) || j == 0 {
			t.Errorf("%+v: %d tensors written, %d selected", c, len(got.Tensors), j)
		}
		for k, kv := range src.Metadata.KVs() {
			if w := got.Metadata.KVs()[k]; w.Key != kv.Key || !w.Value.Equal(kv.Value) {
				t.Fatalf("%+v: key %s differs", c, kv.Key)
			}
		}
	}
	all := filepath.Join(dir, "all.gguf")
	mustRun(t, nil, "fetch", path, "-o", all)
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(all)
	if !bytes.Equal(a, b) {
		t.Error("fetch with no filter is not a copy")
	}
	checkOneLineError(t, runGGUF(t, nil, "fetch", path, "--tensors", "nothing-matches", "-o", all), exitUsage, "no tensor")
	checkOneLineError(t, runGGUF(t, nil, "fetch", path, "--exclude", "(", "-o", all), exitUsage, "--exclude")
	checkOneLineError(t, runGGUF(t, nil, "fetch", path), exitUsage, "-o")
}
