package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// TestOutputNotRegular: -o into a FIFO streams the build in order, also
// when a file output would be written at offsets (a piped source with
// tensors reordered); the FIFO stays a FIFO. -o through a symlink replaces
// the link's target and keeps the link.
func TestOutputNotRegular(t *testing.T) {
	dir := t.TempDir()
	data := fixture.MoE().Build()
	model := filepath.Join(dir, "moe.gguf")
	os.WriteFile(model, data, 0o644)
	want := filepath.Join(dir, "want.gguf")
	mustRun(t, nil, "build", model, "--experts-last", "-o", want)
	wantBytes, _ := os.ReadFile(want)

	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	mustRun(t, bytes.NewReader(data), "build", "-", "--experts-last", "-o", fifo)
	select {
	case b := <-got:
		if !bytes.Equal(b, wantBytes) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of -o FILE", len(b), len(wantBytes))
		}
	case <-time.After(30 * time.Second):
		t.Error("the FIFO was never written")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}

	target := filepath.Join(dir, "target.gguf")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.gguf")
	os.Symlink("target.gguf", link)
	mustRun(t, nil, "quantize", model, link, "--type", "Q8_0")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	mustRun(t, nil, "quantize", model, filepath.Join(dir, "direct.gguf"), "--type", "Q8_0")
	a, _ := os.ReadFile(target)
	b, _ := os.ReadFile(filepath.Join(dir, "direct.gguf"))
	if !bytes.Equal(a, b) {
		t.Error("the symlink's target does not hold the output")
	}
}

// denseModel writes the dense fixture (an untied head) into dir.
func denseModel(t *testing.T, dir string) string {
	p := filepath.Join(dir, "dense.gguf")
	if err := os.WriteFile(p, fixture.Dense().Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUsageRefusals: every flag given a value it cannot mean, an empty id
// list, a head option without a head, a type llama-quantize refuses without
// an importance matrix, an unknown subcommand or flag: exit 2, one line,
// saying what.
func TestUsageRefusals(t *testing.T) {
	dir := t.TempDir()
	model := denseModel(t, dir)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# only a comment\n\n"), 0o644)
	ids := writeIDs(t, dir, "ids.txt", 5, 6, 7)
	out := filepath.Join(dir, "out.gguf")
	for _, c := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"build", model, "--head-ids", empty, "-o", out}, "no ids"},
		{[]string{"build", model, "--head-ids", ids, "--head-rows", "-5", "-o", out}, "--head-rows -5: must be at least 1"},
		{[]string{"build", model, "--head-ids", ids, "--head-rows", "0", "-o", out}, "--head-rows 0: must be at least 1"},
		{[]string{"build", model, "--head-ids", ids, "--head-pad", "-8", "-o", out}, "--head-pad -8"},
		{[]string{"build", model, "--head-ids", ids, "--head-pad", "0", "-o", out}, "--head-pad 0"},
		{[]string{"build", model, "--head-pad", "16", "-o", out}, "--head-pad needs --head-ids"},
		{[]string{"build", model, "--head-rows", "16", "-o", out}, "--head-rows needs --head-ids"},
		{[]string{"build", model, "--align", "0", "-o", out}, "--align 0"},
		{[]string{"build", model, "--align", "48", "-o", out}, "not a power of two"},
		{[]string{"quantize", model, out, "--type", "Q8_0", "-t", "-1"}, "--threads -1"},
		{[]string{"run", model, "--top-p", "2"}, "--top-p 2: must be between 0 and 1"},
		{[]string{"quantize", model, out, "--type", "IQ2_XXS"}, "needs an importance matrix"},
		{[]string{"quantize", model, out, "--type", "q2_k_s"}, "needs an importance matrix"},
		{[]string{"build", model, "--set", "general.architecture=u32:5", "-o", out}, "general.architecture: llama.cpp reads it as str, not u32"},
		{[]string{"build", model, "--set", "tokenizer.ggml.tokens=str:x", "-o", out}, "as arr[str], not str"},
		{[]string{"build", model, "--set", "llama.context_length=u64:8", "-o", out}, "as u32, not u64"},
		{[]string{"build", model, "--del", "general.architecture", "-o", out}, "cannot load a file without it"},
		{[]string{"vocab", "frob"}, `unknown command "frob" for "gguf vocab"`},
		{[]string{"vocab", "cont"}, `did you mean "count"?`},
		{[]string{"bild", model}, `did you mean "build"?`},
		{[]string{"build", model, "--hed-ids", ids}, "did you mean --head-ids? (see 'gguf build --help')"},
		{[]string{"--bogus"}, "(see 'gguf --help')"},
	} {
		checkOneLineError(t, runGGUF(t, nil, c.args...), exitUsage, c.mentions)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote its output")
	}
	// --force writes the keys anyway, defaults are not "given" values.
	mustRun(t, nil, "build", model, "--set", "general.architecture=u32:5", "--force", "-o", out)
	mustRun(t, nil, "build", model, "--set", "llama.context_length=u32:8", "-o", out)
	mustRun(t, nil, "vocab", "count", model, "--corpus", empty, "-t", "0", "-o", filepath.Join(dir, "c.tsv"))
	if r := mustRun(t, nil, "--version"); !strings.HasPrefix(string(r.stdout), "gguf ") || !strings.Contains(string(r.stdout), "go1.") {
		t.Errorf("--version printed %q", r.stdout)
	}
}

// TestRenameBeforeHead: the head is cut after --rename, as README orders
// the operations: a renamed output.weight is no longer the head (the head
// is cut from token_embd.weight, as for a tied model), and the result equals
// renaming first and pruning the renamed file.
func TestRenameBeforeHead(t *testing.T) {
	dir := t.TempDir()
	model := denseModel(t, dir)
	ids := writeIDs(t, dir, "ids.txt", 5, 6, 7, 8, 9, 10, 11, 12)
	one := filepath.Join(dir, "one.gguf")
	r := mustRun(t, nil, "build", model, "--rename", "output.weight=foo.weight", "--head-ids", ids, "-o", one)
	if !strings.Contains(string(r.stderr), "from token_embd.weight") {
		t.Errorf("head not cut from token_embd.weight: %s", r.stderr)
	}
	renamed := filepath.Join(dir, "renamed.gguf")
	mustRun(t, nil, "build", model, "--rename", "output.weight=foo.weight", "-o", renamed)
	two := filepath.Join(dir, "two.gguf")
	mustRun(t, nil, "build", renamed, "--head-ids", ids, "-o", two)
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(two)
	if !bytes.Equal(a, b) {
		t.Error("rename+head in one build differs from rename, then head")
	}
	// A tensor renamed to output.weight is the head.
	r = mustRun(t, nil, "build", model, "--drop", `^output\.weight$`, "--rename", "token_embd.weight=output.weight",
		"--head-ids", ids, "--dry-run")
	if !strings.Contains(string(r.stderr), "from output.weight") {
		t.Errorf("head not cut from the renamed tensor: %s", r.stderr)
	}
}

// hostileNames are what a crafted file can put in names and values: ESC, a
// CSI clearing the screen, an OSC retitling the terminal ended by BEL, a CR
// overwriting the line, a fake second line, and invalid UTF-8.
var hostileNames = []string{"\x1b", "\x1b[2J", "\x1b]0;pwned\a", "\rFAKE", "x\ngguf: fake line", "\xff\xfe"}

// hostileModel writes a model whose name, architecture, a key and tensor
// names hold hostileNames.
func hostileModel(t *testing.T, dir, file string, tensorSuffix string) string {
	md, _ := gguf.NewMetadata()
	md.Set("general.architecture", gguf.String("llama\x1b]0;title\a"))
	md.Set("general.name", gguf.String("evil\x1b[2J\r"))
	var ts []fixture.Tensor
	for i, h := range hostileNames {
		md.Set("key"+h, gguf.String("value"+h))
		ts = append(ts, fixture.Tensor{
			Info: gguf.TensorInfo{Name: fmt.Sprintf("t%d%s%s", i, h, tensorSuffix), Type: gguf.TypeF32, Dims: []uint64{4}},
			Data: make([]byte, 16),
		})
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, fixture.Write(md, ts), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkNoControls fails if out holds a byte a terminal acts on (tabs and
// newlines of the layout aside) or invalid UTF-8.
func checkNoControls(t *testing.T, what string, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: invalid UTF-8 in the output", what)
	}
	for _, c := range string(out) {
		if c < ' ' && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c < 0xa0 {
			t.Errorf("%s: output holds %U: %q", what, c, out)
			return
		}
	}
	if bytes.Contains(out, []byte("\ngguf: fake line")) {
		t.Errorf("%s: a name faked an output line", what)
	}
}

// TestTerminalEscapes: text output shows hostile names escaped: info (with
// --metadata and --tensors), diff, a build's dry run and errors.
func TestTerminalEscapes(t *testing.T) {
	dir := t.TempDir()
	a := hostileModel(t, dir, "a.gguf", "")
	b := hostileModel(t, dir, "b.gguf", "\x1b[1A")
	r := mustRun(t, nil, "info", "--metadata", "--tensors", a)
	checkNoControls(t, "info", r.stdout)
	if !strings.Contains(string(r.stdout), `evil\x1b[2J\x0d`) || !strings.Contains(string(r.stdout), `t5\xff\xfe`) {
		t.Errorf("info does not show the names escaped:\n%s", r.stdout)
	}
	r = runGGUF(t, nil, "diff", a, b)
	checkNoControls(t, "diff", r.stdout)
	r = mustRun(t, nil, "build", a, "--dry-run")
	checkNoControls(t, "build --dry-run", r.stdout)
	r = runGGUF(t, nil, "build", a, "--add", a, "-o", filepath.Join(dir, "x.gguf"))
	checkNoControls(t, "error", r.stderr)
	checkOneLineError(t, r, exitUsage, "already in the model")
}

// TestLongNameInError: a 100,000-byte tensor name is cut in a message, with
// its length.
func TestLongNameInError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "long.gguf")
	os.WriteFile(p, fixture.LongTensorName(100000), 0o644)
	for _, args := range [][]string{{"info", p}, {"build", p, "-o", "-"}} {
		r := runGGUF(t, nil, args...)
		checkOneLineError(t, r, exitUsage, "(100000 bytes)")
		if len(r.stderr) > 1000 {
			t.Errorf("%s: the error is %d bytes long", args[0], len(r.stderr))
		}
	}
}
