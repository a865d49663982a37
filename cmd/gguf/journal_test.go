package main

import (
	"crypto/sha256"
	"encoding/hex"
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

// journalFile is OUT.incomplete.json as sink writes it.
type journalFile struct {
	Key    string `json:"key"`
	Pieces []struct {
		I      int    `json:"i"`
		Off    int64  `json:"off"`
		Len    int64  `json:"len"`
		SHA256 string `json:"sha256"`
	} `json:"pieces"`
}

// slowMoE serves a 4-layer MoE from a loopback Hub slow enough to
// interrupt, and returns its local path.
func slowMoE(t *testing.T, dir string) string {
	m := assembleModel(1, gguf.TypeQ8_0)
	m.Layers, m.Embd, m.FF, m.Experts = 4, 512, 512, 8
	model := writeModel(t, dir, "m.gguf", m)
	startHub(t, hubtest.Options{Latency: 20 * time.Millisecond, Bandwidth: 8 << 20}, "org/m", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, model)})
	return model
}

// TestResumeTamperedJournal: a resumed fetch checks its journal against
// the file's tensor table and bytes. Entries listing every tensor with
// the sha256 of the empty string over an emptied file (what a short read
// past its end hashes to), or with the sha256 of zeros over a file
// extended with zeros it never wrote, are not reported as verified, and
// the output is the real file, not zeros.
func TestResumeTamperedJournal(t *testing.T) {
	dir := t.TempDir()
	model := slowMoE(t, dir)
	out := filepath.Join(dir, "out.gguf")
	args := []string{"fetch", "hf://org/m/m.gguf", "-q", "-o", out}
	size := testfiles.Reader(t, model).File.FileSize()
	empty := sha256.Sum256(nil)
	for _, zeros := range []bool{false, true} {
		killAt(t, out, args, 3)
		b, err := os.ReadFile(out + ".incomplete.json")
		if err != nil {
			t.Fatal(err)
		}
		var j journalFile
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		// Every tensor of the file, at its place.
		f := testfiles.Reader(t, model).File
		j.Pieces = j.Pieces[:0]
		for i, ti := range f.Tensors {
			n := ti.Size()
			n += (int64(f.Alignment) - n%int64(f.Alignment)) % int64(f.Alignment)
			sum := hex.EncodeToString(empty[:])
			if zeros {
				z := sha256.Sum256(make([]byte, n))
				sum = hex.EncodeToString(z[:])
			}
			j.Pieces = append(j.Pieces, struct {
				I      int    `json:"i"`
				Off    int64  `json:"off"`
				Len    int64  `json:"len"`
				SHA256 string `json:"sha256"`
			}{i, f.DataOffset + int64(ti.Offset), n, sum})
		}
		b, _ = json.Marshal(j)
		os.WriteFile(out+".incomplete.json", b, 0o644)
		os.Truncate(out+".incomplete", 0)
		if zeros {
			os.Truncate(out+".incomplete", size)
		}
		r := mustRun(t, nil, args...)
		if strings.Contains(string(r.stderr), "verified") {
			t.Errorf("zeros %v: a tampered journal was trusted: %s", zeros, r.stderr)
		}
		mustEqualFiles(t, "resumed from a tampered journal vs the source", out, model)
		os.Remove(out)
	}
}

// TestResumeChangedInput: an assemble from a local base and remote
// experts, interrupted, then resumed after the base changed in place (same
// size and header, other data, a new modification time), starts over: the
// output is the assemble of the new base, not the old base's bytes kept.
func TestResumeChangedInput(t *testing.T) {
	dir := t.TempDir()
	m := assembleModel(2, gguf.TypeQ8_0)
	m.Layers, m.Embd, m.FF, m.Experts = 4, 512, 512, 8
	base := writeModel(t, dir, "base.gguf", m)
	exps := slowMoE(t, dir)
	out := filepath.Join(dir, "out.gguf")
	args := []string{"assemble", "--base", base, "--experts", "hf://org/m/m.gguf", "--inflight", "2", "-q", "-o", out}
	nBase := len(testfiles.Reader(t, base).File.Tensors)
	killAt(t, out, args, 3)
	baseKept := 0
	for i := range journalPieces(out) {
		if i < nBase {
			baseKept++
		}
	}
	if baseKept == 0 {
		t.Fatal("no tensor of the base was journaled: the test checks nothing")
	}
	b, _ := os.ReadFile(base)
	for i := testfiles.Reader(t, base).File.DataOffset; i < int64(len(b)); i++ {
		b[i] ^= 0x55
	}
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(base, later, later)
	fresh := filepath.Join(dir, "fresh.gguf")
	mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "-o", fresh)
	r := mustRun(t, nil, args...)
	if strings.Contains(string(r.stderr), "resuming") {
		t.Errorf("resumed over a changed input: %s", r.stderr)
	}
	mustEqualFiles(t, "resumed after the base changed vs a fresh assemble", out, fresh)
}

// TestResumeLinksAndLock: a symlink planted at OUT.incomplete is not
// followed (its target keeps its bytes, OUT is not a link), and a second
// fetch to the same output while the first runs fails at once, one line,
// leaving the first to finish with the right bytes.
func TestResumeLinksAndLock(t *testing.T) {
	dir := t.TempDir()
	model := slowMoE(t, dir)
	out := filepath.Join(dir, "out.gguf")
	args := []string{"fetch", "hf://org/m/m.gguf", "-q", "-o", out}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	os.Symlink(victim, out+".incomplete")
	checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, "symbolic link")
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the link's target was written: %d bytes", len(b))
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("%s exists", out)
	}
	os.Remove(out + ".incomplete")

	first := exec.Command(ggufBin, args...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for len(journalPieces(out)) < 1 {
		time.Sleep(2 * time.Millisecond)
	}
	checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, "another run is writing this output")
	if err := first.Wait(); err != nil {
		t.Fatalf("the first fetch: %v", err)
	}
	mustEqualFiles(t, "the first fetch's output", out, model)
}
