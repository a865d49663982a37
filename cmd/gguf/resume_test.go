package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// journalPieces reads the tensor indexes a partial output's journal lists.
func journalPieces(path string) map[int]bool {
	var j struct {
		Pieces []struct {
			I int `json:"i"`
		} `json:"pieces"`
	}
	b, err := os.ReadFile(path + ".incomplete.json")
	if err != nil || json.Unmarshal(b, &j) != nil {
		return nil
	}
	out := map[int]bool{}
	for _, p := range j.Pieces {
		out[p.I] = true
	}
	return out
}

// killAt runs the command and kills it with SIGKILL once the journal of
// its output out lists k tensors.
func killAt(t *testing.T, out string, args []string, k int) {
	t.Helper()
	cmd := exec.Command(ggufBin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for len(journalPieces(out)) < k {
		select {
		case err := <-exited:
			t.Fatalf("%s ended (%v) before %d tensors were journaled", args[0], err, k)
		case <-time.After(2 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	<-exited
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s exists after a kill at %d tensors", out, k)
	}
	t.Logf("%s killed after %d tensors journaled (%d kept)", args[0], k, len(journalPieces(out)))
}

// TestFetchBuildResume: a remote fetch and a remote build that reorders
// tensors (--experts-last), killed midway, resume to the bytes of the same
// command on the local file.
func TestFetchBuildResume(t *testing.T) {
	dir := t.TempDir()
	m := assembleModel(1, gguf.TypeQ8_0)
	m.Layers, m.Embd, m.FF, m.Experts = 4, 512, 512, 8
	model := writeModel(t, dir, "m.gguf", m)
	startHub(t, hubtest.Options{Latency: 20 * time.Millisecond, Bandwidth: 8 << 20}, "org/m", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, model)})
	for _, c := range [][]string{
		{"fetch", "--exclude", `attn_k`},
		{"build", "--experts-last"},
	} {
		local := filepath.Join(dir, c[0]+"-local.gguf")
		mustRun(t, nil, append([]string{c[0], model, "-o", local}, c[1:]...)...)
		out := filepath.Join(dir, c[0]+".gguf")
		args := append([]string{c[0], "hf://org/m/m.gguf", "--stats", "-q", "-o", out}, c[1:]...)
		killAt(t, out, args, 10)
		r := mustRun(t, nil, args...)
		if !strings.Contains(string(r.stderr), "resuming") {
			t.Errorf("%s did not resume: %s", c[0], r.stderr)
		}
		mustEqualFiles(t, c[0]+" resumed vs local", out, local)
	}
}

// TestAssembleResume: an assemble from a loopback Hub (20 ms latency, a
// slow CDN) killed with SIGKILL after 3, 12 and 25 tensors resumes from its
// .incomplete file each time; the last run fetches only the tensors still
// missing (bytes counted against theirs) and the file equals a local,
// uninterrupted assemble byte for byte.
func TestAssembleResume(t *testing.T) {
	dir := t.TempDir()
	big := func(name string, seed uint64) string {
		m := assembleModel(seed, gguf.TypeQ8_0)
		m.Layers, m.Embd, m.FF, m.Experts = 4, 512, 512, 8
		return writeModel(t, dir, name, m)
	}
	base, exps := big("base.gguf", 1), big("exps.gguf", 2)
	local := filepath.Join(dir, "local.gguf")
	mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "-o", local)
	hub := startHub(t, hubtest.Options{Latency: 20 * time.Millisecond, Bandwidth: 8 << 20}, "org/moe", map[string]hubtest.Content{
		"base.gguf": testfiles.Content(t, base), "exps.gguf": testfiles.Content(t, exps)})
	out := filepath.Join(dir, "out.gguf")
	args := []string{"assemble", "--base", "hf://org/moe/base.gguf", "--experts", "hf://org/moe/exps.gguf", "--inflight", "2", "-q", "-o", out}

	for _, k := range []int{3, 12, 25} {
		killAt(t, out, args, k)
	}

	kept := journalPieces(out)
	before := hub.Stats()
	r := mustRun(t, nil, args...)
	reqs, n := cost(before, hub.Stats())
	want := mustEqualFiles(t, "resumed vs local, uninterrupted assemble", out, local)
	if !strings.Contains(string(r.stderr), "resuming") {
		t.Errorf("the last run did not say it resumed: %s", r.stderr)
	}
	for _, p := range []string{out + ".incomplete", out + ".incomplete.json"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left after the output was committed", p)
		}
	}
	// What the last run needed: both headers and the tensors not kept
	// (plain copies: each is its source tensor's bytes).
	f := testfiles.Reader(t, local).File
	missing := int64(0)
	for i, ti := range f.Tensors {
		if !kept[i] {
			missing += ti.Size()
		}
	}
	headers := testfiles.Reader(t, base).File.DataOffset + testfiles.Reader(t, exps).File.DataOffset
	t.Logf("last run: %d of %d tensors kept, %d bytes missing + %d of headers, fetched %d in %d requests (file %d bytes)",
		len(kept), len(f.Tensors), missing, headers, n, reqs, len(want))
	// Header probes read up to 1 MiB past each header (see TestAssembleRemote).
	if lim := float64(float64(missing+headers)*1.01) + 2<<20; float64(n) > lim {
		t.Errorf("the resumed run fetched %d bytes for %d missing", n, missing+headers)
	}
}
