package engine

import (
	"fmt"

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
	if len(b.Layer.GateExps) > 0 && b.Layer.GateExps[0].Data() == nil {
		// The pager serves the main layers' slots; the block's experts
		// would need pools of their own.
		return nil, fmt.Errorf("draft-mtp: the MTP block's experts are paged with the model's (open it without --moe-pool, or use --spec-type ngram-simple)")
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
// then from its own (llama.cpp's draft sampler keeps the top candidate).
func (d *mtpDraft) draft(pos int, id int32, k int) ([]int32, error) {
	E := d.E
	out := d.out[:0]
	copy(d.hin[:E], d.h(pos-1))
	tok := id
	for j := 0; j < k; j++ {
		d.s.pos, d.off = pos+j, 0
		var best int32
		if err := d.s.Eval([]int32{tok}, 0, func(_ int, l []float32) { best = argmax(l) }); err != nil {
			return nil, err
		}
		// The normed output row the head read is the next step's h.
		copy(d.hin[:E], d.s.xb[:E])
		out = append(out, best)
		tok = best
	}
	d.out = out
	return out, nil
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
