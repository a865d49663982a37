package engine

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ggufkit/gguf/kernels"
)

// Tokenizer is what generation and scoring need from a model's tokenizer;
// vocabselect.Tokenizer implements it.
type Tokenizer interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
	TokenToPiece(id int32, special bool) []byte
	IsEOG(id int32) bool
}

// Stop reasons of Generate.
const (
	StopEOG   = "end of generation token"
	StopLimit = "token limit (-n)"
	StopCtx   = "context full"
)

// GenStats reports a generation.
type GenStats struct {
	PromptTokens, Generated int
	PromptTime, GenTime     time.Duration
	Stop                    string
	// Passes counts the forward passes of the generation (the prompt's
	// not included); Drafted and Accepted the tokens speculative decoding
	// drafted and the sampler kept (GenerateSpec), Drafts the steps that
	// verified a draft.
	Passes, Drafted, Accepted, Drafts int
	// AcceptedAt counts the accepted tokens by their place in their draft
	// (0: a draft's first token).
	AcceptedAt []int
}

// AcceptRate returns the share of drafted tokens accepted, 0 without
// drafts: llama.cpp's "draft acceptance rate".
func (st GenStats) AcceptRate() float64 {
	if st.Drafted == 0 {
		return 0
	}
	return float64(st.Accepted) / float64(st.Drafted)
}

// TokensPerPass returns the generated tokens per forward pass, 0 without
// a pass.
func (st GenStats) TokensPerPass() float64 {
	if st.Passes == 0 {
		return 0
	}
	return float64(st.Generated) / float64(st.Passes)
}

// PromptRate returns the prompt's tokens per second, 0 for no time.
func (st GenStats) PromptRate() float64 { return perSecond(st.PromptTokens, st.PromptTime) }

// GenRate returns the generated tokens per second, 0 for no time: the
// figure gguf run, the chat and the demo print.
func (st GenStats) GenRate() float64 { return perSecond(st.Generated, st.GenTime) }

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Generate evaluates prompt, then samples up to n tokens (n < 0: until the
// context is full), calling emit with each one as soon as it is chosen.
// An end-of-generation token stops it and is not emitted. An error of emit
// ends it too, with the stats so far (a caller's stop string).
func Generate(s *State, sm *Sampler, prompt []int32, n int, isEOG func(int32) bool, emit func(id int32) error) (GenStats, error) {
	return GenerateLogits(s, sm, prompt, n, isEOG, func(id int32, _ []float32) error { return emit(id) }, false)
}

// GenerateLogits is Generate for a caller that reports each token's
// probabilities (a server's n_probs): with logits set, emit also gets the
// model's logits the token was drawn from, as the model gave them (before
// the sampler's penalties and bans); emit must not keep them past its
// return. Without logits emit gets nil, and no copy is made.
func GenerateLogits(s *State, sm *Sampler, prompt []int32, n int, isEOG func(int32) bool, emit func(id int32, logits []float32) error, logits bool) (st GenStats, err error) {
	st = GenStats{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return st, errors.New("empty prompt: a model needs at least one token (BOS) to start")
	}
	last := make([]float32, s.c.Vocab)
	var raw []float32
	if logits {
		raw = make([]float32, s.c.Vocab)
	}
	keep := func(_ int, l []float32) { copy(last, l) }
	if st.PromptTime, err = evalPrompt(s, sm, prompt, keep); err != nil {
		return st, err
	}
	t1 := time.Now()
	// Named results: the deferred time is also in what an emit error returns.
	defer func() { st.GenTime = time.Since(t1) }()
	for {
		if n >= 0 && st.Generated >= n {
			st.Stop = StopLimit
			break
		}
		if raw != nil {
			// Sample changes last (penalties, bans): the model's logits
			// are kept for emit first.
			copy(raw, last)
		}
		id := sm.Sample(last)
		if isEOG(id) {
			st.Stop = StopEOG
			break
		}
		sm.Accept(id)
		st.Generated++
		if err := emit(id, raw); err != nil {
			return st, err
		}
		if n >= 0 && st.Generated >= n {
			st.Stop = StopLimit
			break
		}
		if s.Pos() >= s.Ctx() {
			st.Stop = StopCtx
			break
		}
		st.Passes++
		if err := s.Eval([]int32{id}, 0, keep); err != nil {
			return st, err
		}
	}
	return st, nil
}

// evalPrompt evaluates a generation's prompt, handing the last
// position's logits to keep, records its tokens in the sampler's history
// and returns the time it took.
func evalPrompt(s *State, sm *Sampler, prompt []int32, keep func(int, []float32)) (time.Duration, error) {
	t0 := time.Now()
	if err := s.Eval(prompt, len(prompt)-1, keep); err != nil {
		return 0, err
	}
	for _, id := range prompt {
		sm.Accept(id)
	}
	return time.Since(t0), nil
}

// PerplexityResult reports a perplexity run.
type PerplexityResult struct {
	Chunks int
	// Scored is the number of predictions scored; Misses the targets a
	// pruned head cannot produce (logit -inf), skipped and not scored.
	Scored, Misses int
	// PPL and PPLErr are over the head's tokens only (misses skipped): a
	// pruned head's softmax spreads the missing tokens' probability over
	// the tokens it keeps, so this figure is lower than an unpruned
	// model's and does not compare with it.
	PPL, PPLErr float64
	// ChargedPPL and ChargedPPLErr count every target. With
	// PerplexityOptions.Full (MissCharge "full model") they score a
	// distribution over the whole vocabulary: the pruned model's
	// probabilities over its head, scaled by the share the unpruned model
	// gives the head's tokens, and the unpruned model's probabilities for
	// the rest, so each miss costs its unpruned log-probability and no head
	// token gains from the missing ones; a head cut without other changes
	// then scores exactly the unpruned model's PPL. Without Full
	// (MissCharge "fixed") each miss is charged ln(vocabulary size), a
	// uniform guess over the whole vocabulary, and the head's tokens keep
	// their probabilities. Without misses they equal PPL and PPLErr.
	ChargedPPL, ChargedPPLErr float64
	MissCharge                string
	// MissNLL is the mean negative log-probability charged per miss.
	MissNLL float64
	// HeadShare is the unpruned model's mean probability of the head's
	// tokens at the scored positions (Full only, else 0).
	HeadShare float64
	// FullPPL is the unpruned model's perplexity over the same targets
	// (PerplexityOptions.Full only, else 0).
	FullPPL float64
	// Running holds the perplexity after each chunk, as llama-perplexity
	// prints it.
	Running []float64
}

// PerplexityOptions tunes Perplexity.
type PerplexityOptions struct {
	// Ctx is the chunk size in tokens, at least 3 (the second half of a
	// chunk's predictions is scored, none with 2) and at most the state's
	// context size.
	Ctx int
	// MaxChunks limits the chunks scored (0: all).
	MaxChunks int
	// BOS replaces the first token of each chunk when >= 0.
	BOS int32
	// Full, if set, runs the unpruned model a pruned head was cut from (the
	// same vocabulary) over the same chunks: each miss is charged its
	// log-probability there, and FullPPL is reported.
	Full *State
	// Progress, if set, gets the running perplexity after each chunk.
	Progress func(chunk int, ppl float64)
}

// TokenSource fills buf with the next len(buf) tokens of a text and
// reports false when fewer than that remain.
type TokenSource func(buf []int32) (bool, error)

// SliceTokens is a TokenSource over a slice.
func SliceTokens(tokens []int32) TokenSource {
	return func(buf []int32) (bool, error) {
		if len(tokens) < len(buf) {
			return false, nil
		}
		tokens = tokens[copy(buf, tokens):]
		return true, nil
	}
}

// Perplexity scores a text with llama-perplexity's method: the text is cut
// into chunks of o.Ctx tokens, read one at a time from next (so a text of
// any length needs one chunk of tokens), the first token of each replaced by
// o.BOS, each chunk evaluated from an empty cache, and the second half of
// each chunk's predictions scored: log p = logit - max - log(sum exp(logit -
// max)), PPL = exp(mean NLL), error = PPL x the standard error of the mean
// NLL.
func Perplexity(s *State, next TokenSource, o PerplexityOptions) (PerplexityResult, error) {
	var r PerplexityResult
	ctx := o.Ctx
	if ctx < 3 || ctx > s.Ctx() {
		return r, fmt.Errorf("perplexity context %d must be between 3 (the second half of a chunk's predictions is scored) and the state's context size %d", ctx, s.Ctx())
	}
	if f := o.Full; f != nil && (f.c.Vocab != s.c.Vocab || f.Ctx() < ctx) {
		return r, fmt.Errorf("the full model has %d tokens and a context of %d, the scored one %d tokens and a chunk of %d", f.c.Vocab, f.Ctx(), s.c.Vocab, ctx)
	}
	r.MissCharge, r.MissNLL = "fixed", math.Log(float64(s.c.Vocab))
	if o.Full != nil {
		r.MissCharge, r.MissNLL = "full model", 0
	}
	tokens := make([]int32, ctx)
	chunk := make([]int32, ctx)
	first := ctx / 2
	fullNLL := make([]float64, ctx)
	headLog := make([]float64, ctx) // log of the unpruned model's probability of the head's tokens
	head := s.m.OutputIDs
	var nll, nll2, charged, charged2, missed, full, share float64
	for c := 0; o.MaxChunks <= 0 || c < o.MaxChunks; c++ {
		ok, err := next(tokens)
		if err != nil {
			return r, err
		}
		if !ok {
			break
		}
		copy(chunk, tokens)
		if o.BOS >= 0 {
			chunk[0] = o.BOS
		}
		if o.Full != nil {
			o.Full.Reset()
			err := o.Full.Eval(chunk[:ctx-1], first, func(i int, l []float32) {
				mx, logSum := logSumExp(l)
				fullNLL[i] = logSum - float64(l[tokens[i+1]]-mx)
				full += fullNLL[i]
				if head != nil {
					var sum float64
					for _, id := range head {
						sum += float64(kernels.Expf(l[id] - mx))
					}
					headLog[i] = math.Log(sum) - logSum
					share += math.Exp(headLog[i])
				}
			})
			if err != nil {
				return r, err
			}
		}
		s.Reset()
		err = s.Eval(chunk[:ctx-1], first, func(i int, l []float32) {
			target := tokens[i+1]
			if math.IsInf(float64(l[target]), -1) {
				r.Misses++
				v := r.MissNLL
				if o.Full != nil {
					v = fullNLL[i]
					missed += v
				}
				charged += v
				charged2 += float64(v * v)
				return
			}
			v := tokenNLL(l, target)
			nll += v
			nll2 += float64(v * v)
			c := v
			if o.Full != nil {
				c -= headLog[i]
			}
			charged += c
			charged2 += float64(c * c)
			r.Scored++
		})
		if err != nil {
			return r, err
		}
		r.Chunks++
		ppl := math.Exp(nll / float64(max(1, r.Scored)))
		r.Running = append(r.Running, ppl)
		if o.Progress != nil {
			o.Progress(c+1, ppl)
		}
	}
	if r.Chunks == 0 {
		return r, fmt.Errorf("the text has fewer tokens than one context (%d)", ctx)
	}
	if r.Scored == 0 {
		return r, errors.New("no token could be scored (all targets outside the head)")
	}
	r.PPL, r.PPLErr = pplAndErr(nll, nll2, r.Scored)
	r.ChargedPPL, r.ChargedPPLErr = pplAndErr(charged, charged2, r.Scored+r.Misses)
	if o.Full != nil {
		r.FullPPL = math.Exp(full / float64(r.Scored+r.Misses))
		if r.Misses > 0 {
			r.MissNLL = missed / float64(r.Misses)
		}
		r.HeadShare = 1
		if head != nil {
			r.HeadShare = share / float64(r.Scored+r.Misses)
		}
	}
	return r, nil
}

// tokenNLL is the negative log-probability of target under logits l.
func tokenNLL(l []float32, target int32) float64 {
	mx, logSum := logSumExp(l)
	return logSum - float64(l[target]-mx)
}

// logSumExp returns the largest logit and log(sum exp(logit - max)), as
// llama-perplexity computes them.
func logSumExp(l []float32) (mx float32, logSum float64) {
	mx = l[0]
	for _, v := range l {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range l {
		sum += float64(kernels.Expf(v - mx))
	}
	return mx, math.Log(sum)
}

// pplAndErr turns n summed NLLs and their squares into a perplexity and its
// error: PPL x the standard error of the mean NLL.
func pplAndErr(sum, sum2 float64, n int) (ppl, pplErr float64) {
	mean := sum / float64(n)
	ppl = math.Exp(mean)
	if v := sum2/float64(n) - float64(mean*mean); v > 0 && n > 1 {
		pplErr = math.Sqrt(v/float64(n-1)) * ppl
	}
	return ppl, pplErr
}

// BitsPerByte converts a perplexity into bits per byte of text: log2(PPL)
// bits per token times the text's tokens per byte, so that models with
// different tokenizers compare.
func BitsPerByte(ppl float64, textTokens, textBytes int) float64 {
	if textBytes == 0 {
		return 0
	}
	return math.Log2(ppl) * float64(textTokens) / float64(textBytes)
}
