package engine

import (
	"fmt"
	"math"
	"sync"

	"github.com/ggufkit/gguf/kernels"
)

// mtpBlock is a model's NextN/MTP block (nextn_predict_layers, the block
// after the main ones), as llama.cpp's qwen35 loader and graph_mtp take
// it: the token's embedding and the main model's last hidden state, each
// RMS-normed (enorm, hnorm), concatenated and projected (eh_proj) to the
// input of one gated full-attention block like the main ones, whose
// output, normed (shared_head_norm, else output_norm) and multiplied by
// the head (shared_head_head, else the model's), predicts the token after
// the next: the draft of --spec-type draft-mtp.
type mtpBlock struct {
	Layer        Layer
	EHProj       *Matrix // [2 x embd] -> embd
	ENorm, HNorm []float32
	HeadNorm     []float32
	Head         *Matrix // nil: the model's head
	Embed        *Matrix // nil: token_embd
	// once reads a paged model's block experts (readMTPExperts) for the
	// first draft State; err is its result.
	once sync.Once
	err  error
}

// readMTPExperts reads the MTP block's experts into memory when the
// model's experts are paged: the pager's pools serve the main layers only,
// and a draft runs the block once per drafted token, every token, so its
// experts are held resident (one MoE layer's experts, added to
// ResidentBytes), read when draft-mtp first starts rather than at Open,
// which a model run without drafting does not pay.
func (m *Model) readMTPExperts() error {
	for _, w := range expertWeights(&m.mtp.Layer, &m.Config) {
		ms := *w.dst
		if len(ms) == 0 || ms[0].Data() != nil {
			continue
		}
		src, ok := m.paged[ms[0].Name]
		if !ok {
			return fmt.Errorf("draft-mtp: the MTP block's %s has no bytes and no paged source", ms[0].Name)
		}
		each := int64(ms[0].Rows) * int64(ms[0].RowBytes)
		if each*int64(len(ms)) != src.size {
			return fmt.Errorf("draft-mtp: %s holds %d bytes, want %d experts of %d", ms[0].Name, src.size, len(ms), each)
		}
		buf := make([]byte, src.size)
		if _, err := src.f.ReadAt(buf, src.off); err != nil {
			return fmt.Errorf("draft-mtp: reading the MTP block's %s: %w", ms[0].Name, err)
		}
		for e, x := range ms {
			x.SetData(buf[int64(e)*each : int64(e+1)*each : int64(e+1)*each])
		}
		m.ResidentBytes += src.size
	}
	return nil
}

// HasMTP reports whether the model has a NextN/MTP block to draft with.
func (m *Model) HasMTP() bool { return m.mtp != nil }

// loadMTP loads the first NextN block of a qwen35 or qwen35moe model when
// the file has its tensors (llama.cpp's loader requires them with
// load_mtp; without it, as here without them, the block is skipped). A
// qwen35moe block's FFN is a MoE layer like the main ones (router,
// experts, the gated shared expert), as llama_model_qwen35moe's graph_mtp
// builds it.
func (m *Model) loadMTP(ts *tensorSet, c *Config) error {
	if c.NextN == 0 || !c.fam.attnGate {
		return nil
	}
	i := c.Layers
	p := fmt.Sprintf("blk.%d.", i)
	if _, ok := ts.info[p+"nextn.eh_proj.weight"]; !ok {
		return nil
	}
	b := &mtpBlock{}
	l := &b.Layer
	ld := layerTensors{ts: ts, p: p}
	ld.vec(&l.AttnNorm, "attn_norm.weight", c.Embd, false)
	ld.vec(&l.FFNNorm, c.fam.ffnNorm+".weight", c.Embd, false)
	ld.mat(&b.EHProj, "nextn.eh_proj.weight", 2*c.Embd, c.Embd)
	ld.vec(&b.ENorm, "nextn.enorm.weight", c.Embd, false)
	ld.vec(&b.HNorm, "nextn.hnorm.weight", c.Embd, false)
	ld.vec(&b.HeadNorm, "nextn.shared_head_norm.weight", c.Embd, true)
	if ld.err != nil {
		return ld.err
	}
	var err error
	if b.Head, err = ts.matrix(p+"nextn.shared_head_head.weight", c.Embd, c.Vocab, true); err != nil {
		return err
	}
	if b.Embed, err = ts.matrix(p+"nextn.embed_tokens.weight", c.Embd, c.Vocab, true); err != nil {
		return err
	}
	if err := m.loadAttention(ts, c, l, p); err != nil {
		return err
	}
	if err := m.loadFFN(ts, c, l, i, p); err != nil {
		return err
	}
	if b.HeadNorm == nil {
		b.HeadNorm = m.OutputNorm
	}
	m.mtp = b
	return nil
}

// mtpDraft runs a model's MTP block beside its State as llama.cpp's
// draft-mtp does with a second context: every batch the main model
// evaluates is mirrored into the block's own KV cache, position q pairing
// token q with the main model's normed hidden state at q-1 (mirror); a
// draft starts from the last accepted position's hidden state and chains
// the block's own (draft).
type mtpDraft struct {
	main *State
	s    *State // the block as a one-layer model
	E    int
	// ring holds the main model's normed hidden state of the last
	// positions evaluated (position q at q%len), enough to reach back past
	// a rolled-back verification batch and its replay.
	ring [][]float32
	hin  []float32 // [batch][E] the h rows of the block's current batch
	hn   []float32 // [batch][E] the main model's normed rows of a batch
	cat  []float32 // [batch][2E] enorm(embedding), hnorm(h)
	off  int       // rows of hin used by the block's batches so far
	zero []float32 // the hidden state before position 0
	nmax int       // the longest draft the ring is sized for
	// last is the last position whose hidden state the ring holds (-1:
	// none): a position more than the ring's length before it has been
	// overwritten.
	last int
	out  []int32
}

// newMTPDraft builds the block's State beside s, for drafts of up to nmax
// tokens.
func newMTPDraft(s *State, nmax int) (*mtpDraft, error) {
	m := s.m
	b := m.mtp
	if b == nil {
		return nil, fmt.Errorf("draft-mtp: the model has no NextN/MTP block (nextn_predict_layers and blk.N.nextn.* tensors: qwen35 and qwen35moe)")
	}
	b.once.Do(func() { b.err = m.readMTPExperts() })
	if b.err != nil {
		return nil, b.err
	}
	mm := &Model{Config: m.Config, Metadata: m.Metadata, Embed: m.Embed, Output: m.Output, OutputIDs: m.OutputIDs,
		OutputNorm: b.HeadNorm, RopeFactors: m.RopeFactors, Layers: []Layer{b.Layer}}
	if b.Embed != nil {
		mm.Embed = b.Embed
	}
	if b.Head != nil {
		mm.Output, mm.OutputIDs = b.Head, nil
	}
	c := &mm.Config
	c.Layers, c.NextN = 1, 0
	c.SSM = SSMConfig{}
	// The concatenated input (2 x embd) is the widest product input: the
	// State sizes its activation buffers from the widest FFN.
	c.ExpertFF = max(c.ExpertFF, 2*c.Embd)
	ms, err := NewState(mm, Options{Ctx: s.ctx, Threads: s.pool.Threads(), Batch: s.batch})
	if err != nil {
		return nil, err
	}
	E := c.Embd
	d := &mtpDraft{main: s, s: ms, E: E, hin: make([]float32, s.batch*E), hn: make([]float32, s.batch*E),
		cat: make([]float32, s.batch*2*E), zero: make([]float32, E)}
	d.nmax, d.last = nmax, -1
	d.ring = make([][]float32, 4*(nmax+2))
	for i := range d.ring {
		d.ring[i] = make([]float32, E)
	}
	ms.inject = d.inject
	return d, nil
}

func (d *mtpDraft) close() { d.s.Close() }

// AttachMTP keeps the model's MTP block with s for good, for drafts of up
// to nmax tokens: from now on it mirrors every batch s evaluates (a
// prompt evaluated before GenerateSpec, a server's prefill, a chat's
// earlier turns), so a draft-mtp generation on s finds the block's cache
// filled for the whole history instead of only for what it evaluated
// itself. Close releases it.
func (s *State) AttachMTP(nmax int) error {
	if s.draft != nil {
		return fmt.Errorf("draft-mtp: the MTP block is attached already")
	}
	d, err := newMTPDraft(s, nmax)
	if err != nil {
		return err
	}
	s.draft, s.hidden = d, d.mirror
	return nil
}

// h returns the main model's normed hidden state at position q (zeros
// before the first, as llama.cpp's pending row starts, and for a position
// the ring no longer holds: after a state attached for good was rewound
// far back, one draft starts from nothing rather than from another
// position's state).
func (d *mtpDraft) h(q int) []float32 {
	if q < 0 || q > d.last || q <= d.last-len(d.ring) {
		return d.zero
	}
	return d.ring[q%len(d.ring)]
}

// mirror runs the block over a batch the main model evaluated at
// positions p0.. (x its final hidden states, before the output norm),
// writing the block's KV cache there: row i pairs token i with the main
// model's hidden state at p0+i-1.
func (d *mtpDraft) mirror(p0 int, tokens []int32, x []float32) error {
	E, nb, c := d.E, len(tokens), d.main.c
	for i := 0; i < nb; i++ {
		kernels.RMSNorm(d.hn[i*E:(i+1)*E], x[i*E:(i+1)*E], d.main.m.OutputNorm, c.RMSEps)
	}
	copy(d.hin[:E], d.h(p0-1))
	copy(d.hin[E:nb*E], d.hn[:(nb-1)*E])
	for i := 0; i < nb; i++ {
		copy(d.ring[(p0+i)%len(d.ring)], d.hn[i*E:(i+1)*E])
	}
	d.last = p0 + nb - 1
	d.s.pos, d.off = p0, 0
	return d.s.Eval(tokens, nb, nil)
}

// inject is the block's input in place of the token embedding: x =
// eh_proj [enorm(embedding), hnorm(h)] for each token of the batch.
func (d *mtpDraft) inject(s *State, tokens []int32) error {
	E, c, b := d.E, s.c, d.main.m.mtp
	for i, t := range tokens {
		e := d.cat[i*2*E : i*2*E+E]
		if err := kernels.DequantizeRow(s.m.Embed.Type, e, s.m.Embed.Row(int(t))); err != nil {
			return fmt.Errorf("mtp embedding: %w", err)
		}
		kernels.RMSNorm(e, e, b.ENorm, c.RMSEps)
		kernels.RMSNorm(d.cat[i*2*E+E:(i+1)*2*E], d.hin[(d.off+i)*E:(d.off+i+1)*E], b.HNorm, c.RMSEps)
	}
	d.off += len(tokens)
	s.matmul(b.EHProj, d.cat, s.x, len(tokens))
	return nil
}

// draft proposes up to k tokens to follow id, which goes at position pos:
// the block's greedy choice from the main model's hidden state at pos-1,
// then from its own (llama.cpp's draft sampler keeps the top candidate),
// ending before the first whose top-DraftTopK probability is below pmin.
func (d *mtpDraft) draft(pos int, id int32, k int, pmin float32) ([]int32, error) {
	E := d.E
	out := d.out[:0]
	copy(d.hin[:E], d.h(pos-1))
	tok := id
	for j := 0; j < k; j++ {
		d.s.pos, d.off = pos+j, 0
		var best int32
		var p float32
		if err := d.s.Eval([]int32{tok}, 0, func(_ int, l []float32) { best, p = topKProb(l) }); err != nil {
			return nil, err
		}
		if p < pmin {
			break
		}
		// The normed output row the head read is the next step's h.
		copy(d.hin[:E], d.s.xb[:E])
		out = append(out, best)
		tok = best
	}
	d.out = out
	return out, nil
}

// DraftTopK is the candidates llama.cpp's draft sampler keeps (its
// draft sampler is a top-k of this size): a draft token's probability,
// which --spec-draft-p-min bounds, is its softmax among them.
const DraftTopK = 10

// topKProb returns the first id of the largest logit and its probability
// in a softmax over the DraftTopK largest logits, computed as llama.cpp's sampler
// does: in float32, exp(l - max) summed from the largest down (ties in
// the order of their ids).
func topKProb(l []float32) (int32, float32) {
	const k = DraftTopK
	var buf [k + 1]int32
	top := buf[:0]
	for i, v := range l {
		if len(top) == k && v <= l[top[k-1]] {
			continue
		}
		j := len(top)
		for j > 0 && v > l[top[j-1]] {
			j--
		}
		top = append(top, 0)
		copy(top[j+1:], top[j:])
		top[j] = int32(i)
		if len(top) > k {
			top = top[:k]
		}
	}
	if len(top) == 0 {
		return 0, 0
	}
	m := l[top[0]]
	var sum float32
	for _, i := range top {
		sum += float32(math.Exp(float64(l[i] - m)))
	}
	return top[0], 1 / sum
}

// argmax returns the first id of the largest logit.
func argmax(l []float32) int32 {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best)
}

// MTPLogits evaluates ids on s (from an empty state) with the model's MTP
// block mirrored, then returns the block's logits for the token after
// next, drafted from next at the following position: what a draft-mtp
// step computes first. For checks against libllama's MTP graph.
func MTPLogits(s *State, ids []int32, next int32) ([]float32, error) {
	d, err := newMTPDraft(s, 1)
	if err != nil {
		return nil, err
	}
	defer d.close()
	s.Reset()
	s.hidden = d.mirror
	defer func() { s.hidden = nil }()
	if err := s.Eval(ids, len(ids), nil); err != nil {
		return nil, err
	}
	E := d.E
	copy(d.hin[:E], d.h(s.pos-1))
	d.s.pos, d.off = s.pos, 0
	out := make([]float32, s.c.Vocab)
	err = d.s.Eval([]int32{next}, 0, func(_ int, l []float32) { copy(out, l) })
	return out, err
}
