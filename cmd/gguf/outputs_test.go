package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
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
	writeXLMoE(t, dir)
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

// recipeDir writes the stories260k-q8 CI recipe into a new directory, its
// model input next to it as model.gguf, and makes it the working
// directory (where output.name is written).
func recipeDir(t *testing.T) (dir string, recipe []byte) {
	t.Helper()
	model, err := os.ReadFile(shared.Path(t, "models", "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	recipe, err = os.ReadFile("../../recipes/ci/stories260k-q8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	recipe = regexp.MustCompile(`source: \S+`).ReplaceAll(recipe, []byte("source: model.gguf"))
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "model.gguf"), model, 0o644)
	t.Chdir(dir)
	return dir, recipe
}

// withOutputName returns the recipe with output.name set to name.
func withOutputName(recipe []byte, name string) []byte {
	return regexp.MustCompile(`(?m)^  name: .*$`).ReplaceAll(recipe, []byte("  name: "+name))
}

// TestRecipeOutputName: a recipe's output.name never replaces a hidden
// file, the recipe or its input (not even with --force, nor with -o under
// another spelling), nor any existing file unless --force or -o names it.
func TestRecipeOutputName(t *testing.T) {
	dir, recipe := recipeDir(t)
	os.WriteFile("recipe.yaml", recipe, 0o644)
	mustRun(t, nil, "recipe", "run", "recipe.yaml", "-q")
	want, err := os.ReadFile("stories260k-q8.gguf")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove("stories260k-q8.gguf")
	os.WriteFile(".bashrc", []byte("alias ls=ls\n"), 0o644)
	os.WriteFile("existing.gguf", []byte("mine"), 0o644)
	os.Symlink("model.gguf", "link.gguf")
	os.Link("model.gguf", "hard.gguf")
	for _, name := range []string{".bashrc", "recipe.yaml", "model.gguf", "existing.gguf"} {
		os.WriteFile("r-"+name+".yaml", withOutputName(recipe, name), 0o644)
	}
	os.WriteFile("self.yaml", withOutputName(recipe, "self.yaml"), 0o644)
	before := fileSums(t, dir)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"r-.bashrc.yaml"}, "hidden name"},
		{[]string{"r-.bashrc.yaml", "--force"}, "hidden name"},
		{[]string{"self.yaml", "--force"}, "self.yaml: is an input of this run"},
		{[]string{"r-recipe.yaml.yaml"}, "recipe.yaml: exists, and is the recipe's output.name"},
		{[]string{"r-model.gguf.yaml", "--force"}, "model.gguf: is an input of this run"},
		{[]string{"recipe.yaml", "-o", "link.gguf"}, "an input of this run"},
		{[]string{"recipe.yaml", "-o", "hard.gguf", "--force"}, "an input of this run"},
		{[]string{"recipe.yaml", "-o", "./recipe.yaml"}, "an input of this run"},
		{[]string{"r-existing.gguf.yaml"}, "existing.gguf: exists, and is the recipe's output.name, not a name given with -o (--force replaces it)"},
	} {
		checkOneLineError(t, runGGUF(t, nil, append([]string{"recipe", "run", "-q"}, c.args...)...), exitUsage, c.msg)
	}
	if after := fileSums(t, dir); len(after) != len(before) {
		t.Errorf("%d files, were %d", len(after), len(before))
	} else {
		for name, b := range before {
			if after[name] != b {
				t.Errorf("%s changed", name)
			}
		}
	}
	// A name given with -o is replaced; output.name with --force.
	mustRun(t, nil, "recipe", "run", "-q", "r-existing.gguf.yaml", "-o", "existing.gguf")
	if b, _ := os.ReadFile("existing.gguf"); !bytes.Equal(b, want) {
		t.Error("-o existing.gguf does not hold the output")
	}
	os.WriteFile("existing.gguf", []byte("mine"), 0o644)
	mustRun(t, nil, "recipe", "run", "-q", "r-existing.gguf.yaml", "--force")
	if b, _ := os.ReadFile("existing.gguf"); !bytes.Equal(b, want) {
		t.Error("--force did not replace existing.gguf with the output")
	}
}

// TestRecipeStreamOutput: stdout and a FIFO get a recipe's output only
// once its sha256 is checked: a run whose output differs from the recipe's
// exits 1 having sent nothing; one that matches sends the file's bytes.
func TestRecipeStreamOutput(t *testing.T) {
	dir, recipe := recipeDir(t)
	os.WriteFile("good.yaml", recipe, 0o644)
	bad := regexp.MustCompile(`(?m)^(  sha256: )[0-9a-f]{64}$`).ReplaceAll(recipe, []byte("${1}"+strings.Repeat("1", 64)))
	os.WriteFile("bad.yaml", bad, 0o644)
	mustRun(t, nil, "recipe", "run", "good.yaml", "-q", "-o", "want.gguf")
	want, _ := os.ReadFile("want.gguf")

	r := runGGUF(t, nil, "recipe", "run", "bad.yaml", "-q", "-o", "-")
	checkOneLineError(t, r, exitFound, "expected 1111")
	if len(r.stdout) != 0 {
		t.Errorf("-o - got %d bytes of an output that failed its check", len(r.stdout))
	}
	if r := mustRun(t, nil, "recipe", "run", "good.yaml", "-q", "-o", "-"); !bytes.Equal(r.stdout, want) {
		t.Errorf("-o - got %d bytes, want the file's %d", len(r.stdout), len(want))
	}
	checkOneLineError(t, runGGUF(t, nil, "recipe", "run", "good.yaml", "-o", "-", "--json"), exitUsage, "both write stdout")

	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		recipe string
		code   int
		want   []byte
	}{{"bad.yaml", exitFound, nil}, {"good.yaml", 0, want}} {
		got := readFIFO(fifo)
		if r := runGGUF(t, nil, "recipe", "run", c.recipe, "-q", "-o", fifo); r.code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.recipe, r.code, c.code, r.stderr)
		}
		select {
		case b := <-got:
			if !bytes.Equal(b, c.want) {
				t.Errorf("%s: the FIFO's reader got %d bytes, want %d", c.recipe, len(b), len(c.want))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the FIFO was never opened")
		}
	}
}
