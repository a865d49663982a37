package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/synthetic"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// TestRunStory is the done criterion: the greedy story of
// stories260K at context 512 is the one llama.cpp (llama-completion) and
// llama2.c print: identical to llama-completion's stdout (which keeps the
// SentencePiece leading space; it ends with one more newline) and to
// llama2.c's (which strips that space), for the shared GGUF and for the
// file import-llama2c makes from stories260K.bin and tok512.bin.
func TestRunStory(t *testing.T) {
	t.Parallel()
	completion, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "generation", "llama-completion-f32-n341.stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	llama2c, err := os.ReadFile(shared.Path(t, "refdata", "llama2c", "greedy_once_upon_a_time_n0.stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(t.TempDir(), "stories260K.gguf")
	mustRun(t, nil, "import-llama2c", shared.Path(t, "models", "stories260K.bin"), shared.Path(t, "models", "tok512.bin"), "-o", imported)
	for _, c := range []struct {
		model string
		args  []string
	}{
		{shared.Path(t, "models", "stories260K-f32.gguf"), []string{"--ctx", "512"}},
		{imported, nil}, // its context_length is the checkpoint's 512
	} {
		args := append([]string{"run", c.model, "-p", "Once upon a time", "-n", "341", "--temp", "0"}, c.args...)
		r := mustRun(t, nil, args...)
		got := string(r.stdout)
		if got+"\n" != string(completion) {
			t.Errorf("%s: stdout differs from llama-completion's:\n%q\n%q", c.model, got, completion)
		}
		if strings.TrimPrefix(got, " ") != string(llama2c) {
			t.Errorf("%s: stdout differs from llama2.c's", c.model)
		}
		stats := string(r.stderr)
		for _, want := range []string{"prompt 5 tokens", "generated 341 tokens", "tok/s", "peak RSS", "stopped: token limit"} {
			if !strings.Contains(stats, want) {
				t.Errorf("stderr lacks %q: %s", want, stats)
			}
		}
	}
}

// TestRunSeed checks that a seed reproduces a sampled text and that
// sampling stops at the end-of-text token or the limit.
func TestRunSeed(t *testing.T) {
	t.Parallel()
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	args := []string{"run", model, "-p", "The cat", "-n", "60", "--temp", "0.8", "--seed", "42", "--ctx", "512"}
	a, b := mustRun(t, nil, args...), mustRun(t, nil, args...)
	if string(a.stdout) != string(b.stdout) || !strings.HasPrefix(string(a.stdout), " The cat") {
		t.Errorf("same seed, different texts:\n%s\n%s", a.stdout, b.stdout)
	}
	c := mustRun(t, nil, "run", model, "-p", "The cat", "-n", "60", "--temp", "0.8", "--seed", "43", "--ctx", "512")
	if string(c.stdout) == string(a.stdout) {
		t.Errorf("seeds 42 and 43 gave the same text")
	}
}

var finalPPL = regexp.MustCompile(`Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)`)

// TestPerplexityMatchesLlamaCpp compares gguf perplexity with
// llama-perplexity (-c 128, F32 KV cache) on the synthetic models: within
// 0.5 % (measured: 0.01-0.12 %), against the no-repack runs where ggml-cpu
// would otherwise use its repacked kernels.
func TestPerplexityMatchesLlamaCpp(t *testing.T) {
	t.Parallel()
	eval := shared.Path(t, "refdata", "synthetic", "eval.txt")
	for _, c := range []struct{ typ, ref string }{
		{"Q8_0", "syn-dense-256-Q8_0"},
		{"Q4_K", "syn-dense-256-Q4_K.norepack"},
		{"Q6_K", "syn-dense-256-Q6_K"},
		{"Q2_K", "syn-dense-256-Q2_K.norepack"},
	} {
		ref, err := os.ReadFile(shared.Path(t, "refdata", "synthetic", "perplexity", c.ref+".ppl.txt"))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseFloat(finalPPL.FindStringSubmatch(string(ref))[1], 64)
		r := mustRun(t, nil, "perplexity", shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-"+c.typ+".gguf"), "-f", eval, "--ctx", "128", "-ctk", "f32", "-ctv", "f32")
		m := finalPPL.FindStringSubmatch(string(r.stdout))
		if m == nil {
			t.Fatalf("%s: no final estimate in %q", c.typ, r.stdout)
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		if rel := (got - want) / want; rel > 0.005 || rel < -0.005 {
			t.Errorf("%s: PPL %.4f, llama-perplexity %.4f (%.2f%%)", c.typ, got, want, 100*rel)
		}
		for _, s := range []string{"tokens scored 882", "misses 0", "bits per byte", "1867 tokens, 3786 bytes"} {
			if !strings.Contains(string(r.stdout), s) {
				t.Errorf("%s: output lacks %q: %s", c.typ, s, r.stdout)
			}
		}
	}
}

// TestPerplexityRegenerated is the perplexity criterion for model
// files shared/ does not store: every file of the synthetic README's
// table (the three F32 models regenerated from its recipe, the others
// quantized from them by package ops, byte-identical to llama-quantize's)
// scored by gguf perplexity against llama-perplexity's final estimate on
// the same text and context, within 0.5 %. The no-repack estimate is the
// reference where ggml-cpu repacks the file's weights (our kernels follow
// its plain vec_dot path).
func TestPerplexityRegenerated(t *testing.T) {
	t.Parallel()
	eval := shared.Path(t, "refdata", "synthetic", "eval.txt")
	_, refs, err := synthetic.README(shared.Path(t, "refdata", "synthetic", "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tok := shared.Path(t, "models", "stories260K-f32.gguf")
	// The F32 models first: the quantized ones are made from them, by
	// subtests running in parallel.
	for _, s := range []synthetic.Spec{synthetic.Dense256, synthetic.Tied512, synthetic.MoE256} {
		if _, err := synthetic.Build(dir, s.Name+"-F32", tok); err != nil {
			t.Fatal(err)
		}
	}
	for _, tag := range slices.Sorted(maps.Keys(refs)) {
		if testing.Short() && tag != "syn-dense-256-F32" {
			continue
		}
		t.Run(tag, func(t *testing.T) {
			// One thread each, as many models at once as there are cores:
			// these models are too small to keep two threads busy.
			t.Parallel()
			r := refs[tag]
			want := r.PPL
			if r.PPLNoRepack != 0 {
				want = r.PPLNoRepack
			}
			model, err := synthetic.Build(dir, tag, tok)
			if err != nil {
				t.Fatal(err)
			}
			// llama-perplexity's references were made with F32 caches
			out := mustRun(t, nil, "perplexity", model, "-f", eval, "--ctx", "128", "-t", "1", "-ctk", "f32", "-ctv", "f32")
			m := finalPPL.FindStringSubmatch(string(out.stdout))
			if m == nil {
				t.Fatalf("no final estimate in %q", out.stdout)
			}
			got, _ := strconv.ParseFloat(m[1], 64)
			rel := (got - want) / want
			t.Logf("PPL %.4f, llama-perplexity %.4f (%+.3f%%)", got, want, 100*rel)
			if rel > 0.005 || rel < -0.005 {
				t.Errorf("PPL %.4f, llama-perplexity %.4f (%+.2f%%)", got, want, 100*rel)
			}
		})
	}
}

// TestPerplexityPrunedFigures scores a 104-row head of stories260K: the
// head-only figure skips the misses, the charged one counts every target:
// with --full it scores the head scaled by the unpruned model's share and
// the misses by the unpruned model, so this head, cut from unchanged
// weights, scores the unpruned model's PPL (which --full also reports);
// without it each miss costs ln(512). A --ctx past the trained context
// warns as llama-perplexity does.
func TestPerplexityPrunedFigures(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	eval := shared.Path(t, "corpus", "eval", "eval-en.txt")
	dir := t.TempDir()
	var ids strings.Builder
	for id := range 104 {
		fmt.Fprintln(&ids, id*4)
	}
	idsFile := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(idsFile, []byte(ids.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	head := filepath.Join(dir, "head.gguf")
	mustRun(t, nil, "build", model, "-o", head, "--head-ids", idsFile, "--head-no-specials")
	decode := func(r result) perplexityJSON {
		t.Helper()
		var p perplexityJSON
		if err := json.Unmarshal(r.stdout, &p); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		return p
	}
	common := []string{"-f", eval, "--ctx", "128", "--chunks", "6", "-t", "2", "--json"}
	fullAlone := decode(mustRun(t, nil, append([]string{"perplexity", model}, common...)...))
	withFull := decode(mustRun(t, nil, append([]string{"perplexity", head, "--full", model}, common...)...))
	fixed := decode(mustRun(t, nil, append([]string{"perplexity", head}, common...)...))
	if fullAlone.Misses != 0 || fullAlone.Charged.PPL != fullAlone.HeadOnly.PPL {
		t.Errorf("unpruned model: %+v", fullAlone)
	}
	for _, p := range []perplexityJSON{withFull, fixed} {
		if p.Misses == 0 || p.HeadOnly.Targets != p.Scored || p.Charged.Targets != p.Scored+p.Misses || p.Charged.Targets != fullAlone.Scored {
			t.Errorf("targets: %+v", p)
		}
	}
	if withFull.MissCharge != "full model" || withFull.Full == nil || math.Abs(withFull.Full.PPL-fullAlone.HeadOnly.PPL) > 1e-9*fullAlone.HeadOnly.PPL {
		t.Errorf("--full: charge %q, full %+v, unpruned alone %v", withFull.MissCharge, withFull.Full, fullAlone.HeadOnly.PPL)
	}
	if rel := math.Abs(withFull.Charged.PPL-fullAlone.HeadOnly.PPL) / fullAlone.HeadOnly.PPL; rel > 1e-5 || withFull.HeadOnly.PPL >= fullAlone.HeadOnly.PPL {
		t.Errorf("--full: charged PPL %v, head-only %v, unpruned %v: want charged = unpruned, head-only lower", withFull.Charged.PPL, withFull.HeadOnly.PPL, fullAlone.HeadOnly.PPL)
	}
	if fixed.MissCharge != "fixed" || math.Abs(fixed.MissNLL-math.Log(512)) > 1e-12 || fixed.Full != nil {
		t.Errorf("fixed charge: %q %v", fixed.MissCharge, fixed.MissNLL)
	}
	t.Logf("unpruned PPL %.2f; 104-row head: head-only %.2f (%d misses), charged with the full model %.2f, with ln 512 %.2f",
		fullAlone.HeadOnly.PPL, withFull.HeadOnly.PPL, withFull.Misses, withFull.Charged.PPL, fixed.Charged.PPL)
	text := mustRun(t, nil, "perplexity", head, "--full", model, "-f", eval, "--ctx", "256", "--chunks", "1", "-t", "2")
	for _, s := range []string{"head's tokens only", "misses charged", "comparable with an unpruned model", "full model"} {
		if !strings.Contains(string(text.stdout), s) {
			t.Errorf("text output lacks %q: %s", s, text.stdout)
		}
	}
	if !strings.Contains(string(text.stderr), "model was trained on only 128 context tokens (256 specified)") {
		t.Errorf("no context warning: %s", text.stderr)
	}
}

// TestRunPeakRSS is the runtime's memory bound: `gguf run` on a model of
// 100+ MB (generated: width 1024, 3 layers, F32 and quantized to Q8_0)
// peaks at no more than its weights + its KV cache + 16 MiB. The peak is
// the child's own VmHWM as it prints it (rounded to 0.1 MiB below 10 MiB,
// to 1 MiB above, so half a unit is added): the kernel's rusage maxrss of
// a child started by vfork+exec starts at the parent's high-water mark,
// the test's own. The weights are the file's tensor bytes (mapped, all
// touched), the KV cache F32 keys and values of every layer for --ctx
// positions.
func TestRunPeakRSS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 145 MB model")
	}
	dir := t.TempDir()
	spec := synthetic.Spec{Name: "rss-1024", Embd: 1024, FF: 2816, Layers: 3, Heads: 16, KVs: 8, Seed: 5}
	f32 := filepath.Join(dir, "rss-F32.gguf")
	if err := synthetic.WriteFile(f32, spec, shared.Path(t, "models", "stories260K-f32.gguf")); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(dir, "rss-Q8_0.gguf")
	if err := synthetic.Quantize(f32, q8, gguf.TypeQ8_0, true); err != nil {
		t.Fatal(err)
	}
	const ctx = 512
	kv := float64(2 * spec.Layers * ctx * spec.KVs * (spec.Embd / spec.Heads) * 4)
	for _, model := range []string{f32, q8} {
		weights := float64(tensorBytes(t, model))
		r := mustRun(t, nil, "run", model, "-p", "Once upon a time", "-n", "64", "--temp", "0", "--ctx", strconv.Itoa(ctx), "-t", "2")
		m := peakRSS.FindStringSubmatch(string(r.stderr))
		if m == nil {
			t.Fatalf("no peak RSS in %q", r.stderr)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		unit := map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]
		half := 0.5
		if v < 10 {
			half = 0.05
		}
		peak := (v + half) * unit
		limit := weights + kv + 16<<20
		t.Logf("%s: peak RSS %s %s, weights %.1f MiB + KV cache %.1f MiB + 16 MiB = %.1f MiB", filepath.Base(model),
			m[1], m[2], weights/(1<<20), kv/(1<<20), limit/(1<<20))
		if model == f32 && weights < 100e6 {
			t.Errorf("%s: only %.0f bytes of weights", model, weights)
		}
		if peak > limit {
			t.Errorf("%s: peak RSS up to %.1f MiB > weights + KV cache + 16 MiB = %.1f MiB", model, peak/(1<<20), limit/(1<<20))
		}
	}
}

var peakRSS = regexp.MustCompile(`peak RSS ([0-9.]+) (KiB|MiB|GiB)`)

// tensorBytes is the size of a GGUF file's tensor data.
func tensorBytes(t *testing.T, path string) int64 {
	r := testfiles.Reader(t, path)
	var n int64
	for i := range r.Tensors {
		n += r.Tensors[i].Size()
	}
	return n
}

// TestRuntimeBadInput checks one-line errors for unusable inputs.
func TestRuntimeBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.gguf")
	os.WriteFile(junk, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644)
	bin := filepath.Join(dir, "x.bin")
	os.WriteFile(bin, []byte("short"), 0o644)
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	checkOneLineError(t, runGGUF(t, nil, "run", junk, "-p", "x"), exitUsage, "junk.gguf")
	checkOneLineError(t, runGGUF(t, nil, "run", filepath.Join(dir, "missing.gguf"), "-p", "x"), exitUsage, "missing")
	checkOneLineError(t, runGGUF(t, nil, "run", model, "-p", "x", "--threads", "0"), exitUsage, "threads")
	checkOneLineError(t, runGGUF(t, nil, "perplexity", model), exitUsage, "-f")
	// The runtime maps local files: other SOURCEs say how to get one.
	for _, args := range [][]string{
		{"run", "hf://owner/repo/model.gguf", "-p", "x"},
		{"perplexity", "https://example.com/model.gguf", "-f", model},
	} {
		checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, "gguf fetch")
	}
	checkOneLineError(t, runGGUF(t, nil, "run", "-", "-p", "x"), exitUsage, "needs a local file, not stdin")
	// --ctx 2 scores nothing: say so, not "all targets outside the head".
	checkOneLineError(t, runGGUF(t, nil, "perplexity", model, "-f", model, "--ctx", "2"), exitUsage, "at least 3")
	checkOneLineError(t, runGGUF(t, nil, "run", model, "-p", "x", "--kernels", "sse9"), exitUsage, "--kernels")
	checkOneLineError(t, runGGUF(t, nil, "import-llama2c", bin, bin, "-o", filepath.Join(dir, "o.gguf")), exitUsage, "x.bin")
	checkOneLineError(t, runGGUF(t, nil, "run", shared.Path(t, "models", "vocab", "ggml-vocab-llama-spm.gguf"), "-p", "x"), exitUsage, "")
}

// TestAttnEpsFlag: --attn-eps reaches the engine (perplexity prints the
// share of attention positions it kept, less than all on stories260K at
// 1e-3), and a threshold outside [0, 1) is one usage line.
func TestAttnEpsFlag(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Once upon a time there was a little girl named Lily. She liked to play in the park with her dog. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, nil, "perplexity", model, "-f", text, "--ctx", "128", "--attn-eps", "1e-3")
	m := regexp.MustCompile(`--attn-eps 0.001 kept (\d+) of (\d+) attention positions`).FindSubmatch(r.stderr)
	if m == nil || string(m[1]) == string(m[2]) {
		t.Errorf("no pruned positions reported: %s", r.stderr)
	}
	for _, e := range []string{"1", "-0.5", "NaN"} {
		checkOneLineError(t, runGGUF(t, nil, "perplexity", model, "-f", text, "--attn-eps", e), exitUsage, "--attn-eps")
	}
}
