package engine

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
)

// readF32 reads a raw little-endian float32 reference file.
func readF32(t testing.TB, rel ...string) []float32 {
	b := shared.Read(t, rel...)
	out := make([]float32, len(b)/4)
	copy(out, kernels.F32s(b))
	return out
}

// greedyIDs reads llama.cpp's "<index> <id> <piece>" greedy-ids file.
func greedyIDs(t testing.TB, rel ...string) (prompt, ids []int32) {
	f, err := os.Open(shared.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# prompt ids:"); ok {
			for _, s := range strings.Fields(rest) {
				v, _ := strconv.Atoi(s)
				prompt = append(prompt, int32(v))
			}
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, int32(v))
	}
	return prompt, ids
}

func openModel(t testing.TB, path string) *Model {
	t.Helper()
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func newState(t testing.TB, m *Model, o Options) *State {
	t.Helper()
	s, err := NewState(m, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// sequenceLogits evaluates ids (batch tokens at a time) and returns the
// logits of the first n positions.
func sequenceLogits(t testing.TB, s *State, ids []int32, n int) []float32 {
	out := make([]float32, 0, n*s.c.Vocab)
	err := s.Eval(ids[:n], 0, func(i int, l []float32) { out = append(out, l...) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func maxDiff(a, b []float32) (float64, int) {
	worst, at := 0.0, -1
	for i := range a {
		d := math.Abs(float64(a[i] - b[i]))
		if math.IsNaN(d) || d > worst {
			worst, at = d, i
		}
	}
	return worst, at
}

func argmax(l []float32) int32 {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best)
}

// TestStories260KLogits compares the logits of positions 0-15 (the prompt
// "Once upon a time" and its greedy continuation) with llama.cpp's
// (F32 KV cache, no flash attention), one token at a time and as one batch,
// for the F32 file and llama.cpp's Q8_0 file (ffn_down in F16).
//
// Tolerances: F32 weights, 1e-4. The model is float32 throughout and the
// only differences are summation orders (llama.cpp's SIMD vec_dot and
// sgemm vs ours); llama.cpp's own llama2.c comparison is 1.3e-5 and logits
// reach ~20, where one float32 ulp is 2e-6. Q8_0: 1e-3: the activations
// are quantized to 8 bits before every product, and a last-bit difference
// in an activation occasionally moves one value across a rounding boundary
// (one q8 step of one element), which shows at ~1e-4 in the logits. With
// the AVX2 kernels, which sum in ggml's x86 order, the Q8_0 logits are
// bit-identical to llama.cpp's (measured max |diff| 0); the portable Go
// kernels reach 1.9e-6.
func TestStories260KLogits(t *testing.T) {
	for _, c := range []struct {
		model, ref string
		tol        float64
	}{
		{shared.Path(t, "models", "stories260K-f32.gguf"), "logits-f32-kvf32-nofa", 1e-4},
		{shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"), "logits-Q8_0-kvf32-nofa", 1e-3},
	} {
		m := openModel(t, c.model)
		_, ids := greedyIDs(t, "refdata", "llama-cpp", c.ref+"-greedy-ids.txt")
		seq := append([]int32{1, 403, 407, 261, 378}, ids...)
		for _, batch := range []int{1, 16} {
			s := newState(t, m, Options{Ctx: 512, Batch: batch, Threads: 2})
			got := sequenceLogits(t, s, seq, 16)
			for _, ref := range []string{c.ref + ".f32", c.ref + "-batch.f32"} {
				want := readF32(t, "refdata", "llama-cpp", ref)
				d, at := maxDiff(got, want)
				t.Logf("%s batch %d vs %s: max |diff| %.3g at pos %d", c.ref, batch, ref, d, at/512)
				if d > c.tol {
					t.Errorf("%s batch %d vs %s: max |diff| %.3g at pos %d id %d", c.ref, batch, ref, d, at/512, at%512)
				}
			}
			for p := 0; p < 16; p++ {
				if g := argmax(got[p*512 : (p+1)*512]); g != seq[p+1] {
					t.Errorf("%s pos %d: argmax %d, llama.cpp %d", c.ref, p, g, seq[p+1])
				}
			}
		}
	}
}

// TestStories260KGreedy regenerates llama.cpp's 342 greedy ids token by
// token: all of them for F32 (the ids of llama2.c's story too). For Q8_0
// the runs part at token 131, where three candidates are within 0.03 of
// each other (llama.cpp's default F16-cache run picks a third one,
// generation/llama-completion-Q8_0-n200.stdout.txt): after ~130 tokens of
// 8-bit activation rounding, a few rounding-boundary flips (README
// synthetic section 6) have moved the logits by more than such a margin.
// So for Q8_0 the test requires the first 130 ids, and at a parting that
// llama.cpp's token is our runner-up within 0.05.
func TestStories260KGreedy(t *testing.T) {
	for _, c := range []struct {
		model, ref string
		exact      int
	}{
		{shared.Path(t, "models", "stories260K-f32.gguf"), "logits-f32-kvf32-nofa-greedy-ids.txt", 342},
		{shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"), "logits-Q8_0-kvf32-nofa-greedy-ids.txt", 130},
	} {
		m := openModel(t, c.model)
		prompt, want := greedyIDs(t, "refdata", "llama-cpp", c.ref)
		s := newState(t, m, Options{Ctx: 512})
		var next int32
		var last []float32
		keep := func(_ int, l []float32) { next, last = argmax(l), append(last[:0], l...) }
		if err := s.Eval(prompt, len(prompt)-1, keep); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if next != w {
				if i < c.exact {
					t.Fatalf("%s: greedy token %d is %d, llama.cpp %d", c.ref, i, next, w)
				}
				second := last[w]
				for id, v := range last {
					if int32(id) != next && v > second {
						t.Fatalf("%s: at token %d llama.cpp's %d is not our runner-up", c.ref, i, w)
					}
				}
				if gap := last[next] - second; gap > 0.05 {
					t.Fatalf("%s: at token %d our %d beats llama.cpp's %d by %.3g", c.ref, i, next, w, gap)
				}
				t.Logf("%s: parts from llama.cpp at token %d (gap %.3g)", c.ref, i, last[next]-second)
				break
			}
			if i == len(want)-1 {
				break
			}
			if err := s.Eval([]int32{next}, 0, keep); err != nil {
				t.Fatal(err)
			}
		}
	}
}
