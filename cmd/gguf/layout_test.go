package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// TestLayoutCLI: build quantizes experts to Q2_K and moves them last,
// layout repacks them (as build --experts-layout does), info shows it,
// none restores the file byte for byte, and the runtime runs the repacked
// file with the q2lut kernel, not as Q2_K rows.
func TestLayoutCLI(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	m := fixture.Model{Name: "cli-moe", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 2, ExpertsUsed: 1, Seed: 4}
	if err := os.WriteFile(p("f32.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "build", p("f32.gguf"), "--type", "Q8_0", "--tensor-type", "_exps=q2_K", "--experts-last", "-o", p("el.gguf"))
	r := mustRun(t, nil, "layout", p("el.gguf"), "--experts", "q2lut", "-o", p("lut.gguf"))
	if !strings.Contains(string(r.stderr), "6 tensors repacked to q2lut") {
		t.Errorf("summary: %s", r.stderr)
	}
	mustRun(t, nil, "build", p("el.gguf"), "--experts-layout", "q2lut", "-o", p("lut2.gguf"))
	info := mustRun(t, nil, "info", p("lut.gguf"))
	if !strings.Contains(string(info.stdout), "q2lut from Q2_K: 6 tensors, 786,432 weights, 258 kB, 2.625 bits/weight, lossless") {
		t.Errorf("info:\n%s", info.stdout)
	}
	mustRun(t, nil, "layout", p("lut.gguf"), "--experts", "none", "-o", p("back.gguf"))
	el, _ := os.ReadFile(p("el.gguf"))
	lut, _ := os.ReadFile(p("lut.gguf"))
	lut2, _ := os.ReadFile(p("lut2.gguf"))
	back, _ := os.ReadFile(p("back.gguf"))
	if !bytes.Equal(back, el) || !bytes.Equal(lut, lut2) || bytes.Equal(lut, el) {
		t.Errorf("restored == original %v, layout == build %v", bytes.Equal(back, el), bytes.Equal(lut, lut2))
	}
	// The runtime runs the repacked file with its table-lookup kernel: the
	// same greedy text as the Q2_K file, under every kernel set.
	for _, k := range []string{"auto", "portable"} {
		args := []string{"-p", "t1 t2 t3", "-n", "8", "--temp", "0", "--kernels", k}
		want := mustRun(t, nil, append([]string{"run", p("el.gguf")}, args...)...)
		got := mustRun(t, nil, append([]string{"run", p("lut.gguf")}, args...)...)
		if len(want.stdout) == 0 || !bytes.Equal(got.stdout, want.stdout) {
			t.Errorf("--kernels %s: q2lut file says %q, Q2_K file %q", k, got.stdout, want.stdout)
		}
	}
	checkOneLineError(t, runGGUF(t, nil, "layout", p("el.gguf"), "-o", p("x.gguf")), 2, "nothing to do")
	checkOneLineError(t, runGGUF(t, nil, "layout", p("el.gguf"), "--experts", "ter3", "-o", p("x.gguf")), 2, "want q2lut or none")
	checkOneLineError(t, runGGUF(t, nil, "layout", p("f32.gguf"), "--experts", "q2lut", "-o", p("x.gguf")), 2, "experts last")
	checkOneLineError(t, runGGUF(t, nil, "layout", p("el.gguf"), "--ternary", "ter3", "-o", p("x.gguf")), 2, "no Q2_0, TQ1_0 or TQ2_0")
	checkOneLineError(t, runGGUF(t, nil, "quantize", p("lut.gguf"), p("x.gguf"), "--type", "Q4_0"), 2, "restore them first")
	if _, err := os.Stat(p("x.gguf")); err == nil {
		t.Error("a refused run left an output")
	}
}

// TestLayoutCLIFourthCode: a Q2_0 weight with code 3 (+2) stops the
// ternary repack with one line naming the tensor and block, and no output.
func TestLayoutCLIFourthCode(t *testing.T) {
	dir := t.TempDir()
	m := fixture.Model{Name: "cli-q2", Layers: 1, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 5}
	src, out := filepath.Join(dir, "f32.gguf"), filepath.Join(dir, "q2.gguf")
	if err := os.WriteFile(src, m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "quantize", src, out, "--type", "Q2_0", "--pure")
	data, _ := os.ReadFile(out)
	r0, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := r0.Tensor("blk.0.ffn_down.weight")
	data[r0.DataOffset+int64(ti.Offset)+3*18+2] |= 3 // block 3, weight 0: +2
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runGGUF(t, nil, "layout", bad, "--ternary", "ter3", "-o", filepath.Join(dir, "x.gguf"))
	checkOneLineError(t, r, 2, `tensor "blk.0.ffn_down.weight" block 3 (row 0): weight 0 uses the fourth code (+2)`)
}
