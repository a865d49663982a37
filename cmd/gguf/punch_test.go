package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/fixture"
)

// TestPunchCLI: punch frees the expert region of an experts-last file
// against a cache, info reports the holes, unpunch restores the file byte
// for byte, the runtime refuses the punched file (its experts read as
// zeros) and runs the restored one, and a read-only file or a file without its experts last are
// refused with one line.
func TestPunchCLI(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	m := fixture.Model{Name: "cli-punch", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 6}
	if err := os.WriteFile(p("m.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "build", p("m.gguf"), "--experts-last", "-o", p("el.gguf"))
	mustRun(t, nil, "build", p("el.gguf"), "-o", p("cache.gguf"))
	orig, _ := os.ReadFile(p("el.gguf"))
	r := runGGUF(t, nil, "punch", p("el.gguf"), "--from", p("cache.gguf"))
	if strings.Contains(string(r.stderr), "cannot punch holes") {
		t.Skipf("no hole support: %s", r.stderr)
	}
	if r.code != 0 || !strings.Contains(string(r.stderr), "6 expert tensors checked") {
		t.Fatalf("punch: exit %d %s", r.code, r.stderr)
	}
	info := mustRun(t, nil, "info", p("el.gguf"))
	if !strings.Contains(string(info.stdout), "punched: the experts read as zeros") {
		t.Errorf("info does not show the holes:\n%s", info.stdout)
	}
	js := mustRun(t, nil, "info", "--json", p("el.gguf"))
	if !strings.Contains(string(js.stdout), `"punched_bytes": `) {
		t.Error("info --json has no punched_bytes")
	}
	checkOneLineError(t, runGGUF(t, nil, "run", p("el.gguf"), "-p", "t1", "-n", "1"), 2, "punched out and read as zeros")
	// With the cache the punched file computes what the whole file does:
	// the same greedy text and the same perplexity, to the last digit.
	text := p("text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("t1 t7 t3 t12 t5 t40 t2 t9 ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "-p", "t1 t2", "-n", "24", "--temp", "0", "-t", "1"},
		{"perplexity", "-f", text, "--ctx", "32", "--json", "-t", "1"},
	} {
		want := mustRun(t, nil, append([]string{args[0], p("cache.gguf")}, args[1:]...)...).stdout
		got := mustRun(t, nil, append([]string{args[0], p("el.gguf"), "--experts-from", p("cache.gguf")}, args[1:]...)...).stdout
		// The JSON names the model file; the rest must be equal.
		want = bytes.Replace(want, []byte("cache.gguf"), []byte("el.gguf"), 1)
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s --experts-from differs from the unpunched file:\n got  %q\n want %q", args[0], got, want)
		}
	}
	// The original file holds the same experts (a valid cache); a dense
	// model holds none.
	mustRun(t, nil, "run", p("el.gguf"), "--experts-from", p("m.gguf"), "-p", "t1", "-n", "1")
	if err := os.WriteFile(p("dense.gguf"), fixture.Dense().Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, runGGUF(t, nil, "run", p("el.gguf"), "--experts-from", p("dense.gguf"), "-p", "t1", "-n", "1"), 2, "the cache has no tensor")
	mustRun(t, nil, "unpunch", p("el.gguf"), "--from", p("cache.gguf"))
	mustRun(t, nil, "run", p("el.gguf"), "-p", "t1", "-n", "1")
	if got, _ := os.ReadFile(p("el.gguf")); !bytes.Equal(got, orig) {
		t.Error("unpunch did not restore the file")
	}
	if strings.Contains(string(mustRun(t, nil, "info", p("el.gguf")).stdout), "punched") {
		t.Error("info still shows holes")
	}
	checkOneLineError(t, runGGUF(t, nil, "punch", p("m.gguf"), "--from", p("cache.gguf")), 2, "experts are not last")
	checkOneLineError(t, runGGUF(t, nil, "punch", p("el.gguf")), 2, "missing --from")
	if err := os.Chmod(p("el.gguf"), 0o444); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, runGGUF(t, nil, "punch", p("el.gguf"), "--from", p("cache.gguf")), 2, "read-only")
}

// TestPunchCacheChecks: punch refuses a cache that is FILE itself (the
// same path, a symlink, a hard link, another spelling); unpunch refuses a
// cache of other experts before writing a byte, on a never-punched file
// and on a punched one, and says there is nothing to restore for a file
// without holes; run --experts-from refuses the other experts at load.
// The file is left as it was every time.
func TestPunchCacheChecks(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	m := fixture.Model{Name: "cli-punch", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 6}
	if err := os.WriteFile(p("m.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Seed = 7 // the same tensors, other experts
	if err := os.WriteFile(p("other.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "build", p("m.gguf"), "--experts-last", "-o", p("el.gguf"))
	mustRun(t, nil, "build", p("el.gguf"), "-o", p("cache.gguf"))
	mustRun(t, nil, "build", p("other.gguf"), "--experts-last", "-o", p("wrong.gguf"))
	if err := os.Symlink("el.gguf", p("sym.gguf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("el.gguf"), p("hard.gguf")); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(p("el.gguf"))
	unchanged := func(what string, want []byte) {
		t.Helper()
		if got, _ := os.ReadFile(p("el.gguf")); !bytes.Equal(got, want) {
			t.Fatalf("%s changed the file", what)
		}
	}
	for _, c := range []string{p("el.gguf"), p("sym.gguf"), p("hard.gguf"), dir + "/../" + filepath.Base(dir) + "/./el.gguf"} {
		checkOneLineError(t, runGGUF(t, nil, "punch", p("el.gguf"), "--from", c), 2, "the cache is the file itself")
		unchanged("punch --from "+c, orig)
	}
	checkOneLineError(t, runGGUF(t, nil, "unpunch", p("el.gguf"), "--from", p("wrong.gguf")), 2, "differs from the cache's")
	unchanged("unpunch of a never-punched file from a wrong cache", orig)
	r := mustRun(t, nil, "unpunch", p("el.gguf"), "--from", p("cache.gguf"))
	if !strings.Contains(string(r.stderr), "nothing to restore") {
		t.Errorf("unpunch of a file without holes: %q", r.stderr)
	}
	unchanged("unpunch of a never-punched file", orig)

	r = runGGUF(t, nil, "punch", p("el.gguf"), "--from", p("cache.gguf"))
	if strings.Contains(string(r.stderr), "cannot punch holes") {
		t.Skipf("no hole support: %s", r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("punch: exit %d %s", r.code, r.stderr)
	}
	punched, _ := os.ReadFile(p("el.gguf"))
	checkOneLineError(t, runGGUF(t, nil, "unpunch", p("el.gguf"), "--from", p("wrong.gguf")), 2, "differs from the cache's")
	unchanged("unpunch from a wrong cache", punched)
	checkOneLineError(t, runGGUF(t, nil, "unpunch", p("el.gguf"), "--from", p("hard.gguf")), 2, "the cache is the file itself")
	unchanged("unpunch from itself", punched)
	if err := os.WriteFile(p("text.txt"), []byte(strings.Repeat("t1 t7 t3 t12 ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, runGGUF(t, nil, "run", p("el.gguf"), "--experts-from", p("wrong.gguf"), "-p", "t1", "-n", "1"), 2, "differs from the cache's")
	checkOneLineError(t, runGGUF(t, nil, "perplexity", p("el.gguf"), "--experts-from", p("wrong.gguf"), "-f", p("text.txt"), "--ctx", "16"), 2, "differs from the cache's")
	r = mustRun(t, nil, "unpunch", p("el.gguf"), "--from", p("cache.gguf"))
	if !strings.Contains(string(r.stderr), "restored") {
		t.Errorf("unpunch: %q", r.stderr)
	}
	if got, _ := os.ReadFile(p("el.gguf")); !bytes.Equal(got, orig) {
		t.Error("unpunch from the right cache did not restore the file")
	}
}
