package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/shared"
)

// TestFetchHuggingFaceCliSpelling (issue 23 item 18): fetch OWNER/REPO
// FILE and --local-dir as huggingface-cli download spells them; two
// arguments that are not OWNER/REPO FILE are refused naming the hf:// form.
func TestFetchHuggingFaceCliSpelling(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	want, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	startHub(t, hubtest.Options{}, "org/model", map[string]hubtest.Content{"sub/m.gguf": hubtest.Bytes(want)})
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	mustRun(t, nil, "fetch", "org/model", "sub/m.gguf", "-o", out)
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("fetch OWNER/REPO FILE -o OUT differs from the file")
	}
	local := filepath.Join(dir, "models")
	mustRun(t, nil, "fetch", "org/model", "sub/m.gguf", "--local-dir", local)
	if got, _ := os.ReadFile(filepath.Join(local, "sub", "m.gguf")); !bytes.Equal(got, want) {
		t.Error("--local-dir DIR did not write DIR/FILE")
	}
	mustRun(t, nil, "fetch", "hf://org/model/sub/m.gguf", "--local-dir", filepath.Join(dir, "again"))
	if got, _ := os.ReadFile(filepath.Join(dir, "again", "sub", "m.gguf")); !bytes.Equal(got, want) {
		t.Error("fetch hf://... --local-dir DIR did not write DIR/FILE")
	}
	checkOneLineError(t, runGGUF(t, nil, "fetch", model, out), exitUsage, "hf://OWNER/REPO/FILE")
	checkOneLineError(t, runGGUF(t, nil, "fetch", "org/model", "sub/m.gguf", "-o", out, "--local-dir", local), exitUsage, "not both")
}

// TestDemoPerplexityFigures (issue 23 item 19): the perplexity command the
// demo prints prints the figures the demo printed (its bits per byte
// counted the BOS as a token of the text).
func TestDemoPerplexityFigures(t *testing.T) {
	dir := t.TempDir()
	out := string(mustRun(t, nil, "demo", "--dir", dir).stdout)
	demo := regexp.MustCompile(`head's tokens only PPL ([0-9.]+) ± [0-9.]+ over \d+ scored tokens \(\d+ misses skipped\), misses charged ln\(vocab\) PPL ([0-9.]+); ([0-9.]+) bits per byte head-only\n   \$ gguf (perplexity .*)\n`).FindStringSubmatch(out)
	if demo == nil {
		t.Fatalf("no perplexity figures and command in the demo's output:\n%s", out)
	}
	got := string(mustRun(t, nil, shellSplit(t, demo[4])...).stdout)
	cli := regexp.MustCompile(`head's tokens only: PPL = ([0-9.]+) \+/- [0-9.]+, ([0-9.]+) bits per byte`).FindStringSubmatch(got)
	charged := regexp.MustCompile(`misses charged: PPL = ([0-9.]+) `).FindStringSubmatch(got)
	if cli == nil || charged == nil {
		t.Fatalf("gguf %s printed %q", demo[4], got)
	}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	if fmt.Sprintf("%.2f %.2f %.3f", num(cli[1]), num(charged[1]), num(cli[2])) != strings.Join(demo[1:4], " ") {
		t.Errorf("the demo printed PPL %s, charged %s, %s bits per byte; its command PPL %s, charged %s, %s bits per byte", demo[1], demo[2], demo[3], cli[1], charged[1], cli[2])
	}
}

// TestMakeBuild (issue 23 items 19 and 20): make build gives a static
// binary (no ELF interpreter: cgo's net and os/user not linked, though a C
// compiler is here) whose --version names the commit, which -ldflags
// stamps; an unstamped build without VCS information says "devel".
func TestMakeBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("links two more binaries")
	}
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(err)
		}
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("make", "-C", filepath.Join("..", ".."), "build", "OUT="+dir).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "gguf")
	f, err := elf.Open(bin)
	if err != nil {
		t.Skip("not an ELF platform:", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("make build linked a dynamic binary (cgo)")
		}
	}
	f.Close()
	v, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v), "(commit "+strings.TrimSpace(string(head))) || strings.Contains(string(v), "devel") {
		t.Errorf("make build's --version: %q", v)
	}
	plain := filepath.Join(dir, "plain")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", plain, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if v, _ := exec.Command(plain, "--version").Output(); !strings.HasPrefix(string(v), "gguf devel, go") {
		t.Errorf("-buildvcs=false --version: %q", v)
	}
}

// TestHelpNamesOwnFlags (issue 23 item 19): a flag's help mentions only
// flags its command has (assemble, layout, recut and fetch said --force
// let --set and --del break keys; assemble had a --merge that did nothing).
func TestHelpNamesOwnFlags(t *testing.T) {
	mention := regexp.MustCompile(`--([a-z][a-z0-9-]+)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			for _, m := range mention.FindAllStringSubmatch(f.Usage, -1) {
				if m[1] != "help" && c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil {
					t.Errorf("%s --%s mentions --%s, which it does not have", c.CommandPath(), f.Name, m[1])
				}
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(rootCmd)
	checkOneLineError(t, runGGUF(t, nil, "assemble", "--merge", "--base", "a", "--experts", "b", "-o", "c"), exitUsage, "unknown flag: --merge")
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	checkOneLineError(t, runGGUF(t, nil, "fetch", model, "--merge", "-o", filepath.Join(t.TempDir(), "x.gguf")), exitUsage, "not the first file of a split model")
}

// TestQuantizeConventions (issue 23 item 19): --dry-run needs no OUT, and
// IQ3_XXS (like IQ3_XS and IQ2_M, whose mixes hold types that need one) is
// refused without an importance matrix before anything is done, naming it,
// also on a model whose rows fall back to other types.
func TestQuantizeConventions(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	r := mustRun(t, nil, "quantize", model, "--type", "F16", "--dry-run")
	if !strings.Contains(string(r.stdout), "tensors:") {
		t.Errorf("quantize IN --type F16 --dry-run printed %q", r.stdout)
	}
	checkOneLineError(t, runGGUF(t, nil, "quantize", model, "--type", "F16"), exitUsage, "missing OUT")
	out := filepath.Join(t.TempDir(), "q.gguf")
	for _, typ := range []string{"IQ3_XXS", "IQ3_XS", "IQ2_M"} {
		checkOneLineError(t, runGGUF(t, nil, "quantize", model, out, "--type", typ), exitUsage, "--type "+typ+" needs an importance matrix")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused quantize wrote OUT")
	}
}
