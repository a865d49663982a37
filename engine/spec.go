package engine

import (
	"errors"
	"fmt"
	"time"
)

// Speculative decoding types, as llama.cpp's --spec-type spells them.
const (
	SpecNone        = "none"
	SpecNgramSimple = "ngram-simple"
	SpecDraftMTP    = "draft-mtp"
)

// SpecOptions configures speculative decoding (llama.cpp's speculative
// parameters, with its defaults from DefaultSpec).
type SpecOptions struct {
	// Type is SpecNone, SpecNgramSimple or SpecDraftMTP (the model's own
	// NextN/MTP block drafts, greedily).
	Type string
	// NMax is the most tokens drafted per step (--spec-draft-n-max).
	NMax int
	// NMin is the fewest drafted tokens worth a verification batch
	// (--spec-draft-n-min): a shorter draft is dropped.
	NMin int
	// PMin is draft-mtp's confidence cutoff (--spec-draft-p-min): drafting
	// stops before a token whose probability among the block's top
	// DraftTopK candidates is below it, as llama.cpp's draft sampler
	// (top-k, greedy) stops. 0, the default, never stops a draft;
	// ngram-simple has no probabilities and ignores it.
	PMin float32
	// NgramN is ngram-simple's lookup length (--spec-ngram-simple-size-n):
	// the last NgramN tokens (the one just sampled included) are searched
	// for in the history.
	NgramN int
	// NgramM is ngram-simple's draft length (--spec-ngram-simple-size-m):
	// the tokens after the match that are drafted (then cut to NMax).
	NgramM int

	// drafter replaces the type's drafter (tests): up to k tokens to
	// follow id after hist.
	drafter func(hist []int32, id int32, k int) []int32
}

// DefaultSpec returns llama.cpp 0.7.0's defaults, speculation off.
func DefaultSpec() SpecOptions {
	return SpecOptions{Type: SpecNone, NMax: 3, NgramN: 12, NgramM: 48}
}

// Check validates o.
func (o SpecOptions) Check() error {
	switch o.Type {
	case SpecNone, "":
		return nil
	case SpecNgramSimple, SpecDraftMTP:
	default:
		return fmt.Errorf("speculative type %q: this runtime has %s, %s and %s", o.Type, SpecNone, SpecNgramSimple, SpecDraftMTP)
	}
	switch {
	case o.NMax < 1:
		return fmt.Errorf("--spec-draft-n-max %d: at least 1 token must be drafted", o.NMax)
	case !(o.PMin >= 0 && o.PMin <= 1):
		return fmt.Errorf("--spec-draft-p-min %g must be a probability, between 0 and 1", o.PMin)
	case o.NMin < 0 || o.NMin > o.NMax:
		return fmt.Errorf("--spec-draft-n-min %d must be between 0 and --spec-draft-n-max %d", o.NMin, o.NMax)
	case o.Type == SpecNgramSimple && (o.NgramN < 1 || o.NgramM < 1):
		return fmt.Errorf("ngram-simple sizes n=%d, m=%d must be at least 1", o.NgramN, o.NgramM)
	}
	return nil
}

// on reports whether o drafts at all.
func (o SpecOptions) on() bool { return o.Type != "" && o.Type != SpecNone }

// ngramSimpleDraft is llama.cpp's common_ngram_simple_draft: the pattern
// is the last n tokens of the history with sampled (not yet in hist)
// as its last; the most recent earlier occurrence of it (position 0
// excluded, as there) gives the draft, the up to m tokens that followed
// it. As in llama.cpp there is no draft while the history holds n+m+1
// tokens or fewer, nor when fewer than n tokens follow the match.
func ngramSimpleDraft(hist []int32, sampled int32, n, m int) []int32 {
	cur := len(hist)
	if cur <= n+m+1 {
		return nil
	}
	pattern := hist[cur-n+1:]
	for j := cur - n - 1; j > 0; j-- {
		if hist[j+n-1] != sampled || !equalTokens(hist[j:j+n-1], pattern) {
			continue
		}
		k := min(m, cur-(j+n))
		if k < n {
			return nil
		}
		return hist[j+n : j+n+k]
	}
	return nil
}

func equalTokens(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// specRun is the state of one speculative generation.
type specRun struct {
	s    *State
	o    SpecOptions
	hist []int32 // prompt and accepted tokens, the pending id not included
	// rows holds the logits of each row of a verification batch.
	rows []float32
	// snap is the recurrent layers' state before the last verification
	// batch (nil for a model without recurrent layers); replay the tokens
	// evaluated since that must be run again from it before the next
	// tokens (their logits are known already).
	snap   [][]float32
	replay []int32
	mtp    *mtpDraft // draft-mtp's block, mirrored beside s
}

// checkpoint copies the recurrent layers' state (qwen35's Gated DeltaNet,
// bailingmoe3's KDA: convolution inputs and delta-rule matrices), which a
// verification batch advances past tokens that may be rejected. Layers
// whose state is indexed by position (the KV cache, MLA's latent cache)
// need no copy: the rejected positions are overwritten.
func (r *specRun) checkpoint() {
	s := r.s
	if r.snap == nil {
		r.snap = make([][]float32, len(s.mix))
	}
	for l, st := range s.mix {
		if st == nil || !s.m.Layers[l].Mixer.recurrent() {
			continue
		}
		if r.snap[l] == nil {
			r.snap[l] = make([]float32, len(st))
		}
		copy(r.snap[l], st)
	}
}

// rollback leaves the state at position keep, inside the last
// verification batch, which began at pos0 after the replayed tokens.
// Attention and latent caches only move the position back. The recurrent
// state goes back to its checkpoint, and the tokens between the
// checkpoint and keep are replayed in front of the next batch: one
// forward pass over the weights instead of two, which is what a model
// whose weights are read from flash pays for.
func (r *specRun) rollback(batch []int32, pos0, keep int) {
	s := r.s
	if keep == s.pos {
		r.replay = r.replay[:0]
		return
	}
	if !s.recurrentState() {
		s.pos = keep
		return
	}
	for l, st := range r.snap {
		if st != nil {
			copy(s.mix[l], st)
		}
	}
	s.pos = pos0 - len(r.replay)
	r.replay = append(r.replay, batch[:keep-pos0]...)
}

// settle runs the pending replay so the state holds every token it
// reports (Pos), as Generate leaves it: a chat continues from there.
func (r *specRun) settle() error {
	if len(r.replay) == 0 {
		return nil
	}
	err := r.s.Eval(r.replay, len(r.replay), nil)
	r.replay = r.replay[:0]
	return err
}

// GenerateSpec is Generate with speculative decoding: after each sampled
// token the drafter proposes up to o.NMax more, the model evaluates the
// token and its draft in one batch (one forward pass, one read of every
// weight and of every expert the batch routes to), and the sampler goes
// through the batch's logits row by row, keeping the drafted tokens while
// they are what it samples. The first token it samples differently ends
// the step: the caches go back to the last accepted position (and the
// recurrent state to its checkpoint, the accepted tokens run again in
// front of the next batch). The sampler sees the same logits in the same
// order as without drafting, so the output is the same token for token,
// greedy or sampled with a seed: the integer kernels give a batch's rows
// the bits of one token at a time, and float weights (an F32 router, F32
// or F16 files) run their rows one at a time during generation
// (kernels.Products.SetRowExact), the order a single token's pass sums in. The
// stats count
// drafted and accepted tokens and the forward passes of the generation.
func GenerateSpec(s *State, sm *Sampler, prompt []int32, n int, isEOG func(int32) bool, emit func(id int32) error, o SpecOptions) (st GenStats, err error) {
	if !o.on() {
		return Generate(s, sm, prompt, n, isEOG, emit)
	}
	if err := o.Check(); err != nil {
		return GenStats{PromptTokens: len(prompt)}, err
	}
	st = GenStats{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return st, errors.New("empty prompt: a model needs at least one token (BOS) to start")
	}
	V := s.c.Vocab
	r := &specRun{s: s, o: o, hist: append(make([]int32, 0, len(prompt)+max(n, 0)+1), prompt...)}
	r.rows = make([]float32, (o.NMax+1)*V)
	switch {
	case o.Type != SpecDraftMTP || o.drafter != nil:
	case s.draft != nil:
		if o.NMax > s.draft.nmax {
			return st, fmt.Errorf("draft-mtp: the MTP block was attached for drafts of up to %d tokens, not %d", s.draft.nmax, o.NMax)
		}
		r.mtp = s.draft
	default:
		if r.mtp, err = newMTPDraft(s, o.NMax); err != nil {
			return st, err
		}
		defer r.mtp.close()
		s.hidden = r.mtp.mirror
		defer func() { s.hidden = nil }()
	}
	if st.PromptTime, err = evalPrompt(s, sm, prompt, func(_ int, l []float32) { copy(r.rows, l) }); err != nil {
		return st, err
	}
	t1 := time.Now()
	defer func() { st.GenTime = time.Since(t1) }()
	s.mm.SetRowExact(true)
	defer s.mm.SetRowExact(false)
	defer func() {
		if err == nil {
			err = r.settle()
		}
	}()
	// next samples from one row of logits and emits the token; stop is
	// set when generation ends there.
	next := func(l []float32) (id int32, stop bool, err error) {
		id = sm.Sample(l)
		if isEOG(id) {
			st.Stop = StopEOG
			return id, true, nil
		}
		sm.Accept(id)
		st.Generated++
		if err := emit(id); err != nil {
			return id, true, err
		}
		if n >= 0 && st.Generated >= n {
			st.Stop = StopLimit
			return id, true, nil
		}
		return id, false, nil
	}
	if n == 0 {
		st.Stop = StopLimit
		return st, nil
	}
	id, stop, err := next(r.rows[:V])
	batch := make([]int32, 0, o.NMax+1)
	for !stop && err == nil {
		if s.Pos()+len(r.replay) >= s.Ctx() {
			st.Stop = StopCtx
			break
		}
		room := s.Ctx() - s.Pos() - len(r.replay) - 1
		if n >= 0 {
			// Row i gives generated token st.Generated+i+1: rows past
			// the limit would be evaluated for nothing.
			room = min(room, n-st.Generated-1)
		}
		var draft []int32
		if draft, err = r.draft(id, min(o.NMax, room)); err != nil {
			break
		}
		r.hist = append(r.hist, id)
		batch = append(append(batch[:0], id), draft...)
		if len(draft) > 0 && len(r.replay) > o.NMax {
			// Rejections in a row grow the replay: run it on its own
			// and checkpoint again, so batches stay within NMax+1 rows
			// of new tokens plus one step's replay.
			st.Passes++
			if err = r.settle(); err != nil {
				break
			}
		}
		if len(draft) > 0 && s.recurrentState() && len(r.replay) == 0 {
			r.checkpoint()
		}
		pos0 := s.Pos() + len(r.replay)
		in := append(r.replay, batch...)
		skip := len(r.replay)
		err = s.Eval(in, skip, func(i int, l []float32) { copy(r.rows[(i-skip)*V:], l) })
		st.Passes++
		if err != nil {
			break
		}
		st.Drafted += len(draft)
		if len(draft) > 0 {
			st.Drafts++
		}
		for i := 0; i <= len(draft); i++ {
			var t int32
			t, stop, err = next(r.rows[i*V : (i+1)*V])
			if i < len(draft) && t == draft[i] && !stop && err == nil {
				st.Accepted++
				for len(st.AcceptedAt) <= i {
					st.AcceptedAt = append(st.AcceptedAt, 0)
				}
				st.AcceptedAt[i]++
				r.hist = append(r.hist, t)
				continue
			}
			// Row i's logits follow batch[:i+1]: the state keeps those.
			r.rollback(batch, pos0, pos0+i+1)
			id = t
			break
		}
	}
	return st, err
}

// draft proposes up to k tokens to follow id.
func (r *specRun) draft(id int32, k int) ([]int32, error) {
	if k < max(1, r.o.NMin) {
		return nil, nil
	}
	var d []int32
	switch {
	case r.o.drafter != nil:
		d = r.o.drafter(r.hist, id, k)
	case r.mtp != nil:
		var err error
		if d, err = r.mtp.draft(r.s.Pos()+len(r.replay), id, k, r.o.PMin); err != nil {
			return nil, err
		}
	default:
		d = ngramSimpleDraft(r.hist, id, r.o.NgramN, r.o.NgramM)
	}
	if len(d) > k {
		d = d[:k]
	}
	if len(d) < r.o.NMin {
		return nil, nil
	}
	return d, nil
}
