package engine

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
)

// Options configures a State.
type Options struct {
	// Ctx is the number of positions the KV cache holds (default: the
	// model's context_length).
	Ctx int
	// Threads is the number of worker goroutines for matrix products
	// (default 1).
	Threads int
	// TypeK and TypeV are the KV cache's types: gguf.TypeF32 (the zero
	// value), gguf.TypeF16 or gguf.TypeQ8_0 (CacheTypes; llama.cpp's
	// -ctk/-ctv, whose default is f16). The other types need heads of
	// whole blocks (f16: any; q8_0: a multiple of 32 elements).
	TypeK, TypeV gguf.Type
	// AttnEps, when above 0 (and below 1), prunes attention: a position
	// whose score is below the head's maximum + ln(AttnEps), a
	// probability below AttnEps times the largest one's, gets no exp and
	// no value sum, and the softmax is normalized over the kept positions
	// only (as the seeds' pruned attention, E86/E124, skips their expf).
	// 0 keeps every position, bit for bit the unpruned attention.
	AttnEps float64
	// Batch is the number of tokens processed together when evaluating a
	// prompt (default: as many as fit batchBuffers, a multiple of 4 from
	// 32 to 512).
	Batch int
	// Pager configures the expert pager; a model opened with
	// OpenOptions.PageExperts needs it, others refuse it.
	Pager *PagerOptions
	// Trace, when not nil, records each MoE layer call's experts (for
	// gguf moe simulate). The caller flushes it.
	Trace *pager.TraceWriter
	// Thrash, for a model that is not paged, charges every weight byte a
	// forward pass reads to this simulated flash: a whole-file mapping on
	// a device whose page cache keeps nothing from one token to the next,
	// the case stock llama.cpp hits when a model is larger than RAM (the
	// seeds' §10: the whole model re-read for every token). It is the
	// baseline the pager's runs under the same flash are compared with.
	Thrash *pager.Flash
}

// batchBuffers is what the default batch lets the per-token buffers of a
// State take: larger batches amortize each weight row over more tokens
// (and the hand-offs to the worker threads), but the buffers count in the
// runtime's peak memory, which should stay within a few MB of weights plus
// KV cache.
const batchBuffers = 4 << 20

// tokenBufferBytes returns the bytes of State buffers per batch token.
func tokenBufferBytes(m *Model) int {
	c := &m.Config
	maxCols := c.maxCols()
	floats := 3*c.Embd + 2*maxCols + 2*c.QDim() + 2*c.KVDim() + 2*c.maxFF() + mixerTokenFloats(m)
	if c.Experts > 0 {
		floats += moeBufferFloats(c)
	}
	if c.fam.attnGate {
		floats += 2 * c.QDim()
	}
	return 4*floats + kernels.ActRowBytes(gguf.TypeF32, maxCols)
}

// State is one inference context: a KV cache (attention layers), the
// recurrent state (Gated DeltaNet layers: fixed size, RecurrentBytes) and
// every buffer a forward pass needs, allocated once so that evaluating a
// token allocates nothing.
// It is not safe for concurrent use.
type State struct {
	m     *Model
	c     *Config
	ctx   int
	pos   int
	batch int

	// kv is the KV cache (kvcache.go). Layer l's slot is kvSlot[l];
	// recurrent layers have none.
	kv     *kvCache
	kvSlot []int
	// qg is the gated attention's query projection, [batch][heads][q, gate].
	qg []float32

	// dt is the Gated DeltaNet layers' delta-rule task (qwen35.go).
	dt deltaTask

	x, xb, xb2, q, k, v, ao, hb, hb2 []float32
	rope                             []float32
	logits                           []float32 // [logitRows][vocab]
	head                             []float32 // pruned head: [logitRows][rows]
	logitRows                        int

	moe    *moeBuffers
	pg     *statePager // the expert pager of a paged model, or nil
	trace  *pager.TraceWriter
	thrash *pager.Flash

	// mix is the per-layer state of the layers with mixers (nil entries
	// for the others), mixScratch their shared batch buffers.
	mix        [][]float32
	mixScratch []float32

	// hidden, when set, gets each batch's final hidden states (before
	// the output norm) after the forward pass, at positions p0..: the
	// MTP block mirrors the batch (mtpDraft.mirror).
	hidden func(p0 int, tokens []int32, x []float32) error
	// inject, when set, fills s.x for a batch in place of the token
	// embeddings: the MTP block's input (mtpDraft.inject).
	inject func(s *State, tokens []int32) error
	// draft is the MTP block attached for good (AttachMTP), nil if none.
	draft *mtpDraft

	pool *kernels.Pool
	mm   *kernels.Products
	at   attnTask
}

// NewState allocates an inference context for m.
func NewState(m *Model, o Options) (*State, error) {
	c := &m.Config
	if o.Ctx <= 0 {
		o.Ctx = c.ContextLength
	}
	if o.Ctx <= 0 || o.Ctx > maxDim {
		return nil, fmt.Errorf("context size %d is out of range", o.Ctx)
	}
	o.Threads = max(1, o.Threads)
	if !(o.AttnEps >= 0 && o.AttnEps < 1) {
		return nil, fmt.Errorf("attention pruning threshold %g is outside [0, 1)", o.AttnEps)
	}
	if o.Batch <= 0 {
		// A multiple of 4: the four-row kernels (dot4) then leave no
		// activation rows to the slower one-row products but in a
		// prompt's last batch.
		o.Batch = min(512, max(32, batchBuffers/tokenBufferBytes(m))) &^ 3
	}
	s := &State{m: m, c: c, ctx: o.Ctx, batch: o.Batch}
	s.kvSlot = make([]int, c.Layers)
	slots := 0
	for l := range c.Layers {
		s.kvSlot[l] = slots
		if m.Layers[l].attends() {
			slots++
		}
	}
	kv, err := newKVCache(o.TypeK, o.TypeV, slots, o.Ctx, c.KVDim(), c.HeadDim)
	if err != nil {
		return nil, err
	}
	s.kv = kv
	b := o.Batch
	maxCols := c.maxCols()
	s.x = make([]float32, b*c.Embd)
	s.xb = make([]float32, b*maxCols)
	s.xb2 = make([]float32, b*c.Embd)
	s.q = make([]float32, b*c.QDim())
	s.k = make([]float32, b*c.KVDim())
	s.v = make([]float32, b*c.KVDim())
	s.ao = make([]float32, b*c.QDim())
	s.hb = make([]float32, b*c.maxFF())
	s.hb2 = make([]float32, b*c.maxFF())
	s.rope = make([]float32, c.RopeDims)
	// Logits are computed for a few rows at a time so that a large
	// vocabulary does not need batch x vocab floats (1 MB at most).
	s.logitRows = max(1, min(b, (256<<10)/c.Vocab))
	s.logits = make([]float32, s.logitRows*c.Vocab)
	if m.OutputIDs != nil {
		s.head = make([]float32, s.logitRows*m.Output.Rows)
	}
	s.pool = kernels.NewPool(o.Threads)
	s.mm = kernels.NewProducts(s.pool, b, maxCols, m.q2lutCols())
	s.at.scratch = make([]attnScratch, o.Threads)
	for w := 0; w < o.Threads; w++ {
		s.at.scratch[w] = newAttnScratch(o.Ctx, c.HeadDim)
		if o.AttnEps > 0 {
			s.at.scratch[w].addPruning(o.Ctx, c.HeadDim)
		}
	}
	if o.AttnEps > 0 {
		s.at.lnEps = float32(math.Log(o.AttnEps))
	}
	if c.Experts > 0 {
		s.moe = newMoEBuffers(m, c, b, o.Threads)
		s.moe.serial.hb, s.moe.serial.hb2 = s.hb, s.hb2
	}
	s.newMixerState(o.Ctx, b, o.Threads)
	if c.fam.attnGate {
		s.qg = make([]float32, b*2*c.QDim())
	}
	s.trace = o.Trace
	switch {
	case o.Thrash != nil && m.paged != nil:
		s.pool.Close()
		return nil, fmt.Errorf("the thrash model is for models that are not paged: a paged model's flash is PagerOptions.Flash")
	case o.Thrash != nil:
		s.thrash = o.Thrash
	case m.paged != nil:
		pg, err := newStatePager(m, c, o.Pager)
		if err != nil {
			s.pool.Close()
			return nil, err
		}
		s.pg = pg
	case o.Pager != nil:
		s.pool.Close()
		return nil, fmt.Errorf("an expert pager needs a model opened with its experts paged (OpenOptions.PageExperts)")
	}
	return s, nil
}

// Close stops the worker goroutines and the pager's readers.
func (s *State) Close() {
	if s.draft != nil {
		s.draft.close()
	}
	s.pool.Close()
	s.pg.close()
}

// Pos returns the number of positions in the KV cache.
func (s *State) Pos() int { return s.pos }

// Ctx returns the KV cache size in positions.
func (s *State) Ctx() int { return s.ctx }

// Batch returns how many prompt tokens Eval runs through the model
// together: a caller that evaluates a long prompt in pieces of this size
// (to stop between them) gets the same batches as one Eval.
func (s *State) Batch() int { return s.batch }

// Reset empties the KV cache and zeroes the recurrent state.
func (s *State) Reset() {
	s.pos = 0
	s.resetMixers()
}

// KVBytes returns the size of the KV cache (keys and values of every
// attention layer at every position of the context, in their types).
func (s *State) KVBytes() int64 { return s.kv.bytes() }

// AttnKept returns how many of the positions the attention heads looked
// at were kept by Options.AttnEps's pruning, and how many they looked at
// (0, 0 without pruning), since the state was made.
func (s *State) AttnKept() (kept, seen int64) {
	for i := range s.at.scratch {
		kept += s.at.scratch[i].kept
		seen += s.at.scratch[i].seen
	}
	return kept, seen
}

// CacheBytes is Model.KVCacheBytesOf for this state's context and cache
// types: the KV cache with the other mixers' state.
func (s *State) CacheBytes() int64 { return s.m.KVCacheBytesOf(s.ctx, s.kv.tk, s.kv.tv) }

// RecurrentBytes returns the size of the recurrent layers' state (their
// convolutions' last inputs and delta-rule matrices), allocated once per
// State whatever its context size; 0 for models without such layers.
func (s *State) RecurrentBytes() int64 {
	return 4 * int64(s.recurrentMixerFloats())
}

// Model returns the model the state runs.
func (s *State) Model() *Model { return s.m }

// matmul computes out[j] = W in[j] for nb rows of in (stride W.Cols) into
// out (stride W.Rows) with the kernels (Products.MatMul), after the thrash
// model, if any, has read the weights.
func (s *State) matmul(w *Matrix, in []float32, out []float32, nb int) {
	if s.thrash != nil {
		s.thrash.Read(w.Rows * w.RowBytes)
	}
	s.mm.MatMul(w, in, out, nb)
}

// attnTask computes attention for nb tokens x heads.
type attnTask struct {
	s       *State
	layer   int
	pos0    int
	scratch []attnScratch
	// lnEps is ln(Options.AttnEps), 0 when attention is not pruned.
	lnEps float32
}

func (t *attnTask) Run(lo, hi, w int) {
	s, c := t.s, t.s.c
	hd := c.HeadDim
	group := c.Heads / c.KVHeads
	scale := 1 / kernels.Sqrtf(float32(hd))
	if c.QScale != 0 {
		scale = 1 // q is scaled already
	}
	local := c.localLayer(t.layer)
	slot := s.kvSlot[t.layer]
	ws := &t.scratch[w]
	for item := lo; item < hi; item++ {
		i, h := item/c.Heads, item%c.Heads
		p := t.pos0 + i
		// keys [from, p]: all before, or the sliding window ending at p
		from := 0
		if local {
			from = max(0, p-c.SlidingWindow+1)
		}
		q := s.q[i*c.QDim()+h*hd : i*c.QDim()+(h+1)*hd]
		kvo := (h / group) * hd
		sc := ws.sc[:p+1-from]
		mx := s.kv.scores(q, slot, from, kvo, scale, sc, ws.qa)
		out := s.ao[i*c.QDim()+h*hd : i*c.QDim()+(h+1)*hd]
		if t.lnEps != 0 {
			s.kv.pruned(sc, mx, t.lnEps, slot, from, kvo, out, ws)
			continue
		}
		kernels.SoftmaxMax(sc, mx)
		s.kv.values(sc, slot, from, kvo, out, ws.pa)
	}
}

// ErrContextFull is returned when a token would not fit in the KV cache.
var ErrContextFull = fmt.Errorf("context is full")

// Eval runs tokens through the model at the next positions of the cache.
// For every token i >= from, fn is called with its logits (vocabulary
// sized; ids outside a pruned head are -inf). The slice is only valid
// during the call.
func (s *State) Eval(tokens []int32, from int, fn func(i int, logits []float32)) error {
	if s.pos+len(tokens) > s.ctx {
		return fmt.Errorf("%w: %d + %d tokens > %d positions", ErrContextFull, s.pos, len(tokens), s.ctx)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= s.c.Vocab {
			return fmt.Errorf("token id %d is outside the vocabulary (%d)", t, s.c.Vocab)
		}
	}
	for start := 0; start < len(tokens); start += s.batch {
		end := min(len(tokens), start+s.batch)
		if err := s.forward(tokens[start:end]); err != nil {
			return err
		}
		if s.hidden != nil {
			if err := s.hidden(s.pos, tokens[start:end], s.x[:(end-start)*s.c.Embd]); err != nil {
				return err
			}
		}
		if fn != nil && end > from {
			s.outputs(start, end-start, max(0, from-start), fn)
		}
		s.pos += end - start
	}
	return nil
}

// forward runs one batch of tokens through every layer, leaving the final
// hidden states in s.x.
func (s *State) forward(tokens []int32) error {
	c, m := s.c, s.m
	nb := len(tokens)
	E := c.Embd
	if s.inject != nil {
		if err := s.inject(s, tokens); err != nil {
			return err
		}
		tokens = nil
	}
	for i, t := range tokens {
		x := s.x[i*E : (i+1)*E]
		if s.thrash != nil {
			s.thrash.Read(m.Embed.RowBytes)
		}
		if err := kernels.EmbedRow(m.Embed, x, int(t)); err != nil {
			return fmt.Errorf("token_embd: %w", err)
		}
		if c.fam.embedScale {
			sc := kernels.Sqrtf(float32(E))
			for j := range x {
				x[j] *= sc
			}
		}
	}
	if s.pg != nil {
		s.pg.step++
	}
	for l := range m.Layers {
		L := &m.Layers[l]
		for i := 0; i < nb; i++ {
			kernels.RMSNorm(s.xb[i*E:(i+1)*E], s.x[i*E:(i+1)*E], L.AttnNorm, c.RMSEps)
		}
		if L.Mixer != nil {
			L.Mixer.mix(s, s.mix[l], s.mixScratch, nb)
		} else {
			s.attention(L, l, nb)
		}
		for i := 0; i < nb; i++ {
			o := s.xb2[i*E : (i+1)*E]
			kernels.AddBias(o, L.BO)
			if L.PostAttnNorm != nil {
				kernels.RMSNorm(o, o, L.PostAttnNorm, c.RMSEps)
			}
			x := s.x[i*E : (i+1)*E]
			for j := range x {
				x[j] += o[j]
			}
			kernels.RMSNorm(s.xb[i*E:(i+1)*E], x, L.FFNNorm, c.RMSEps)
		}
		if c.moeLayer(l) {
			if err := s.moeFFN(l, L, nb); err != nil {
				return err
			}
		} else {
			s.ffn(&L.FFN, c.FF, s.xb2, nb)
		}
		if L.PostFFNNorm != nil {
			for i := 0; i < nb; i++ {
				o := s.xb2[i*E : (i+1)*E]
				kernels.RMSNorm(o, o, L.PostFFNNorm, c.RMSEps)
			}
		}
		for i := 0; i < nb*E; i++ {
			s.x[i] += s.xb2[i]
		}
	}
	return nil
}

// attention is an attention layer on s.xb into s.xb2 (before attn_output's
// bias): q, k, v with their biases and norms, RoPE, the KV cache, the
// scores and, for a gated family, the output times sigmoid(gate).
func (s *State) attention(L *Layer, l, nb int) {
	c, m := s.c, s.m
	kvd, qd, hd := c.KVDim(), c.QDim(), c.HeadDim
	if c.fam.attnGate {
		s.matmul(L.Q, s.xb, s.qg, nb)
		for i := 0; i < nb; i++ {
			for h := 0; h < c.Heads; h++ {
				src := s.qg[i*2*qd+2*h*hd:]
				copy(s.q[i*qd+h*hd:i*qd+(h+1)*hd], src[:hd])
			}
		}
	} else {
		s.matmul(L.Q, s.xb, s.q, nb)
	}
	s.matmul(L.K, s.xb, s.k, nb)
	s.matmul(L.V, s.xb, s.v, nb)
	for i := 0; i < nb; i++ {
		q := s.q[i*qd : (i+1)*qd]
		k := s.k[i*kvd : (i+1)*kvd]
		v := s.v[i*kvd : (i+1)*kvd]
		kernels.AddBias(q, L.BQ)
		kernels.AddBias(k, L.BK)
		kernels.AddBias(v, L.BV)
		if L.QNorm != nil {
			kernels.RMSNormChunks(q, L.QNorm, c.RMSEps)
			kernels.RMSNormChunks(k, L.KNorm, c.RMSEps)
		}
		if c.localLayer(l) {
			kernels.RopeCache(s.rope, s.pos+i, c.RopeDims, c.RopeBaseLocal, 1, m.RopeFactors)
		} else {
			kernels.RopeCache(s.rope, s.pos+i, c.RopeDims, c.RopeBase, c.RopeFreqScale, m.RopeFactors)
		}
		if c.fam.ropeNeox {
			kernels.RopeNeox(q, c.Heads, c.HeadDim, s.rope)
			kernels.RopeNeox(k, c.KVHeads, c.HeadDim, s.rope)
		} else {
			kernels.Rope(q, c.Heads, c.HeadDim, s.rope)
			kernels.Rope(k, c.KVHeads, c.HeadDim, s.rope)
		}
		if c.QScale != 0 {
			for j := range q {
				q[j] *= c.QScale
			}
		}
		s.kv.rotate(q, s.kv.rotK)
		s.kv.rotate(k, s.kv.rotK)
		s.kv.rotate(v, s.kv.rotV)
		s.kv.put(s.kvSlot[l], s.pos+i, k, v)
	}
	s.at.s, s.at.layer, s.at.pos0 = s, l, s.pos
	// An item writes HeadDim floats of ao: keep threads a cache line apart.
	s.pool.Run(&s.at, nb*c.Heads, max(1, 16/c.HeadDim), (s.pos+nb)*nb*c.Heads*c.HeadDim >= 32<<10)
	s.kv.rotate(s.ao[:nb*qd], s.kv.rotV)
	if c.fam.attnGate {
		for i := 0; i < nb; i++ {
			for h := 0; h < c.Heads; h++ {
				g := s.qg[i*2*qd+(2*h+1)*hd : i*2*qd+(2*h+2)*hd]
				o := s.ao[i*qd+h*hd : i*qd+(h+1)*hd]
				for d, v := range g {
					o[d] *= sigmoid(v)
				}
			}
		}
	}
	s.matmul(L.O, s.ao, s.xb2, nb)
}

// ffn computes down(silu(gate x) * up x) of s.xb (FFN width ff) into out.
func (s *State) ffn(f *FFN, ff int, out []float32, nb int) {
	s.matmul(f.Gate, s.xb, s.hb, nb)
	s.matmul(f.Up, s.xb, s.hb2, nb)
	for i := 0; i < nb; i++ {
		g, u := s.hb[i*ff:(i+1)*ff], s.hb2[i*ff:(i+1)*ff]
		kernels.AddBias(g, f.BGate)
		kernels.AddBias(u, f.BUp)
		if s.c.fam.gelu {
			kernels.Geglu(g, u)
		} else {
			kernels.Swiglu(g, u)
		}
	}
	s.matmul(f.Down, s.hb, out, nb)
	for i := 0; i < nb; i++ {
		kernels.AddBias(out[i*s.c.Embd:(i+1)*s.c.Embd], f.BDown)
	}
}

// outputs computes the logits of batch rows [first, nb) (the batch began
// at token index start) and hands them to fn.
func (s *State) outputs(start, nb, first int, fn func(i int, logits []float32)) {
	c, m := s.c, s.m
	E, V := c.Embd, c.Vocab
	for g := first; g < nb; g += s.logitRows {
		n := min(s.logitRows, nb-g)
		for i := 0; i < n; i++ {
			kernels.RMSNorm(s.xb[i*E:(i+1)*E], s.x[(g+i)*E:(g+i+1)*E], m.OutputNorm, c.RMSEps)
		}
		if m.OutputIDs == nil {
			s.matmul(m.Output, s.xb, s.logits, n)
		} else {
			rows := m.Output.Rows
			s.matmul(m.Output, s.xb, s.head, n)
			for i := 0; i < n; i++ {
				l := s.logits[i*V : (i+1)*V]
				for j := range l {
					l[j] = negInf
				}
				for r, id := range m.OutputIDs {
					l[id] = s.head[i*rows+r]
				}
			}
		}
		for i := 0; i < n; i++ {
			fn(start+g+i, s.logits[i*V:(i+1)*V])
		}
	}
}

// Rewind keeps the first n positions of the KV cache and drops the rest, so
// the next Eval continues at position n: a chat turn whose prompt agrees
// with the cached tokens only up to n re-evaluates from there instead of
// from the start. Each position's keys and values depend only on the
// tokens before it, so what is kept stays valid. n outside 0..Pos() is
// ignored.
//
// A model with recurrent layers (qwen35's Gated DeltaNet, bailingmoe3's
// KDA) keeps one state that summarizes every position evaluated; it cannot
// be cut back to a shorter prefix, so there any n below Pos() empties the
// state (as Reset) and the caller, reading Pos(), evaluates its tokens
// from the start.
func (s *State) Rewind(n int) {
	switch {
	case n < 0 || n >= s.pos:
	case s.recurrentState():
		s.Reset()
	default:
		s.pos = n
	}
}
