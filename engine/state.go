package engine

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/gguf"
)

// Options configures a State.
type Options struct {
	// Ctx is the number of positions the KV cache holds (default: the
	// model's context_length).
	Ctx int
	// Threads is the number of worker goroutines for matrix products
	// (default 1).
	Threads int
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
	return 4*floats + actRowBytes(gguf.TypeF32, maxCols)
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

	// kc is [slot][ctx][kvDim]; vc is transposed, [slot][kvDim][ctx], as
	// llama.cpp stores V without flash attention: each output element of
	// attention is then one contiguous dot product over positions. Layer
	// l's slot is kvSlot[l]; recurrent layers have none.
	kc, vc []float32
	kvSlot []int
	// qg is the gated attention's query projection, [batch][heads][q, gate].
	qg []float32

	// dt is the Gated DeltaNet layers' delta-rule task (qwen35.go).
	dt deltaTask

	x, xb, xb2, q, k, v, ao, hb, hb2 []float32
	act                              []byte
	actf                             []float32 // act back in float32 (generic kernels)
	aux                              []byte    // per-block values of act for packed matrices
	lut                              []byte    // q2lut tables of some activation rows
	lutSrc                           []byte    // the Q8_K rows lut was built from
	q1                               q1lutState
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

	pool *pool
	mt   matmulTask
	qt   quantTask
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
	kv := int64(slots) * int64(o.Ctx) * int64(c.KVDim())
	if kv > math.MaxInt32*4 {
		return nil, fmt.Errorf("KV cache of %d floats is too large", kv)
	}
	s.kc = make([]float32, kv)
	s.vc = make([]float32, kv)
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
	actBytes := 0
	for _, t := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ8_1, gguf.TypeQ8_K} {
		if maxCols%t.BlockSize() == 0 {
			actBytes = max(actBytes, actRowBytes(t, maxCols))
		}
	}
	s.act = make([]byte, b*actBytes)
	s.actf = make([]float32, b*maxCols)
	s.pool = newPool(o.Threads)
	s.mt.scratch = make([][]float32, o.Threads)
	s.mt.quad = make([][4]float32, o.Threads)
	s.mt.oct = make([][packRows]float32, o.Threads)
	s.mt.oct4 = make([][4 * packRows]float32, o.Threads)
	auxRow := 0
	for t, k := range packKernels {
		auxRow = max(auxRow, maxCols/t.BlockSize()*k.auxBytes)
	}
	s.aux = make([]byte, b*auxRow)
	if n := m.q2lutCols(); n > 0 {
		s.lut = make([]byte, max(q2lutTableBudget, q2lutTableBytes(n)))
		s.lutSrc = make([]byte, 0, len(s.lut)/q2lutTabBytes*q8_KBytes)
	}
	s.at.scores = make([][]float32, o.Threads)
	for w := 0; w < o.Threads; w++ {
		s.mt.scratch[w] = make([]float32, maxCols)
		s.at.scores[w] = make([]float32, o.Ctx)
	}
	if c.Experts > 0 {
		s.moe = newMoEBuffers(c, b)
	}
	s.newMixerState(o.Ctx, b, o.Threads)
	if c.fam.attnGate {
		s.qg = make([]float32, b*2*c.QDim())
	}
	s.trace = o.Trace
	switch {
	case o.Thrash != nil && m.paged != nil:
		s.pool.close()
		return nil, fmt.Errorf("the thrash model is for models that are not paged: a paged model's flash is PagerOptions.Flash")
	case o.Thrash != nil:
		s.thrash = o.Thrash
	case m.paged != nil:
		pg, err := newStatePager(m, c, o.Pager)
		if err != nil {
			s.pool.close()
			return nil, err
		}
		s.pg = pg
	case o.Pager != nil:
		s.pool.close()
		return nil, fmt.Errorf("an expert pager needs a model opened with its experts paged (OpenOptions.PageExperts)")
	}
	return s, nil
}

// Close stops the worker goroutines and the pager's readers.
func (s *State) Close() {
	s.pool.close()
	s.pg.close()
}

// Pos returns the number of positions in the KV cache.
func (s *State) Pos() int { return s.pos }

// Ctx returns the KV cache size in positions.
func (s *State) Ctx() int { return s.ctx }

// Reset empties the KV cache and zeroes the recurrent state.
func (s *State) Reset() {
	s.pos = 0
	s.resetMixers()
}

// RecurrentBytes returns the size of the recurrent layers' state (their
// convolutions' last inputs and delta-rule matrices), allocated once per
// State whatever its context size; 0 for models without such layers.
func (s *State) RecurrentBytes() int64 {
	return 4 * int64(s.recurrentMixerFloats())
}

// Model returns the model the state runs.
func (s *State) Model() *Model { return s.m }

// matmul computes out[j] = W in[j] for nb rows of in (stride W.Cols) into
// out (stride W.Rows), quantizing the activations to the kernel's type
// first, as ggml-cpu's mul_mat does.
func (s *State) matmul(w *Matrix, in []float32, out []float32, nb int) {
	if s.thrash != nil {
		s.thrash.Read(w.Rows * w.RowBytes)
	}
	k := w.k
	stride := actRowBytes(k.act, w.Cols)
	q := &s.qt
	q.k, q.in, q.act, q.cols, q.stride, q.pk = k.act, in, s.act, w.Cols, stride, nil
	if w.pk != nil {
		q.pk = w.packKernelOf()
		q.aux, q.auxStride = s.aux, w.Cols/k.act.BlockSize()*q.pk.auxBytes
		s.mt.pk, s.mt.aux, s.mt.auxStride = q.pk, s.aux, q.auxStride
	}
	// A prompt's rows are quantized in parallel: done by one thread, they
	// were a sixth of a 2-thread prompt's time. Ranges of grain rows keep
	// the threads' stores in separate cache lines.
	s.pool.run(q, nb, 64/stride+1, nb >= 8 && w.Cols*nb >= 16<<10)
	act := s.act
	if k.group != nil {
		s.matmulQ2LUT(w, act, stride, out, nb)
		return
	}
	if w.q1 != nil {
		s.matmulQ1LUT(w, act, stride, out, nb)
		return
	}
	if k.generic && k.act != gguf.TypeF32 {
		// The dequantized weight row is multiplied in float32: give it the
		// rounded activations as float32 too.
		for j := 0; j < nb; j++ {
			_ = dequantizeRow(k.act, s.actf[j*w.Cols:(j+1)*w.Cols], s.act[j*stride:(j+1)*stride])
		}
		act, stride = bytesOf(s.actf[:nb*w.Cols]), w.Cols*4
	}
	s.mt.w, s.mt.act, s.mt.stride, s.mt.out, s.mt.nb = w, act, stride, out, nb
	// Threads pay off from ~256 KB of weights per product; below that the
	// hand-off costs more than the work (stories260K's 64x64 matrices).
	// Each row r writes out[j*Rows+r] for every token j: ranges of 16 rows
	// keep the two threads' stores in separate 64-byte cache lines.
	s.pool.run(&s.mt, w.Rows, 16, w.Rows*w.RowBytes*nb >= 256<<10)
}

// quantTask quantizes activation rows to a kernel's type and, for a packed
// matrix, writes their aux values.
type quantTask struct {
	k         gguf.Type
	in        []float32
	act       []byte
	cols      int
	stride    int
	pk        *packKernel
	aux       []byte
	auxStride int
}

func (q *quantTask) run(lo, hi, _ int) {
	for j := lo; j < hi; j++ {
		a := q.act[j*q.stride : (j+1)*q.stride]
		// Errors are impossible here: kernelFor checked the type and size.
		_ = quantizeAct(q.k, a, q.in[j*q.cols:(j+1)*q.cols])
		if q.pk != nil {
			q.pk.prep(q.aux[j*q.auxStride:(j+1)*q.auxStride], a, q.cols/q.k.BlockSize())
		}
	}
}

type matmulTask struct {
	w       *Matrix
	act     []byte
	stride  int
	out     []float32
	nb      int
	scratch [][]float32
	// quad holds each worker's four dot4 results: a local array would
	// escape through the function value and cost an allocation per row.
	quad [][4]float32
	// tab holds the q2lut tables of each activation row (tabStride bytes
	// apart).
	tab       []byte
	tabStride int
	// pk runs a packed matrix's groups, with the activation rows' aux
	// values (auxStride bytes apart).
	pk        *packKernel
	aux       []byte
	auxStride int
	oct       [][packRows]float32
	oct4      [][4 * packRows]float32
}

func (t *matmulTask) run(lo, hi, wk int) {
	w, k := t.w, t.w.k
	if k.group != nil {
		t.runGroups(lo, hi)
		return
	}
	if w.q1 != nil {
		t.runQ1LUT(lo, hi)
		return
	}
	n := w.Cols
	if w.pk != nil && lo < w.pk.groups*packRows {
		// ranges start at multiples of the grain (16): whole groups
		end := min(hi, w.pk.groups*packRows)
		t.runPacked(lo/packRows, end/packRows, wk)
		lo = end
	}
	for r := lo; r < hi; r++ {
		row := w.Row(r)
		if k.generic {
			f := t.scratch[wk][:n]
			_ = dequantizeRow(w.Type, f, row)
			row = bytesOf(f)
		}
		j := 0
		if k.dot4 != nil && t.nb >= 4 {
			o := &t.quad[wk]
			for ; j+4 <= t.nb; j += 4 {
				k.dot4(n, row, t.act[j*t.stride:], t.stride, o)
				for c, v := range o {
					t.out[(j+c)*w.Rows+r] = v
				}
			}
		}
		for ; j < t.nb; j++ {
			t.out[j*w.Rows+r] = k.dot(n, row, t.act[j*t.stride:(j+1)*t.stride])
		}
	}
}

// runPacked computes groups [g0, g1) of a packed matrix for every
// activation row, a group's weights staying in cache across the rows.
func (t *matmulTask) runPacked(g0, g1, wk int) {
	w, pk := t.w, t.pk
	nblk := w.Cols / w.k.act.BlockSize()
	o, o4 := &t.oct[wk], &t.oct4[wk]
	for g := g0; g < g1; g++ {
		grp := w.pk.data[g*w.pk.groupBytes : (g+1)*w.pk.groupBytes]
		j := 0
		if pk.gemm4 != nil {
			for ; j+4 <= t.nb; j += 4 {
				pk.gemm4(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], t.stride, t.auxStride, nblk, o4)
				for i := 0; i < 4; i++ {
					copy(t.out[(j+i)*w.Rows+g*packRows:(j+i)*w.Rows+(g+1)*packRows], o4[i*packRows:(i+1)*packRows])
				}
			}
		}
		for ; j < t.nb; j++ {
			pk.gemv(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], nblk, o)
			copy(t.out[j*w.Rows+g*packRows:j*w.Rows+(g+1)*packRows], o[:])
		}
	}
}

// attnTask computes attention for nb tokens x heads.
type attnTask struct {
	s      *State
	layer  int
	pos0   int
	scores [][]float32
}

func (t *attnTask) run(lo, hi, w int) {
	s, c := t.s, t.s.c
	hd, kvd := c.HeadDim, c.KVDim()
	group := c.Heads / c.KVHeads
	scale := 1 / sqrtf(float32(hd))
	if c.QScale != 0 {
		scale = 1 // q is scaled already
	}
	local := c.localLayer(t.layer)
	slot := s.kvSlot[t.layer]
	base := slot * s.ctx * kvd
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
		sc := t.scores[w][:p+1-from]
		kb := base + from*kvd + kvo
		mx := scores(q, s.kc[kb:], kvd, scale, sc)
		softmaxMax(sc, mx)
		out := s.ao[i*c.QDim()+h*hd : i*c.QDim()+(h+1)*hd]
		vdots(sc, s.vc[slot*kvd*s.ctx+kvo*s.ctx+from:], s.ctx, out)
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
	for i, t := range tokens {
		x := s.x[i*E : (i+1)*E]
		if s.thrash != nil {
			s.thrash.Read(m.Embed.RowBytes)
		}
		if err := dequantizeRow(m.Embed.Type, x, m.Embed.Row(int(t))); err != nil {
			return fmt.Errorf("token_embd: %w", err)
		}
		if c.fam.embedScale {
			sc := sqrtf(float32(E))
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
			rmsNorm(s.xb[i*E:(i+1)*E], s.x[i*E:(i+1)*E], L.AttnNorm, c.RMSEps)
		}
		if L.Mixer != nil {
			L.Mixer.mix(s, s.mix[l], s.mixScratch, nb)
		} else {
			s.attention(L, l, nb)
		}
		for i := 0; i < nb; i++ {
			o := s.xb2[i*E : (i+1)*E]
			addBias(o, L.BO)
			if L.PostAttnNorm != nil {
				rmsNorm(o, o, L.PostAttnNorm, c.RMSEps)
			}
			x := s.x[i*E : (i+1)*E]
			for j := range x {
				x[j] += o[j]
			}
			rmsNorm(s.xb[i*E:(i+1)*E], x, L.FFNNorm, c.RMSEps)
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
				rmsNorm(o, o, L.PostFFNNorm, c.RMSEps)
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
		addBias(q, L.BQ)
		addBias(k, L.BK)
		addBias(v, L.BV)
		if L.QNorm != nil {
			rmsNormChunks(q, L.QNorm, c.RMSEps)
			rmsNormChunks(k, L.KNorm, c.RMSEps)
		}
		if c.localLayer(l) {
			ropeCache(s.rope, s.pos+i, c.RopeDims, c.RopeBaseLocal, 1, m.RopeFactors)
		} else {
			ropeCache(s.rope, s.pos+i, c.RopeDims, c.RopeBase, c.RopeFreqScale, m.RopeFactors)
		}
		if c.fam.ropeNeox {
			ropeNeox(q, c.Heads, c.HeadDim, s.rope)
			ropeNeox(k, c.KVHeads, c.HeadDim, s.rope)
		} else {
			rope(q, c.Heads, c.HeadDim, s.rope)
			rope(k, c.KVHeads, c.HeadDim, s.rope)
		}
		if c.QScale != 0 {
			for j := range q {
				q[j] *= c.QScale
			}
		}
		slot := s.kvSlot[l]
		off := (slot*s.ctx + s.pos + i) * kvd
		copy(s.kc[off:off+kvd], k)
		for d, x := range v {
			s.vc[(slot*kvd+d)*s.ctx+s.pos+i] = x
		}
	}
	s.at.s, s.at.layer, s.at.pos0 = s, l, s.pos
	// An item writes HeadDim floats of ao: keep threads a cache line apart.
	s.pool.run(&s.at, nb*c.Heads, max(1, 16/c.HeadDim), (s.pos+nb)*nb*c.Heads*c.HeadDim >= 32<<10)
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
		addBias(g, f.BGate)
		addBias(u, f.BUp)
		if s.c.fam.gelu {
			geglu(g, u)
		} else {
			swiglu(g, u)
		}
	}
	s.matmul(f.Down, s.hb, out, nb)
	for i := 0; i < nb; i++ {
		addBias(out[i*s.c.Embd:(i+1)*s.c.Embd], f.BDown)
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
			rmsNorm(s.xb[i*E:(i+1)*E], s.x[(g+i)*E:(g+i+1)*E], m.OutputNorm, c.RMSEps)
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
