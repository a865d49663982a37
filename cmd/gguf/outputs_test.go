package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/fixture"
)

// fileSums reads every regular file of dir, by name.
func fileSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		if e.Type().IsRegular() {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out[e.Name()] = string(b)
		}
	}
	return out
}

// TestTraceOutput: --moe-trace is an output like any other. It never
// replaces an input of the run, however spelled (the model it maps, through
// a symlink or a hard link; run's -f prompt; perplexity's -f text), and
// leaves it whole with a one-line error; a file that is not a trace is
// refused unless --force; a trace is replaced; nothing else is left in the
// directory.
func TestTraceOutput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	m := fixture.Named["ci-moe"]
	m.Experts, m.ExpertsUsed = 8, 2
	if err := os.WriteFile(p("moe.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "build", p("moe.gguf"), "--experts-last", "-o", p("xl.gguf"))
	os.Remove(p("moe.gguf"))
	os.Symlink("xl.gguf", p("link.gguf"))
	if err := os.Link(p("xl.gguf"), p("hard.gguf")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("prompt.txt"), []byte("t1 t2 t3"), 0o644)
	var words strings.Builder
	for i := range 100 {
		words.WriteString(fixture.Word(1+(i*7)%40) + " ")
	}
	os.WriteFile(p("text.txt"), []byte(words.String()), 0o644)
	os.WriteFile(p("notes.txt"), []byte("my notes\n"), 0o644)
	before := fileSums(t, dir)

	run := func(extra ...string) []string {
		return append([]string{"run", p("xl.gguf"), "-n", "4", "--temp", "0", "-t", "1", "--moe-pool", "3"}, extra...)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{run("--moe-trace", p("xl.gguf")), "an input of this run"},
		{run("--moe-trace", p("link.gguf")), "an input of this run"},
		{run("--moe-trace", p("hard.gguf")), "an input of this run"},
		{run("--moe-trace", p("hard.gguf"), "--force"), "an input of this run"},
		{run("-f", p("prompt.txt"), "--moe-trace", p("prompt.txt")), "an input of this run"},
		{[]string{"perplexity", p("xl.gguf"), "-f", p("text.txt"), "--ctx", "16", "--moe-trace", p("text.txt")}, "an input of this run"},
		{run("--moe-trace", p("notes.txt")), "not a gguf moe trace (--force replaces it)"},
		{run("--moe-trace", "-"), "--moe-trace -"},
	} {
		checkOneLineError(t, runGGUF(t, nil, c.args...), exitUsage, c.msg)
	}
	if after := fileSums(t, dir); len(after) != len(before) {
		t.Errorf("files %d, were %d", len(after), len(before))
	} else {
		for name, b := range before {
			if after[name] != b {
				t.Errorf("%s changed: %d bytes, were %d", name, len(after[name]), len(b))
			}
		}
	}

	mustRun(t, nil, run("-p", "t1 t2", "--moe-trace", p("run.trace"))...)
	first, _ := os.ReadFile(p("run.trace"))
	mustRun(t, nil, run("-p", "t3 t1 t2 t3", "--moe-trace", p("run.trace"))...)
	second, _ := os.ReadFile(p("run.trace"))
	if !bytes.HasPrefix(second, []byte("# gguf moe trace v1\n")) || bytes.Equal(first, second) {
		t.Errorf("a trace was not replaced by the next run's:\n%s\n%s", first, second)
	}
	mustRun(t, nil, run("-p", "t1", "--moe-trace", p("notes.txt"), "--force")...)
	if b, _ := os.ReadFile(p("notes.txt")); !bytes.HasPrefix(b, []byte("# gguf moe trace v1\n")) {
		t.Errorf("--force did not replace the notes with a trace: %q", b)
	}
	if n := len(fileSums(t, dir)); n != len(before)+1 {
		t.Errorf("%d files in the directory, want %d (leftovers?)", n, len(before)+1)
	}
}
