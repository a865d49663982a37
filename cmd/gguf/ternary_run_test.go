package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/internal/fixture"
)

// ternaryPPLTolerance is how far the perplexity of a lossy ter2s128 file
// made from Q2_0 may be from the Q2_0 file's (relative): the merged scales
// move weights by up to the difference of two neighbouring scales.
const ternaryPPLTolerance = 0.05

// TestTernaryLayoutRun: gguf layout repacks generated Q2_0 and TQ1_0
// models into ter3, ter2 and ter2s128, and gguf run executes them (it
// refused them before): the lossless files give the original's greedy
// text under every kernel set and its perplexity bit for bit under the
// portable set (on amd64 the avx2 set's Q2_0 kernel sums in ggml's AVX2
// order, the ternary kernels in ggml's generic one); the lossy one
// (ter2s128 of Q2_0) gives exactly the perplexity of its own restored
// (dequantized-reference) Q2_0 file and one within ternaryPPLTolerance of
// the original's.
func TestTernaryLayoutRun(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	m := fixture.Model{Name: "cli-ternary", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 26}
	if err := os.WriteFile(p("f32.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	words := ""
	for i := range 120 {
		words += fixture.Word(1+(i*7)%40) + " "
	}
	if err := os.WriteFile(p("text.txt"), []byte(words), 0o644); err != nil {
		t.Fatal(err)
	}
	ppl := func(f string) float64 {
		var j perplexityJSON
		if err := json.Unmarshal(mustRun(t, nil, "perplexity", f, "-f", p("text.txt"), "--ctx", "32", "--json", "--kernels", "portable").stdout, &j); err != nil {
			t.Fatal(err)
		}
		return j.HeadOnly.PPL
	}
	for _, typ := range []string{"Q2_0", "TQ1_0"} {
		src := p(typ + ".gguf")
		mustRun(t, nil, "quantize", p("f32.gguf"), src, "--type", typ, "--pure")
		want := ppl(src)
		for _, kind := range []string{"ter3", "ter2", "ter2s128"} {
			out := p(typ + "-" + kind + ".gguf")
			mustRun(t, nil, "layout", src, "--ternary", kind, "--lossy", "-o", out)
			got := ppl(out)
			if typ == "Q2_0" && kind == "ter2s128" {
				back := p(typ + "-" + kind + "-back.gguf")
				mustRun(t, nil, "layout", out, "--ternary", "none", "-o", back)
				if ref := ppl(back); got != ref || math.Abs(got/want-1) > ternaryPPLTolerance {
					t.Errorf("%s %s: perplexity %.6f, its restored file %.6f, the original %.6f", typ, kind, got, ref, want)
				}
				t.Logf("%s %s: perplexity %.6f, original %.6f (%+.3f%%)", typ, kind, got, want, 100*(got/want-1))
				continue
			}
			if got != want {
				t.Errorf("%s %s: perplexity %.6f, the original %.6f", typ, kind, got, want)
			}
			for _, k := range []string{"auto", "portable"} {
				args := []string{"-p", "t1 t2 t3", "-n", "12", "--temp", "0", "--kernels", k}
				w := mustRun(t, nil, append([]string{"run", src}, args...)...)
				g := mustRun(t, nil, append([]string{"run", out}, args...)...)
				if len(w.stdout) == 0 || !bytes.Equal(g.stdout, w.stdout) {
					t.Errorf("%s %s --kernels %s: says %q, the original %q", typ, kind, k, g.stdout, w.stdout)
				}
			}
		}
	}
}
