package engine

import (
	"fmt"

	"github.com/ggufkit/gguf/kernels"
)

// SSMConfig holds the sizes of a hybrid model's linear-attention (Gated
// DeltaNet) layers, read from the ssm.* keys as llama_model_qwen35 reads
// them. It is zero for families without such layers.
type SSMConfig struct {
	ConvKernel int // ssm.conv_kernel: taps of the causal convolution
	HeadDim    int // ssm.state_size: width of a key and of a value head
	KHeads     int // ssm.group_count: query/key heads
	VHeads     int // ssm.time_step_rank: value heads (a multiple of KHeads)
	// Interval is full_attention_interval: layer l is full attention when
	// (l+1) % Interval == 0, a recurrent layer otherwise.
	Interval int
}

// keyDim is the width of all query (or key) heads.
func (c *SSMConfig) keyDim() int { return c.KHeads * c.HeadDim }

// valueDim is the width of all value heads (ssm.inner_size).
func (c *SSMConfig) valueDim() int { return c.VHeads * c.HeadDim }

// convDim is the channels the convolution runs over: q, k and v.
func (c *SSMConfig) convDim() int { return 2*c.keyDim() + c.valueDim() }

// stateFloats is one recurrent layer's state: the convolution's last
// ConvKernel-1 inputs and a HeadDim x HeadDim matrix per value head.
func (c *SSMConfig) stateFloats() (conv, ssm int) {
	return (c.ConvKernel - 1) * c.convDim(), c.VHeads * c.HeadDim * c.HeadDim
}

// recurrent reports whether layer l is a linear-attention layer.
func (c *Config) recurrent(l int) bool {
	return c.SSM.VHeads > 0 && (l+1)%c.SSM.Interval != 0
}

// DeltaNetLayer holds a Gated DeltaNet layer's weights (llama.cpp's
// names): attn_qkv projects to the convolution's q, k and v channels,
// attn_gate to the output gate z, ssm_beta and ssm_alpha to each value
// head's write strength and decay input.
type DeltaNetLayer struct {
	QKV, Gate, Beta, Alpha, Out *Matrix
	// Conv is ssm_conv1d, [convDim][ConvKernel].
	Conv []float32
	// DT is ssm_dt.bias and A is ssm_a (-exp(A_log)), one per value head:
	// a head's decay is exp(softplus(alpha + DT) * A).
	DT, A []float32
	// Norm is ssm_norm, the RMS norm of each value head's output before
	// it is multiplied by silu(z).
	Norm []float32

	ssm *SSMConfig
	eps float32 // the model's RMS norm epsilon, also the L2 norms'
}

// qwen35 reads Qwen3.5's keys as llama_model_qwen35 does: the ssm.* sizes
// (required), full_attention_interval (default 4), rope.dimension_sections
// (M-RoPE: text positions give every section the same position, which
// is plain NEOX RoPE as long as every rotated pair belongs to one of the
// first three sections) and nextn_predict_layers (trailing MTP blocks,
// skipped).
func qwen35(k keys, c *Config) error {
	s := &c.SSM
	var inner int
	for _, f := range []struct {
		dst      *int
		key      string
		def      int
		required bool
	}{
		{&s.ConvKernel, "ssm.conv_kernel", 0, true},
		{&inner, "ssm.inner_size", 0, true},
		{&s.HeadDim, "ssm.state_size", 0, true},
		{&s.VHeads, "ssm.time_step_rank", 0, true},
		{&s.KHeads, "ssm.group_count", 0, true},
		{&s.Interval, "full_attention_interval", 4, false},
		{&c.NextN, "nextn_predict_layers", 0, false},
	} {
		var err error
		if *f.dst, err = k.uint(f.key, f.def, f.required); err != nil {
			return err
		}
	}
	switch {
	case s.ConvKernel == 0 || s.HeadDim == 0 || s.KHeads == 0 || s.VHeads == 0 || s.Interval == 0:
		return fmt.Errorf("metadata %s.ssm.conv_kernel, state_size, group_count, time_step_rank and full_attention_interval must be positive", k.arch)
	case s.VHeads%s.KHeads != 0:
		return fmt.Errorf("metadata %s.ssm.time_step_rank %d is not a multiple of ssm.group_count %d", k.arch, s.VHeads, s.KHeads)
	case inner != s.valueDim():
		return fmt.Errorf("metadata %s.ssm.inner_size %d is not ssm.state_size %d x ssm.time_step_rank %d (value heads as wide as key heads)", k.arch, inner, s.HeadDim, s.VHeads)
	case int64(s.VHeads)*int64(s.HeadDim)*int64(s.HeadDim) > maxDim*16:
		return fmt.Errorf("metadata %s.ssm.time_step_rank %d x ssm.state_size %d^2 makes a recurrent state too large", k.arch, s.VHeads, s.HeadDim)
	case c.NextN >= c.Layers:
		return fmt.Errorf("metadata %s.nextn_predict_layers %d must be below block_count %d", k.arch, c.NextN, c.Layers)
	}
	if _, ok := k.md.Get(k.arch + ".attention.recurrent_layers"); ok {
		return fmt.Errorf("metadata %s.attention.recurrent_layers is not supported (layers follow full_attention_interval)", k.arch)
	}
	c.Layers -= c.NextN
	return ropeSections(k, c.RopeDims)
}

// qwen35MoE reads Qwen3.5 MoE's keys: qwen35's, and as
// llama_model_qwen35moe does expert_feed_forward_length (default FF /
// expert_used_count), the shared expert's
// expert_shared_feed_forward_length (default FF) and
// expert_weights_scale (default none); softmax routing, renormalized.
func qwen35MoE(k keys, c *Config) error {
	if err := qwen35(k, c); err != nil {
		return err
	}
	var err error
	if c.ExpertFF, err = k.uint("expert_feed_forward_length", c.FF/c.ExpertsUsed, false); err != nil {
		return err
	}
	if c.SharedFF, err = k.uint("expert_shared_feed_forward_length", c.FF, false); err != nil {
		return err
	}
	if c.ExpertFF == 0 || c.SharedFF == 0 {
		return fmt.Errorf("metadata %s.expert_feed_forward_length and expert_shared_feed_forward_length must be positive", k.arch)
	}
	c.Routing.Scale, err = k.float("expert_weights_scale", 0, false)
	return err
}

// ropeSections checks rope.dimension_sections for text-only positions.
// llama.cpp gives a text token the same position in the first three
// sections and 0 in the fourth, and its interleaved M-RoPE (IMROPE) takes
// rotated pair p from section p%3 while p < 3*sections[p%3], from the
// fourth otherwise. So the rotation is NEOX RoPE over dims exactly when
// every pair falls in the first three.
func ropeSections(k keys, dims int) error {
	// libllama requires the key (its loader fails without it)
	v, ok := k.md.Get(k.arch + ".rope.dimension_sections")
	if !ok {
		return fmt.Errorf("metadata %s.rope.dimension_sections is missing", k.arch)
	}
	var sec [4]int
	if !v.IsArray() || v.Len() < 3 || v.Len() > 4 {
		return fmt.Errorf("metadata %s.rope.dimension_sections must be an array of 3 or 4 integers", k.arch)
	}
	for i := 0; i < v.Len(); i++ {
		n, ok := v.Index(i).Int()
		if !ok || n < 0 || n > maxDim {
			return fmt.Errorf("metadata %s.rope.dimension_sections[%d] is not a small non-negative integer", k.arch, i)
		}
		sec[i] = int(n)
	}
	for p := 0; p < dims/2; p++ {
		if p >= 3*sec[p%3] {
			return fmt.Errorf("metadata %s.rope.dimension_sections %v leave rotated pair %d of %d to the fourth section, which text positions do not rotate (not supported)", k.arch, sec, p, dims/2)
		}
	}
	return nil
}

// qwen35Mixer is the family's layer mixer: a Gated DeltaNet layer where
// the layer is recurrent, nil (the standard attention block) elsewhere.
func qwen35Mixer(ts *tensorSet, c *Config, l int, p string) (layerMixer, error) {
	if !c.recurrent(l) {
		return nil, nil
	}
	d, err := ts.loadDeltaNet(p, c)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// loadDeltaNet loads layer p's Gated DeltaNet tensors.
func (ts *tensorSet) loadDeltaNet(p string, c *Config) (*DeltaNetLayer, error) {
	s := &c.SSM
	d := &DeltaNetLayer{ssm: s, eps: c.RMSEps}
	var err error
	for _, m := range []struct {
		dst        **Matrix
		name       string
		cols, rows int
	}{
		{&d.QKV, "attn_qkv.weight", c.Embd, s.convDim()},
		{&d.Gate, "attn_gate.weight", c.Embd, s.valueDim()},
		{&d.Beta, "ssm_beta.weight", c.Embd, s.VHeads},
		{&d.Alpha, "ssm_alpha.weight", c.Embd, s.VHeads},
		{&d.Out, "ssm_out.weight", s.valueDim(), c.Embd},
	} {
		if *m.dst, err = ts.matrix(p+m.name, m.cols, m.rows, false); err != nil {
			return nil, err
		}
	}
	if d.Conv, err = ts.floats(p+"ssm_conv1d.weight", false, s.ConvKernel, s.convDim()); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		dst  *[]float32
		name string
		n    int
	}{{&d.DT, "ssm_dt.bias", s.VHeads}, {&d.A, "ssm_a", s.VHeads}, {&d.Norm, "ssm_norm.weight", s.HeadDim}} {
		if *v.dst, err = ts.vector(p+v.name, v.n, false); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// The layerMixer methods: the state is the convolution's last inputs, then
// one HeadDim x HeadDim matrix per value head; the scratch holds a batch's
// projections (q, k, v; z; beta; decay), the delta rule's output, a row
// of ones (for siluInPlace) and one HeadDim row per worker.

func (d *DeltaNetLayer) contextFloats(int) int {
	nc, ns := d.ssm.stateFloats()
	return nc + ns
}

func (d *DeltaNetLayer) scratchFloats(nb, threads, _ int) int {
	c := d.ssm
	return nb*(c.convDim()+2*c.valueDim()+2*c.VHeads) + c.convDim() + threads*c.HeadDim
}

func (d *DeltaNetLayer) recurrent() bool { return true }

// mix is llama.cpp's build_layer_attn_linear (qwen35) on s.xb into
// s.xb2: the projections; per token the convolution over q, k and v
// with its state, SiLU, L2-normalized q and k heads, the write strength
// beta = sigmoid(beta) and decay exp(softplus(alpha + dt) * a) per value
// head; the delta rule per value head over the batch's tokens in order
// (value head h reads query/key head h % KHeads, as ggml's repeat and
// its fused op do); the output RMS-normed per head times silu(z); ssm_out.
func (d *DeltaNetLayer) mix(s *State, st, scratch []float32, nb int) {
	sc := d.ssm
	cd, vd, hv, hd := sc.convDim(), sc.valueDim(), sc.VHeads, sc.HeadDim
	nc, _ := sc.stateFloats()
	take := func(n int) []float32 {
		b := scratch[:n:n]
		scratch = scratch[n:]
		return b
	}
	t := &s.dt
	t.d, t.st = d, st[nc:]
	t.qkv, t.z, t.beta, t.decay, t.out = take(nb*cd), take(nb*vd), take(nb*hv), take(nb*hv), take(nb*vd)
	ones := take(cd)
	for i := range ones {
		ones[i] = 1
	}
	threads := s.pool.Threads()
	if len(t.work) < threads {
		t.work = make([][]float32, threads)
	}
	for w := range threads {
		t.work[w] = take(hd)
	}
	s.matmul(d.QKV, s.xb, t.qkv, nb)
	s.matmul(d.Gate, s.xb, t.z, nb)
	s.matmul(d.Beta, s.xb, t.beta, nb)
	s.matmul(d.Alpha, s.xb, t.decay, nb)
	t.conv, t.ones, t.nb, t.pre.t = st[:nc], ones, nb, t
	// The convolution, SiLU and the q and k heads' L2 norms, by head-wide
	// ranges of channels: a prompt's were a tenth of its time on one
	// thread, all of it serial.
	s.pool.Run(&t.pre, cd/hd, 1, nb*cd*sc.ConvKernel >= 32<<10)
	for i := 0; i < nb; i++ {
		for h := range hv {
			t.beta[i*hv+h] = sigmoid(t.beta[i*hv+h])
			g := softplus(t.decay[i*hv+h]+d.DT[h]) * d.A[h]
			t.decay[i*hv+h] = kernels.Expf(g)
		}
	}
	s.pool.Run(t, hv, 1, nb*hv*hd*hd >= 32<<10)
	s.matmul(d.Out, t.z, s.xb2, nb)
}

// deltaTask runs the delta rule of a batch for a range of value heads,
// then each head's output norm and gate.
type deltaTask struct {
	d                        *DeltaNetLayer
	st                       []float32 // the layer's delta-rule matrices
	conv                     []float32 // the layer's convolution inputs
	qkv, z, beta, decay, out []float32
	ones                     []float32
	work                     [][]float32 // per worker: deltaStep's scratch
	nb                       int
	pre                      convTask
}

func (t *deltaTask) Run(lo, hi, w int) {
	sc := t.d.ssm
	cd, vd, hv, hd, kd := sc.convDim(), sc.valueDim(), sc.VHeads, sc.HeadDim, sc.keyDim()
	scale := 1 / kernels.Sqrtf(float32(hd))
	for h := lo; h < hi; h++ {
		m := t.st[h*hd*hd : (h+1)*hd*hd]
		kh := (h % sc.KHeads) * hd
		for i := 0; i < t.nb; i++ {
			x := t.qkv[i*cd : (i+1)*cd]
			o := t.out[i*vd+h*hd : i*vd+(h+1)*hd]
			deltaStep(m, x[kh:kh+hd], x[kd+kh:kd+kh+hd], x[2*kd+h*hd:2*kd+(h+1)*hd],
				t.decay[i*hv+h:i*hv+h+1], t.beta[i*hv+h], scale, o, t.work[w])
			kernels.RMSNorm(o, o, t.d.Norm, t.d.eps)
			kernels.Swiglu(t.z[i*vd+h*hd:i*vd+(h+1)*hd], o)
		}
	}
}

// convTask runs a batch through the causal convolution for ranges of
// HeadDim channels (a q, k or v head each), token after token, with SiLU
// and, for q and k heads, the L2 norm: a channel depends only on its own
// earlier inputs.
type convTask struct {
	t *deltaTask
}

func (c *convTask) Run(lo, hi, _ int) {
	t := c.t
	sc := t.d.ssm
	cd, hd, k := sc.convDim(), sc.HeadDim, sc.ConvKernel
	c0, c1 := lo*hd, hi*hd
	for i := 0; i < t.nb; i++ {
		x := t.qkv[i*cd+c0 : i*cd+c1]
		convStep(x, t.d.Conv[c0*k:c1*k], t.conv[c0*(k-1):c1*(k-1)], k)
		siluInPlace(x, t.ones)
		for b := lo; b < min(hi, 2*sc.KHeads); b++ {
			l2Norm(t.qkv[i*cd+b*hd:i*cd+(b+1)*hd], t.d.eps)
		}
	}
}
