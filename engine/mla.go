package engine

import "github.com/ggufkit/gguf/kernels"

// MLAConfig is the geometry of multi-head latent attention layers
// (bailingmoe3).
type MLAConfig struct {
	Heads int // attention.head_count
	// HeadDim is key_length_mla, a q/k head: HeadDim-RopeDims dims without
	// position ("nope") then RopeDims rotated ones.
	HeadDim  int
	RopeDims int // rope.dimension_count
	VHeadDim int // value_length_mla
	// KVLoraRank is the latent width (kv_lora_rank): a position's cache is
	// its normalized latent and its rotated key part, shared by all heads.
	KVLoraRank int
	// QLoraRank is q_lora_rank: q = W_qb norm(W_qa x) when set, W_q x when 0.
	QLoraRank int
}

// mlaLayer is one MLA layer as llama.cpp's bailingmoe3 graph computes it,
// with the key and value up-projections absorbed (ggml's order):
//
//	q       = W_qb rms_norm(W_qa x)  (or W_q x); per head [nope | pe]
//	kv, kpe = W_kv_a x: the latent (kv_lora_rank) and the key's pe part
//	pe      = RoPE (NORM) of q's pe per head and of kpe (one, shared)
//	c       = rms_norm(kv) (attn_kv_a_norm)
//	qa[h]   = W_kb[h] q_nope[h]          (nope -> kv_lora_rank)
//	score   = (qa[h] . c_t + q_pe[h] . kpe_t) / sqrt(HeadDim)
//	lat[h]  = softmax(score) . c          (kv_lora_rank)
//	o[h]    = W_vb[h] lat[h] * sigmoid(W_gate x)[h]
//	out     = W_o o
//
// The cache holds [c | kpe] per position (kv_lora_rank + RopeDims).
type mlaLayer struct {
	cfg                 *MLAConfig
	eps                 float32
	ropeBase, ropeScale float32
	QA, QB, Q           *Matrix // QA and QB with a q LoRA, Q without
	QANorm              []float32
	KVA                 *Matrix
	KVANorm             []float32
	KB, VB              []*Matrix // per head: [kv_lora_rank][nope], [v_head_dim][kv_lora_rank]
	Gate, O             *Matrix
	task                mlaTask
}

// loadMLA loads the MLA tensors of the layer with prefix p.
func loadMLA(ts *tensorSet, c *Config, p string) (*mlaLayer, error) {
	m := &c.MLA
	H, E, nope, kvr := m.Heads, c.Embd, m.HeadDim-m.RopeDims, m.KVLoraRank
	l := &mlaLayer{cfg: m, eps: c.RMSEps, ropeBase: c.RopeBase, ropeScale: c.RopeFreqScale}
	ld := layerTensors{ts: ts, p: p}
	if m.QLoraRank > 0 {
		ld.mat(&l.QA, "attn_q_a.weight", E, m.QLoraRank)
		ld.vec(&l.QANorm, "attn_q_a_norm.weight", m.QLoraRank, false)
		ld.mat(&l.QB, "attn_q_b.weight", m.QLoraRank, H*m.HeadDim)
	} else {
		ld.mat(&l.Q, "attn_q.weight", E, H*m.HeadDim)
	}
	ld.mat(&l.KVA, "attn_kv_a_mqa.weight", E, kvr+m.RopeDims)
	ld.vec(&l.KVANorm, "attn_kv_a_norm.weight", kvr, false)
	ld.experts(&l.KB, "attn_k_b.weight", nope, kvr, H)
	ld.experts(&l.VB, "attn_v_b.weight", kvr, m.VHeadDim, H)
	ld.mat(&l.Gate, "attn_gate.weight", E, H)
	ld.mat(&l.O, "attn_output.weight", H*m.VHeadDim, E)
	if ld.err != nil {
		return nil, ld.err
	}
	l.task.l = l
	return l, nil
}

func (l *mlaLayer) recurrent() bool { return false }

// contextFloats is the latent cache: kv_lora_rank + RopeDims per position.
func (l *mlaLayer) contextFloats(ctx int) int { return ctx * (l.cfg.KVLoraRank + l.cfg.RopeDims) }

// scratchFloats: per token the q LoRA, q, the latent and pe, the absorbed
// queries, the attended latents, the outputs and the gates; a per-head
// gather of nb rows in and out; each worker's scores over the context.
func (l *mlaLayer) scratchFloats(nb, threads, ctx int) int {
	m := l.cfg
	H, kvr, nope := m.Heads, m.KVLoraRank, m.HeadDim-m.RopeDims
	row := kvr + m.RopeDims
	return nb*(m.QLoraRank+H*m.HeadDim+row+H*row+H*kvr+H*m.VHeadDim+H) +
		nb*max(nope, kvr) + nb*max(kvr, m.VHeadDim) + threads*ctx
}

// mix runs the layer on s.xb for nb tokens at positions s.pos.. into s.xb2.
func (l *mlaLayer) mix(s *State, cache, scratch []float32, nb int) {
	m := l.cfg
	H, hd, rd, kvr, vd := m.Heads, m.HeadDim, m.RopeDims, m.KVLoraRank, m.VHeadDim
	nope, row := hd-rd, kvr+rd
	take := func(n int) []float32 {
		b := scratch[:n:n]
		scratch = scratch[n:]
		return b
	}
	qa, q, kv := take(nb*m.QLoraRank), take(nb*H*hd), take(nb*row)
	qf, lat, ov, gate := take(nb*H*row), take(nb*H*kvr), take(nb*H*vd), take(nb*H)
	gin, gout := take(nb*max(nope, kvr)), take(nb*max(kvr, vd))
	if l.QA != nil {
		s.matmul(l.QA, s.xb, qa, nb)
		for i := 0; i < nb; i++ {
			x := qa[i*m.QLoraRank : (i+1)*m.QLoraRank]
			kernels.RMSNorm(x, x, l.QANorm, l.eps)
		}
		s.matmul(l.QB, qa, q, nb)
	} else {
		s.matmul(l.Q, s.xb, q, nb)
	}
	s.matmul(l.KVA, s.xb, kv, nb)
	cs := s.rope[:rd]
	for i := 0; i < nb; i++ {
		kernels.RopeCache(cs, s.pos+i, rd, l.ropeBase, l.ropeScale, nil)
		kernels.Rope(q[i*H*hd+nope:(i+1)*H*hd], H, hd, cs)
		x := kv[i*row : (i+1)*row]
		kernels.Rope(x[kvr:], 1, rd, cs)
		kernels.RMSNorm(x[:kvr], x[:kvr], l.KVANorm, l.eps)
		copy(cache[(s.pos+i)*row:(s.pos+i+1)*row], x)
		// the absorbed query's pe part
		for h := 0; h < H; h++ {
			copy(qf[(i*H+h)*row+kvr:(i*H+h+1)*row], q[i*H*hd+h*hd+nope:i*H*hd+(h+1)*hd])
		}
	}
	for h := 0; h < H; h++ {
		for i := 0; i < nb; i++ {
			copy(gin[i*nope:(i+1)*nope], q[i*H*hd+h*hd:i*H*hd+h*hd+nope])
		}
		s.matmul(l.KB[h], gin, gout, nb)
		for i := 0; i < nb; i++ {
			copy(qf[(i*H+h)*row:(i*H+h)*row+kvr], gout[i*kvr:(i+1)*kvr])
		}
	}
	t := &l.task
	t.s, t.cache, t.qf, t.lat, t.pos0 = s, cache, qf, lat, s.pos
	t.scores = scratch[:s.pool.Threads()*s.ctx]
	s.pool.Run(t, nb*H, 1, (s.pos+nb)*nb*H*row >= 32<<10)
	for h := 0; h < H; h++ {
		for i := 0; i < nb; i++ {
			copy(gin[i*kvr:(i+1)*kvr], lat[(i*H+h)*kvr:(i*H+h+1)*kvr])
		}
		s.matmul(l.VB[h], gin, gout, nb)
		for i := 0; i < nb; i++ {
			copy(ov[(i*H+h)*vd:(i*H+h+1)*vd], gout[i*vd:(i+1)*vd])
		}
	}
	s.matmul(l.Gate, s.xb, gate, nb)
	for i := 0; i < nb; i++ {
		for h := 0; h < H; h++ {
			g := 1 / (1 + kernels.Expf(-gate[i*H+h]))
			o := ov[(i*H+h)*vd : (i*H+h+1)*vd]
			for j := range o {
				o[j] *= g
			}
		}
	}
	s.matmul(l.O, ov, s.xb2, nb)
}

// mlaTask is the attention of one MLA layer over the latent cache, one
// (token, head) per item.
type mlaTask struct {
	l              *mlaLayer
	s              *State
	cache, qf, lat []float32
	scores         []float32
	pos0           int
}

func (t *mlaTask) Run(lo, hi, w int) {
	m := t.l.cfg
	H, kvr := m.Heads, m.KVLoraRank
	row := kvr + m.RopeDims
	scale := 1 / kernels.Sqrtf(float32(m.HeadDim))
	for item := lo; item < hi; item++ {
		i, h := item/H, item%H
		n := t.pos0 + i + 1
		sc := t.scores[w*t.s.ctx : w*t.s.ctx+n]
		mx := kernels.Scores(t.qf[(i*H+h)*row:(i*H+h+1)*row], t.cache, row, scale, sc)
		kernels.SoftmaxMax(sc, mx)
		out := t.lat[(i*H+h)*kvr : (i*H+h+1)*kvr]
		clear(out)
		for p, a := range sc {
			c := t.cache[p*row : p*row+kvr]
			for j := range out {
				out[j] += float32(a * c[j])
			}
		}
	}
}
