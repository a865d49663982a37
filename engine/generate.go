package engine

import (
	"errors"
	"math"
	"time"
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
}

// Generate evaluates prompt, then samples up to n tokens (n < 0: until the
// context is full), calling emit with each one as soon as it is chosen.
// An end-of-generation token stops it and is not emitted.
func Generate(s *State, sm *Sampler, prompt []int32, n int, isEOG func(int32) bool, emit func(id int32) error) (GenStats, error) {
	st := GenStats{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return st, errors.New("empty prompt: a model needs at least one token (BOS) to start")
	}
	last := make([]float32, s.c.Vocab)
	keep := func(_ int, l []float32) { copy(last, l) }
	t0 := time.Now()
	if err := s.Eval(prompt, len(prompt)-1, keep); err != nil {
		return st, err
	}
	for _, id := range prompt {
		sm.Accept(id)
	}
	st.PromptTime = time.Since(t0)
	t1 := time.Now()
	defer func() { st.GenTime = time.Since(t1) }()
	for {
		if n >= 0 && st.Generated >= n {
			st.Stop = StopLimit
			break
		}
		id := sm.Sample(last)
		if isEOG(id) {
			st.Stop = StopEOG
			break
		}
		sm.Accept(id)
		st.Generated++
		if err := emit(id); err != nil {
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
		if err := s.Eval([]int32{id}, 0, keep); err != nil {
			return st, err
		}
	}
	st.GenTime = time.Since(t1)
	return st, nil
}

// PerplexityResult reports a perplexity run.
type PerplexityResult struct {
	Chunks int
	// Scored is the number of predictions scored; Misses the targets a
	// pruned head cannot produce (logit -inf), skipped and not scored.
	Scored, Misses int
	PPL, PPLErr    float64
	// Running holds the perplexity after each chunk, as llama-perplexity
	// prints it.
	Running []float64
}

// Perplexity scores tokens with llama-perplexity's method: the text is cut
// into chunks of ctx tokens (at most maxChunks, 0: all), the first token
// of each replaced by bos when bos >= 0, each chunk evaluated from an empty
// cache, and the second half of each chunk's predictions scored:
// log p = logit - max - log(sum exp(logit - max)), PPL = exp(mean NLL),
// error = PPL x the standard error of the mean NLL.
func Perplexity(s *State, tokens []int32, ctx, maxChunks int, bos int32, progress func(chunk int, ppl float64)) (PerplexityResult, error) {
	var r PerplexityResult
	if ctx < 2 || ctx > s.Ctx() {
		return r, errors.New("perplexity context must be between 2 and the state's context size")
	}
	n := len(tokens) / ctx
	if maxChunks > 0 {
		n = min(n, maxChunks)
	}
	if n == 0 {
		return r, errors.New("the text has fewer tokens than one context")
	}
	chunk := make([]int32, ctx)
	first := ctx / 2
	var nll, nll2 float64
	for c := 0; c < n; c++ {
		copy(chunk, tokens[c*ctx:(c+1)*ctx])
		if bos >= 0 {
			chunk[0] = bos
		}
		s.Reset()
		err := s.Eval(chunk[:ctx-1], first, func(i int, l []float32) {
			target := tokens[c*ctx+i+1]
			if math.IsInf(float64(l[target]), -1) {
				r.Misses++
				return
			}
			mx := l[0]
			for _, v := range l {
				mx = max(mx, v)
			}
			var sum float64
			for _, v := range l {
				sum += float64(expf(v - mx))
			}
			v := -(float64(l[target]-mx) - math.Log(sum))
			nll += v
			nll2 += v * v
			r.Scored++
		})
		if err != nil {
			return r, err
		}
		ppl := math.Exp(nll / float64(max(1, r.Scored)))
		r.Running = append(r.Running, ppl)
		if progress != nil {
			progress(c+1, ppl)
		}
	}
	r.Chunks = n
	if r.Scored == 0 {
		return r, errors.New("no token could be scored (all targets outside the head)")
	}
	mean := nll / float64(r.Scored)
	r.PPL = math.Exp(mean)
	if v := nll2/float64(r.Scored) - mean*mean; v > 0 && r.Scored > 1 {
		r.PPLErr = math.Sqrt(v/float64(r.Scored-1)) * r.PPL
	}
	return r, nil
}

// BitsPerByte converts a perplexity into bits per byte of text: log2(PPL)
// bits per token times the text's tokens per byte, so that models with
// different tokenizers compare (the seeds' E25/E29 measure).
func BitsPerByte(ppl float64, textTokens, textBytes int) float64 {
	if textBytes == 0 {
		return 0
	}
	return math.Log2(ppl) * float64(textTokens) / float64(textBytes)
}
