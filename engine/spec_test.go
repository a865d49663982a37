package engine

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/ops"
)

// TestNgramSimpleDraft checks the lookup against cases worked by hand from
// llama.cpp's common_ngram_simple_draft: the most recent earlier match of
// the last n tokens (the sampled one last) drafts what followed it, up to
// m tokens; no draft for a history of n+m+1 tokens or fewer, for a match
// at position 0, or when fewer than n tokens follow the match.
func TestNgramSimpleDraft(t *testing.T) {
	h := []int32{9, 1, 2, 3, 4, 5, 1, 2, 7, 8, 6, 1}
	cases := []struct {
		hist    []int32
		sampled int32
		n, m    int
		want    []int32
	}{
		// pattern [1 2]: matches at 6 (most recent, followed by 7 8 6 1)
		{h, 2, 2, 3, []int32{7, 8, 6}},
		// m larger than what follows: cut to the history's end
		{h, 2, 2, 8, []int32{7, 8, 6, 1}},
		// pattern [1 3]: no match
		{h, 3, 2, 3, nil},
		// history too short: len 12 <= n+m+1
		{h, 2, 2, 9, nil},
		// pattern [9 1] matches only at position 0, which is excluded
		{append([]int32{9, 1, 5, 5, 5, 5, 5, 5, 5}, 9), 1, 2, 3, nil},
		// fewer than n tokens follow the match: [5 6 7] at 8, 2 follow
		{[]int32{0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 1, 2, 5, 6}, 7, 3, 2, nil},
	}
	for i, c := range cases {
		got := ngramSimpleDraft(c.hist, c.sampled, c.n, c.m)
		if !slices.Equal(got, c.want) {
			t.Errorf("case %d: draft %v, want %v", i, got, c.want)
		}
	}
}

// specCases are the generated models the speculative tests run: llama
// (dense), every other family, among them the recurrent ones (qwen35's
// Gated DeltaNet, bailingmoe3's KDA and MLA) and the MoEs, in Q8_0
// (integer kernels) and F32 (float sums, whose four-row products add in
// another order than one row's); Q8_0 only with -short.
func specCases() []crosscheck.Case {
	var out []crosscheck.Case
	types := []string{"Q8_0", "F32"}
	if testing.Short() {
		types = types[:1]
	}
	for _, typ := range types {
		for _, shape := range append([]string{"dense", "qwen35mtp", "qwen35moemtp"}, crosscheck.FamilyShapes...) {
			out = append(out, crosscheck.Case{Shape: shape, Type: typ})
		}
	}
	return out
}

// TestGenerateSpecExact generates from a repetitive prompt on every
// family, greedy and sampled with a seed, with and without ngram-simple
// drafting (short n-grams, so that the generated models' loops give
// drafts): the same tokens must come out, and the state must be left
// where Generate leaves it (the next token's logits equal bit for bit).
// The generated models seldom repeat themselves, so an oracle drafter
// (the tokens to come, one of them wrong) makes sure every family sees
// whole, partial and no acceptance: the rollback of the caches and of
// the recurrent state, and the replay of accepted tokens.
func TestGenerateSpecExact(t *testing.T) {
	base := crosscheck.TextIDs(24)
	prompt := append(append(append([]int32(nil), base...), base[1:]...), base[1:12]...)
	spec := SpecOptions{Type: SpecNgramSimple, NMax: 3, NgramN: 2, NgramM: 6}
	n := 40
	for _, c := range specCases() {
		t.Run(c.Tag(), func(t *testing.T) {
			m := openModel(t, crossModel(t, c))
			temps := []float32{0, 0.8}
			if testing.Short() {
				temps = temps[:1]
			}
			for _, temp := range temps {
				so := SamplerOptions{Temp: temp, TopK: 40, TopP: 0.95, RepeatPenalty: 1, Seed: 7}
				run := func(o SpecOptions) ([]int32, GenStats, []float32, int) {
					s := newState(t, m, Options{Ctx: 256, Threads: 2})
					var out []int32
					st, err := GenerateSpec(s, NewSampler(so, m.Config.Vocab), prompt, n, func(int32) bool { return false },
						func(id int32) error { out = append(out, id); return nil }, o)
					if err != nil {
						t.Fatal(err)
					}
					pos := s.Pos()
					return out, st, sequenceLogits(t, s, out[len(out)-1:], 1), pos
				}
				want, wst, wl, wpos := run(DefaultSpec())
				// The oracle drafts the tokens that will come, one of
				// them changed at a varying place: full, partial and
				// no acceptance on every family.
				oracle := spec
				oracle.drafter = oracleDrafter(want, prompt, m.Config.Vocab)
				opts := []SpecOptions{spec, oracle}
				if m.HasMTP() {
					opts = append(opts, SpecOptions{Type: SpecDraftMTP, NMax: 3})
				}
				for _, o := range opts {
					got, st, gl, gpos := run(o)
					if !slices.Equal(got, want) {
						t.Fatalf("temp %g: drafting changed the output:\n got %v\nwant %v", temp, got, want)
					}
					if gpos != wpos {
						t.Fatalf("temp %g: state left at %d, without drafting %d", temp, gpos, wpos)
					}
					if d, at := maxDiff(gl, wl); d != 0 {
						t.Fatalf("temp %g: the next logits differ by %g at %d", temp, d, at)
					}
					if st.Passes >= wst.Passes && st.Accepted > 0 {
						t.Errorf("temp %g: %d passes with %d accepted drafts, %d without drafting", temp, st.Passes, st.Accepted, wst.Passes)
					}
					t.Logf("temp %g, %s, oracle %v: %d drafted, %d accepted (%.2f), %d passes for %d tokens (%d without)",
						temp, o.Type, o.drafter != nil, st.Drafted, st.Accepted, st.AcceptRate(), st.Passes, st.Generated, wst.Passes)
					if o.drafter != nil && (st.Accepted == 0 || st.Accepted == st.Drafted) {
						t.Errorf("temp %g: the oracle's drafts were %d, %d accepted: want some accepted and some not", temp, st.Drafted, st.Accepted)
					}
				}
			}
		})
	}
}

// TestMTPMirrorBatches checks the MTP block's bookkeeping: its logits for
// the token after the prompt's next must not depend on how the main model
// batched the prompt (each position pairs its token with the main model's
// hidden state one position back, across batch boundaries too), and a
// model without the block refuses draft-mtp.
func TestMTPMirrorBatches(t *testing.T) {
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35mtp", Type: "Q8_0"}))
	if !m.HasMTP() {
		t.Fatal("the qwen35mtp model's NextN block was not loaded")
	}
	ids := crosscheck.TextIDs(40)
	var want []float32
	for _, b := range []int{64, 7, 1} {
		got, err := MTPLogits(newState(t, m, Options{Ctx: 64, Batch: b, Threads: 2}), ids, 17)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		if d, at := maxDiff(got, want); d != 0 {
			t.Errorf("batches of %d: MTP logits differ by %g at %d", b, d, at)
		}
	}
	plain := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35", Type: "Q8_0"}))
	_, err := GenerateSpec(newState(t, plain, Options{Ctx: 64}), NewSampler(SamplerOptions{}, plain.Config.Vocab), ids, 4,
		func(int32) bool { return false }, func(int32) error { return nil }, SpecOptions{Type: SpecDraftMTP, NMax: 2})
	if err == nil {
		t.Error("draft-mtp ran on a model without an MTP block")
	}
}

// TestMTPLlamaCpp compares the MTP block's first draft logits with
// libllama's MTP context (bench/llama-mtp.sh: the crosscheck prompt
// mirrored into a LLAMA_CONTEXT_TYPE_MTP context as draft-mtp does, then
// token 17 at the next position). Measured: max |diff| 5.7e-6 (F32) and
// 7.2e-7 (Q8_0) on logits of magnitude ~1, the argmax the same; the
// tolerance, 1e-4, is far below what a wrong pairing of tokens and hidden
// states, a missing norm or a wrong position gives (O(0.1) and more). The
// qwen35moe block (a MoE FFN with the gated shared expert): 1.2e-5 (F32),
// 9.5e-7 (Q8_0).
func TestMTPLlamaCpp(t *testing.T) {
	for _, c := range crosscheck.MTPCases() {
		tag := c.Tag()
		raw, err := os.ReadFile(filepath.Join("testdata", "llamacpp", tag+".mtp.f32"))
		if err != nil {
			t.Fatal(err)
		}
		want := append([]float32(nil), kernels.F32s(raw)...)
		m := openModel(t, crossModel(t, c))
		got, err := MTPLogits(newState(t, m, Options{Ctx: 512, Threads: 2}), crosscheck.PromptIDs, 17)
		if err != nil {
			t.Fatal(err)
		}
		d, at := maxDiff(got, want)
		t.Logf("%s: max |ours - llama.cpp| %.3g", tag, d)
		if d > 1e-4 || argmax(got) != argmax(want) {
			t.Errorf("%s: MTP logits differ from llama.cpp's by %g at %d (argmax %d, llama.cpp %d)", tag, d, at, argmax(got), argmax(want))
		}
	}
}

// TestMTPPaged: a qwen35moe opened with its experts paged drafts with its
// MTP block too (the block's experts, which the pager does not serve, are
// read into memory when drafting starts): its first draft logits equal the
// resident model's bit for bit, and greedy output with draft-mtp equals
// the resident model's without drafting. Before, the block ran on
// matrices without bytes.
func TestMTPPaged(t *testing.T) {
	c := crosscheck.Case{Shape: "qwen35moemtp", Type: "Q8_0"}
	last := writeModel(t, t.TempDir(), "last.gguf", runOps(t, crossBytes(t, c), ops.Options{ExpertsLast: true}))
	resident := openModel(t, last)
	paged, err := OpenWith(last, OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { paged.Close() })
	before := paged.ResidentBytes
	pager := func() Options { return Options{Ctx: 128, Threads: 2, Pager: &PagerOptions{Pool: 4}} }
	want, err := MTPLogits(newState(t, resident, Options{Ctx: 128, Threads: 2}), crosscheck.PromptIDs, 17)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MTPLogits(newState(t, paged, pager()), crosscheck.PromptIDs, 17)
	if err != nil {
		t.Fatal(err)
	}
	if d, at := maxDiff(got, want); d != 0 {
		t.Errorf("paged MTP logits differ from the resident model's by %g at %d", d, at)
	}
	if paged.ResidentBytes <= before {
		t.Errorf("resident bytes %d after drafting, %d before: the block's experts were not read", paged.ResidentBytes, before)
	}
	gen := func(m *Model, o Options, spec SpecOptions) []int32 {
		var out []int32
		_, err := GenerateSpec(newState(t, m, o), NewSampler(SamplerOptions{}, m.Config.Vocab), crosscheck.PromptIDs, 24,
			func(int32) bool { return false }, func(id int32) error { out = append(out, id); return nil }, spec)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain := gen(resident, Options{Ctx: 128, Threads: 2}, DefaultSpec())
	drafted := gen(paged, pager(), SpecOptions{Type: SpecDraftMTP, NMax: 3})
	if !slices.Equal(plain, drafted) {
		t.Errorf("paged draft-mtp output differs from the resident model's:\n got %v\nwant %v", drafted, plain)
	}
}

// oracleDrafter drafts the tokens want says will follow (generated after
// prompt), the one at a varying place changed: whole, partial and no
// acceptance.
func oracleDrafter(want []int32, prompt []int32, vocab int) func(hist []int32, _ int32, k int) []int32 {
	return func(hist []int32, _ int32, k int) []int32 {
		g := len(hist) + 1 - len(prompt)
		d := slices.Clone(want[g:min(len(want), g+k)])
		if bad := g % (k + 2); bad < len(d) {
			d[bad] = (d[bad] + 1) % int32(vocab)
		}
		return d
	}
}

// TestGenerateSpecPaged drafts on MoE models whose experts are paged into
// pools smaller than a verification batch's experts (6 slots per layer, a
// token uses 4 of 16, a batch of 4 rows up to 16): the output must be the
// unpaged plain run's, and each batch must ask its layer's pool for the
// union of its rows' experts, each once (fewer expert uses than rows
// times experts per token).
func TestGenerateSpecPaged(t *testing.T) {
	dir := t.TempDir()
	prompt := moeTokens(24)
	n := 32
	for _, arch := range []string{"qwen3moe", "bailingmoe2"} {
		path := writeMoE(t, dir, moeModel(arch, 256, 256, 3, 16, 4, gguf.TypeQ8_0, gguf.TypeQ4_K))
		gen := func(oo OpenOptions, so Options, o SpecOptions) ([]int32, GenStats, *PagerStats) {
			m, err := OpenWith(path, oo)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			so.Ctx, so.Threads = 128, 2
			s, err := NewState(m, so)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var out []int32
			st, err := GenerateSpec(s, NewSampler(SamplerOptions{RepeatPenalty: 1}, m.Config.Vocab), prompt, n,
				func(int32) bool { return false }, func(id int32) error { out = append(out, id); return nil }, o)
			if err != nil {
				t.Fatal(err)
			}
			return out, st, s.PagerStats()
		}
		want, _, _ := gen(OpenOptions{}, Options{}, DefaultSpec())
		po := func() *PagerOptions { return &PagerOptions{Pool: 6, Policy: pager.Policy{Kind: pager.LRU}} }
		_, _, plain := gen(OpenOptions{PageExperts: true}, Options{Pager: po()}, DefaultSpec())
		o := DefaultSpec()
		o.Type, o.drafter = SpecNgramSimple, oracleDrafter(want, prompt, 256)
		got, st, ps := gen(OpenOptions{PageExperts: true}, Options{Pager: po()}, o)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: paged drafting changed the output:\n got %v\nwant %v", arch, got, want)
		}
		rows := int64(len(prompt) + st.Passes + st.Drafted) // upper bound of the rows evaluated
		layers := ps.Calls / int64(1+st.Passes)             // MoE layers: one call per layer and pass
		if ps.Accesses >= rows*4*layers {
			t.Errorf("%s: %d expert uses for at most %d rows x 4 experts x %d layers: the batches' experts are not merged", arch, ps.Accesses, rows, layers)
		}
		t.Logf("%s: %d drafted, %d accepted, %d passes; pager: %d calls, %d expert uses, %s read (plain: %d calls, %d uses, %s)",
			arch, st.Drafted, st.Accepted, st.Passes, ps.Calls, ps.Accesses, humanize.IBytes(uint64(ps.BytesRead)),
			plain.Calls, plain.Accesses, humanize.IBytes(uint64(plain.BytesRead)))
	}
}

// attachedDraftLogits returns the logits of the MTP block attached to s
// for the token after next, drafted from next at s's next position: what
// GenerateSpec's next draft computes first.
func attachedDraftLogits(t *testing.T, s *State, next int32) []float32 {
	t.Helper()
	d := s.draft
	copy(d.hin[:d.E], d.h(s.pos-1))
	d.s.pos, d.off = s.pos, 0
	out := make([]float32, s.c.Vocab)
	if err := d.s.Eval([]int32{next}, 0, func(_ int, l []float32) { copy(out, l) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAttachMTPKeepsHistory: an MTP block attached to a state for good
// (AttachMTP) mirrors everything the state evaluates across generations,
// so after two draft-mtp turns of a chat (the second continuing the
// first's state) its draft logits equal those of the block run over the
// whole history in one pass (MTPLogits), bit for bit; a block that saw
// only the second turn (as one made for each GenerateSpec call does) is
// far off. The text is plain greedy decoding's.
func TestAttachMTPKeepsHistory(t *testing.T) {
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35mtp", Type: "Q8_0"}))
	ids := crosscheck.TextIDs(40)
	turn1, extra := ids[:24], ids[24:30]
	never := func(int32) bool { return false }
	o := SpecOptions{Type: SpecDraftMTP, NMax: 2}
	run := func(attachAt int) (hist []int32, gen []int32, s *State) {
		s = newState(t, m, Options{Ctx: 128, Threads: 2, Batch: 8})
		sm := NewSampler(SamplerOptions{}, m.Config.Vocab)
		all := slices.Clone(turn1)
		in := turn1
		for turn := range 2 {
			if turn == attachAt {
				if err := s.AttachMTP(o.NMax); err != nil {
					t.Fatal(err)
				}
			}
			var out []int32
			if _, err := GenerateSpec(s, sm, in, 6, never, func(id int32) error { out = append(out, id); return nil }, o); err != nil {
				t.Fatal(err)
			}
			gen = append(gen, out...)
			all = append(all, out...)
			in = append(slices.Clone(all[s.Pos():]), extra...)
			all = append(all, extra...)
		}
		return all[:s.Pos()], gen, s
	}
	hist, gen, s := run(0)
	next := int32(17)
	got := attachedDraftLogits(t, s, next)
	want, err := MTPLogits(newState(t, m, Options{Ctx: 128, Threads: 2}), hist, next)
	if err != nil {
		t.Fatal(err)
	}
	if d, at := maxDiff(got, want); d != 0 {
		t.Errorf("attached for both turns: draft logits differ from one pass over the history by %g at %d", d, at)
	}
	_, gen2, late := run(1)
	if d, _ := maxDiff(attachedDraftLogits(t, late, next), want); d < 1e-3 {
		t.Errorf("attached for the second turn only: draft logits within %g of the whole history's: the test cannot tell", d)
	}
	var plain []int32
	ps := newState(t, m, Options{Ctx: 128, Threads: 2, Batch: 8})
	psm := NewSampler(SamplerOptions{}, m.Config.Vocab)
	if _, err := Generate(ps, psm, turn1, 6, never, func(id int32) error { plain = append(plain, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gen[:6], plain) || !slices.Equal(gen, gen2) {
		t.Errorf("draft-mtp text %v / %v, plain decoding's first turn %v", gen, gen2, plain)
	}
}

// TestDraftMTPAccepted runs draft-mtp with an MTP block that agrees with
// its model (crosscheck shapes qwen35draft and qwen35moedraft,
// fixture.Model.MTPAgree: a stand-in for a trained block), greedy: the
// text must be plain decoding's, most drafts accepted and fewer passes
// made than tokens generated; and nearly none accepted from the random
// block of the same trunk (qwen35mtp, qwen35moemtp), so that the
// acceptance is the construction's.
func TestDraftMTPAccepted(t *testing.T) {
	prompt := crosscheck.TextIDs(16)
	n := 48
	for _, c := range []struct {
		shape string
		min   float64 // acceptance rate at least
		max   float64 // and at most
	}{
		{"qwen35draft", 0.7, 1}, {"qwen35moedraft", 0.7, 1}, {"qwen35mtp", 0, 0.2}, {"qwen35moemtp", 0, 0.2},
	} {
		m := openModel(t, crossModel(t, crosscheck.Case{Shape: c.shape, Type: "Q8_0"}))
		run := func(o SpecOptions) ([]int32, GenStats, int) {
			s := newState(t, m, Options{Ctx: 256, Threads: 2})
			var out []int32
			st, err := GenerateSpec(s, NewSampler(SamplerOptions{}, m.Config.Vocab), prompt, n, func(int32) bool { return false },
				func(id int32) error { out = append(out, id); return nil }, o)
			if err != nil {
				t.Fatal(err)
			}
			return out, st, s.Pos()
		}
		want, wst, wpos := run(DefaultSpec())
		for _, k := range []int{1, 3} {
			got, st, pos := run(SpecOptions{Type: SpecDraftMTP, NMax: k})
			if !slices.Equal(got, want) || pos != wpos {
				t.Fatalf("%s n-max %d: drafting changed the output (or left the state at %d, not %d):\n got %v\nwant %v",
					c.shape, k, pos, wpos, got, want)
			}
			t.Logf("%s n-max %d: %d drafted, %d accepted (%.2f), %d passes for %d tokens (%d without): %v",
				c.shape, k, st.Drafted, st.Accepted, st.AcceptRate(), st.Passes, st.Generated, wst.Passes, got)
			if r := st.AcceptRate(); r < c.min || r > c.max {
				t.Errorf("%s n-max %d: acceptance %.2f, want %.2f to %.2f", c.shape, k, r, c.min, c.max)
			}
			if c.min > 0 && st.Passes >= st.Generated {
				t.Errorf("%s n-max %d: %d passes for %d tokens", c.shape, k, st.Passes, st.Generated)
			}
		}
	}
}

// TestTopKProb checks draft-mtp's confidence against a plain reference:
// the largest logit's softmax probability over the DraftTopK largest,
// in float64 after a full sort (the first id of the largest on ties).
func TestTopKProb(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for n, l := range [][]float32{
		{1, 3, 3, 2},
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		make([]float32, 600),
	} {
		if n == 2 {
			for i := range l {
				l[i] = float32(rng.NormFloat64())
			}
			l[77] = l[5] // a tie below the top
		}
		ids := make([]int, len(l))
		for i := range ids {
			ids[i] = i
		}
		sort.SliceStable(ids, func(a, b int) bool { return l[ids[a]] > l[ids[b]] })
		var sum float64
		for _, i := range ids[:min(DraftTopK, len(ids))] {
			sum += math.Exp(float64(l[i] - l[ids[0]]))
		}
		id, p := topKProb(l)
		if int(id) != ids[0] || id != argmax(l) || math.Abs(float64(p)-1/sum) > 1e-6 {
			t.Errorf("case %d: topKProb = %d, %g; want %d, %g", n, id, p, ids[0], 1/sum)
		}
	}
}

// TestSpecPMin: --spec-draft-p-min stops draft-mtp's drafts at a token
// below the cutoff and never changes the output. Over cutoffs from 0 to
// 1 on the generated qwen35mtp (an untrained block: its top-10
// probabilities sit a little above 0.1, uniform's) the drafted count
// never rises, 1 drafts nothing, and some cutoff drafts part of what 0
// drafts.
func TestSpecPMin(t *testing.T) {
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35mtp", Type: "Q8_0"}))
	prompt := crosscheck.TextIDs(12)
	gen := func(pmin float32) ([]int32, GenStats) {
		s := newState(t, m, Options{Ctx: 128, Threads: 2})
		var out []int32
		st, err := GenerateSpec(s, NewSampler(SamplerOptions{}, m.Config.Vocab), prompt, 24, func(int32) bool { return false },
			func(id int32) error { out = append(out, id); return nil }, SpecOptions{Type: SpecDraftMTP, NMax: 3, PMin: pmin})
		if err != nil {
			t.Fatal(err)
		}
		return out, st
	}
	want, all := gen(0)
	last, partial := all.Drafted, false
	for _, pmin := range []float32{0.1, 0.11, 0.12, 0.13, 0.14, 0.16, 0.2, 0.3, 0.5, 1} {
		got, st := gen(pmin)
		t.Logf("p_min %g: %d drafted (%d at 0)", pmin, st.Drafted, all.Drafted)
		if !slices.Equal(got, want) {
			t.Errorf("p_min %g changed the output:\n got %v\nwant %v", pmin, got, want)
		}
		if st.Drafted > last {
			t.Errorf("p_min %g: %d drafted, more than %d at a lower cutoff", pmin, st.Drafted, last)
		}
		last = st.Drafted
		partial = partial || (st.Drafted > 0 && st.Drafted < all.Drafted)
	}
	if all.Drafted == 0 || last != 0 || !partial {
		t.Errorf("drafted %d at 0, %d at 1, a cutoff between cutting part: %v", all.Drafted, last, partial)
	}
	if err := (SpecOptions{Type: SpecDraftMTP, NMax: 3, PMin: 1.5}).Check(); err == nil {
		t.Error("p_min 1.5 passed Check")
	}
}
