package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
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
	got := readFIFO(fifo)
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

// infoTypes returns each tensor's type from `gguf info --json`.
func infoTypes(t *testing.T, path string) map[string]string {
	var s struct {
		Tensors []struct{ Name, Type string }
	}
	if err := json.Unmarshal(mustRun(t, nil, "info", "--json", path).stdout, &s); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, ti := range s.Tensors {
		m[ti.Name] = ti.Type
	}
	return m
}

// TestLlamaCppSpellings: llama.cpp's and huggingface-cli's spellings do
// what ours do.
func TestLlamaCppSpellings(t *testing.T) {
	dir := t.TempDir()
	model := denseModel(t, dir)
	ours, theirs := filepath.Join(dir, "ours.gguf"), filepath.Join(dir, "theirs.gguf")
	mustRun(t, nil, "quantize", model, ours, "--type", "Q8_0", "-t", "2", "--output-type", "Q4_0", "--embd-type", "Q5_0")
	mustRun(t, nil, "quantize", model, theirs, "q8_0", "2", "--output-tensor-type", "Q4_0", "--token-embedding-type", "Q5_0")
	a, _ := os.ReadFile(ours)
	b, _ := os.ReadFile(theirs)
	if !bytes.Equal(a, b) {
		t.Error("quantize IN OUT TYPE NTHREADS with llama-quantize's flags differs from --type -t --output-type --embd-type")
	}
	checkOneLineError(t, runGGUF(t, nil, "quantize", model, theirs, "Q8_0", "--type", "Q4_0"), exitUsage, "TYPE given twice")
	checkOneLineError(t, runGGUF(t, nil, "quantize", model, theirs, "Q8_0", "0"), exitUsage, "NTHREADS")
	left := filepath.Join(dir, "left.gguf")
	mustRun(t, nil, "quantize", model, left, "Q8_0", "--leave-output-tensor")
	if ty := infoTypes(t, left); ty["output.weight"] != "F32" || ty["blk.0.attn_q.weight"] != "Q8_0" {
		t.Errorf("--leave-output-tensor: output.weight %s, blk.0.attn_q.weight %s", ty["output.weight"], ty["blk.0.attn_q.weight"])
	}

	prompt := filepath.Join(dir, "prompt.txt")
	os.WriteFile(prompt, []byte("t1 t2 t3"), 0o644)
	gen := []string{"-n", "6", "--temp", "0", "--seed", "1", "-t", "1"}
	want := mustRun(t, nil, append([]string{"run", model, "-p", "t1 t2 t3", "--ctx", "32"}, gen...)...).stdout
	got := mustRun(t, nil, append([]string{"run", "-m", model, "-f", prompt, "--ctx-size", "32"}, gen...)...).stdout
	if !bytes.Equal(got, want) || len(want) == 0 {
		t.Errorf("run -m -f --ctx-size printed %q, run MODEL -p --ctx %q", got, want)
	}
	checkOneLineError(t, runGGUF(t, nil, "run", "-m", model, model), exitUsage, "not both")

	prefix := filepath.Join(dir, "s.gguf")
	mustRun(t, nil, "build", model, "--split-max-tensors", "10", "-o", prefix)
	files, _ := filepath.Glob(filepath.Join(dir, "s-*-of-*.gguf"))
	var s struct {
		TensorCount int `json:"tensor_count"`
	}
	json.Unmarshal(mustRun(t, nil, "info", "--json", model).stdout, &s)
	if wantFiles := (s.TensorCount + 9) / 10; len(files) != wantFiles {
		t.Errorf("--split-max-tensors 10 of %d tensors wrote %d files, want %d", s.TensorCount, len(files), wantFiles)
	}
	merged := filepath.Join(dir, "merged.gguf")
	mustRun(t, nil, "build", "--merge", files[0], "-o", merged)
	checkOneLineError(t, runGGUF(t, nil, "build", "--merge", model, "-o", merged), exitUsage, "not the first file of a split model")

	fetched := filepath.Join(dir, "fetched.gguf")
	mustRun(t, nil, "fetch", model, "--include", "blk.*.attn_*", "--include", "output.weight", "-o", fetched)
	ty := infoTypes(t, fetched)
	if len(ty) != 11 || ty["output.weight"] == "" || ty["blk.1.attn_v.weight"] == "" {
		t.Errorf("fetch --include kept %v", ty)
	}
	checkOneLineError(t, runGGUF(t, nil, "fetch", model, "--revision", "v1", "-o", fetched), exitUsage, "--revision")
}

// TestMessages: no doubled prefixes, no temporary names, counts in words.
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "t.gguf")
	os.WriteFile(short, []byte("GGUF\x03\x00\x00\x00"), 0o644)
	r := runGGUF(t, nil, "info", short)
	checkOneLineError(t, r, exitUsage, short+": offset 8:")
	if bytes.Contains(r.stderr, []byte(": gguf: ")) {
		t.Errorf("doubled prefix: %q", r.stderr)
	}
	stories := shared.Path(t, "models", "stories260K-f32.gguf")
	r = runGGUF(t, nil, "quantize", stories, filepath.Join(dir, "q.gguf"), "Q8_0")
	if bytes.Count(r.stderr, []byte(`"blk.0.ffn_down.weight"`)) != 1 {
		t.Errorf("the tensor is named more than once: %q", r.stderr)
	}
	md, _ := gguf.NewMetadata()
	md.Set("general.architecture", gguf.String("llama"))
	one := filepath.Join(dir, "one.gguf")
	os.WriteFile(one, fixture.Write(md, []fixture.Tensor{{Info: gguf.TensorInfo{Name: "a", Type: gguf.TypeF32, Dims: []uint64{4}}, Data: make([]byte, 16)}}), 0o644)
	r = mustRun(t, nil, "build", one, "-o", "-")
	if !strings.Contains(string(r.stderr), "wrote stdout:") || !strings.Contains(string(r.stderr), " 1 tensor (1 copied)") {
		t.Errorf("summary %q", r.stderr)
	}
	r = mustRun(t, nil, "build", one, "--drop", "^a$", "--dry-run")
	if strings.Contains(string(r.stdout), "()") || !strings.Contains(string(r.stdout), "0 tensors;") {
		t.Errorf("dry run of no tensors: %q", r.stdout)
	}
	// A failed write names the output, not its temporary.
	ro := filepath.Join(dir, "missing", "x.gguf")
	r = runGGUF(t, nil, "build", one, "-o", ro)
	checkOneLineError(t, r, exitUsage, ro)
	if strings.Contains(string(r.stderr), ".tmp") {
		t.Errorf("temporary name in %q", r.stderr)
	}
}

// TestEveryNumericFlagBounded: flagBounds covers every numeric flag of
// every command, so none takes a value it cannot mean unchecked.
func TestEveryNumericFlagBounded(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := boundsOf(c, f); numericFlag(f) && !ok {
				t.Errorf("%s --%s (%s) has no entry in flagBounds", c.CommandPath(), f.Name, f.Value.Type())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd)
}

// TestLeaveOutputMatchesLlamaQuantize: --leave-output-tensor makes
// llama-quantize's file. The sha256 is that of Debian's llama-quantize
// (llama.cpp 0.7.0) output of `llama-quantize --leave-output-tensor
// --tensor-type ffn_down=f16 stories260K-f32.gguf OUT Q8_0 1`.
func TestLeaveOutputMatchesLlamaQuantize(t *testing.T) {
	const want = "4ec69e4b66a9901f23b44c17c4a8a992a9024aa6c40e8e3d20a74c8d3b0911be"
	out := filepath.Join(t.TempDir(), "q.gguf")
	mustRun(t, nil, "quantize", shared.Path(t, "models", "stories260K-f32.gguf"), out, "Q8_0", "1",
		"--leave-output-tensor", "--tensor-type", "ffn_down=F16")
	data, _ := os.ReadFile(out)
	if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != want {
		t.Errorf("sha256 %s, llama-quantize's %s", got, want)
	}
}

// readFIFO reads the FIFO at path from a reader of its own (a writer's open
// blocks until one exists) and sends what it read, nil if it could not open.
func readFIFO(path string) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	return got
}
