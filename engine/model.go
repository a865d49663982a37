package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/split"
)

// Matrix is a weight matrix used in place, with the kernel that multiplies
// it (package kernels).
type Matrix = kernels.Matrix

// FFN is a SiLU-gated feed-forward network: down(silu(gate x) * up x),
// each product with its optional bias.
type FFN struct {
	Gate, Up, Down    *Matrix
	BGate, BUp, BDown []float32
}

// Layer holds one transformer block's weights. Optional tensors are nil.
type Layer struct {
	AttnNorm, FFNNorm []float32
	Q, K, V, O        *Matrix
	BQ, BK, BV, BO    []float32
	// QNorm, KNorm are the RMS norm weights of q and k (per head or of the
	// whole projection, as the family says), or nil.
	QNorm, KNorm []float32
	// PostAttnNorm, PostFFNNorm normalize the attention and FFN outputs
	// before the residual adds (gemma3), or are nil.
	PostAttnNorm, PostFFNNorm []float32
	FFN                       FFN       // dense FFN (FFN.Gate nil in a MoE layer)
	Router                    *Matrix   // ffn_gate_inp (MoE)
	ExpBias                   []float32 // exp_probs_b: expert selection bias, or nil
	GateExps                  []*Matrix // one matrix per expert
	UpExps                    []*Matrix
	DownExps                  []*Matrix
	Shared                    FFN // shared experts (*_shexp), or Gate nil
	// Mixer replaces the attention block (Q..BO, the norms of q and k) in
	// the layers of a family with other token mixers (qwen35's Gated
	// DeltaNet, bailingmoe3's KDA and MLA layers), or is nil.
	Mixer layerMixer
	// SharedGate (ffn_gate_inp_shexp, one row) scales the shared experts'
	// output by sigmoid(SharedGate x) per token (qwen35moe), or is nil.
	SharedGate *Matrix
}

// Model is a loaded model of one of the supported families.
type Model struct {
	Config   Config
	Metadata *gguf.Metadata
	Embed    *Matrix // token_embd
	// Output is the head: output.weight, or token_embd when tied.
	Output     *Matrix
	OutputNorm []float32
	// OutputIDs is nil for a full head. For a pruned head it holds the
	// vocabulary id of each row of Output, ascending; every other id's
	// logit is -inf.
	OutputIDs []int32
	// RopeFactors divides each RoPE frequency (rope_freqs.weight), or nil.
	RopeFactors []float32
	Layers      []Layer
	// WeightBytes is the total size of the tensors in the file(s).
	WeightBytes int64
	// FromCache counts the expert tensors read from OpenOptions.ExpertsFrom
	// because the file's bytes of them are punched.
	FromCache int

	// ResidentBytes is the size of the tensors in memory: WeightBytes
	// less the experts of a paged model.
	ResidentBytes int64

	opts  OpenOptions
	cache *cacheFile
	unmap []func() error
	// paged holds, for a paged model (OpenOptions.PageExperts), where each
	// expert tensor's bytes are; such tensors are not mapped.
	paged map[string]expertSource
	// mtp is the NextN/MTP block, nil without one (or where it is not
	// run: the families other than qwen35 and qwen35moe).
	mtp *mtpBlock
	// maps holds the file mappings (not the files read into memory).
	maps [][]byte
	// PackedBytes is the size of the matrices copied into a group layout
	// at Open (see repack.go).
	PackedBytes int64
}

// Close releases the mappings. The model must not be used afterwards.
func (m *Model) Close() error {
	var errs []error
	for _, f := range m.unmap {
		errs = append(errs, f())
	}
	m.unmap = nil
	return errors.Join(errs...)
}

// tensorSet is every tensor of a model (across split files) with its bytes.
type tensorSet struct {
	info map[string]*gguf.TensorInfo
	data map[string][]byte
	used map[string]bool
	// layouts are the tensors in a layout (q2lut experts, ternary), by
	// original name.
	layouts map[string]layout.Entry
}

// Open loads the model in the GGUF file at path. Split models (llama.cpp's
// gguf-split: NAME-00001-of-0000N.gguf) are opened from their first file,
// the others are found next to it.
func Open(path string) (*Model, error) { return OpenWith(path, OpenOptions{}) }

// OpenOptions are the choices of OpenWith.
type OpenOptions struct {
	// ExpertsFrom names the cache a punched file (gguf punch) was checked
	// against: the expert tensors whose bytes in the file are holes are
	// read from it instead, which must hold them under the same names,
	// types and shapes. Without it a punched file is refused, since its
	// experts read as zeros.
	ExpertsFrom string
	// PageExperts leaves the expert tensors of an experts-last file
	// unmapped: only the part before them is mapped (or read, with NoMmap),
	// and a State pages experts into the pools its Options.Pager gives.
	PageExperts bool
	// NoMmap reads the weights into memory instead of mapping them
	// (llama.cpp's --no-mmap): with PageExperts only the non-expert part.
	NoMmap bool
	// Mlock locks the mapped weights in RAM (llama.cpp's --mlock).
	Mlock bool
	// NoRepack keeps every matrix in the file's row layout (llama.cpp's
	// --no-repack): no group layout copy is made at Open (repack.go).
	NoRepack bool
	// ExpertsUsed, when > 0, overrides expert_used_count: the experts each
	// token uses (llama.cpp's --override-kv ARCH.expert_used_count).
	ExpertsUsed int
	// TopP, in (0, 1), keeps of each token's selected experts only the
	// fewest, best first, whose routing weight holds a share TopP of the
	// selected experts' weight (the seeds' GGML_MOE_TOPP, §21.10).
	TopP float32
}

// OpenWith is Open with options.
func OpenWith(path string, o OpenOptions) (*Model, error) {
	m := &Model{opts: o}
	ts := &tensorSet{info: map[string]*gguf.TensorInfo{}, data: map[string][]byte{}, used: map[string]bool{}}
	first, err := m.addFile(path, ts)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.Metadata = first.Metadata
	if n, ok := first.Metadata.Uint(gguf.KeySplitCount); ok && n > 1 {
		if err := m.addSplits(path, first, int(n), ts); err != nil {
			m.Close()
			return nil, err
		}
	}
	if err := m.build(ts); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func (m *Model) addSplits(path string, first *gguf.Reader, n int, ts *tensorSet) error {
	if no, _ := first.Metadata.Uint(gguf.KeySplitNo); no != 0 {
		return fmt.Errorf("%s is split %d of %d: open the first split", path, no+1, n)
	}
	prefix, _, c, ok := split.ParseName(path)
	if !ok {
		return fmt.Errorf("%s says it is split in %d files but its name is not PREFIX-00001-of-%05d.gguf", path, n, n)
	}
	if c != n {
		return fmt.Errorf("%s: name says %d splits, metadata says %d", path, c, n)
	}
	for i := 2; i <= n; i++ {
		p := split.Name(prefix, i-1, n)
		r, err := m.addFile(p, ts)
		if err != nil {
			return err
		}
		if no, _ := r.Metadata.Uint(gguf.KeySplitNo); int(no) != i-1 {
			return fmt.Errorf("%s has split.no %d, expected %d", p, no, i-1)
		}
	}
	if want, ok := first.Metadata.Uint(gguf.KeySplitTensors); ok && int(want) != len(ts.info) {
		return fmt.Errorf("splits hold %d tensors, split.tensors.count says %d", len(ts.info), want)
	}
	return nil
}

// openReader opens path and reads its GGUF header; errors name the path.
func openReader(path string) (*os.File, *gguf.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var r *gguf.Reader
		if r, err = gguf.NewReader(f, st.Size()); err == nil {
			return f, r, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("%s: %w", path, err)
}

// addFile maps one file and records its tensors.
func (m *Model) addFile(path string, ts *tensorSet) (*gguf.Reader, error) {
	f, r, err := openReader(path)
	if err != nil {
		return nil, err
	}
	paged := 0
	defer func() {
		if paged > 0 {
			m.unmap = append(m.unmap, f.Close) // the pager reads the experts from f
		} else {
			f.Close()
		}
	}()
	punched, err := experts.Punched(f, r.File)
	if err == nil && punched > 0 && m.opts.ExpertsFrom == "" {
		return nil, fmt.Errorf("%s: %d bytes of its experts are punched out and read as zeros (run it with --experts-from CACHE, or gguf unpunch %s --from CACHE first)", path, punched, path)
	}
	mapped, err := m.residentPart(path, r)
	if err != nil {
		return nil, err
	}
	data, err := m.load(f, mapped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var cache *cacheFile
	if punched > 0 {
		if cache, err = m.openCache(); err != nil {
			return nil, fmt.Errorf("%s: --experts-from %s: %w", path, m.opts.ExpertsFrom, err)
		}
		// A wrong cache would run silently with other experts: its tensor
		// table and the edge bytes the file still holds must match.
		if err := experts.CheckCache(f, r, cache.r, false); err != nil {
			return nil, fmt.Errorf("%s: --experts-from %s: %w", path, m.opts.ExpertsFrom, err)
		}
	}
	for i := range r.Tensors {
		t := &r.Tensors[i]
		if _, dup := ts.info[t.Name]; dup {
			return nil, fmt.Errorf("%s: tensor %q appears twice", path, t.Name)
		}
		off := r.TensorFileOffset(i)
		end := off + t.Size()
		if off < 0 || end > r.Size() {
			return nil, fmt.Errorf("%s: tensor %q [%d, %d) is past the end of the file (%d bytes)", path, t.Name, off, end, r.Size())
		}
		m.WeightBytes += t.Size()
		ts.info[t.Name] = t
		if end > mapped {
			// an expert of a paged model (residentPart checked the order)
			src, err := m.pagedSource(f, cache, t, off, end)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			m.paged[t.Name] = src
			paged++
			continue
		}
		m.ResidentBytes += t.Size()
		b := data[off:end:end]
		if cache != nil && experts.IsExpert(t.Name) {
			if holes, err := experts.HoleBytes(f, off, end); err != nil {
				return nil, fmt.Errorf("%s: tensor %q: %w", path, t.Name, err)
			} else if holes > 0 {
				if b, err = cache.tensor(t); err != nil {
					return nil, fmt.Errorf("%s: --experts-from %s: %w", path, m.opts.ExpertsFrom, err)
				}
				m.FromCache++
			}
		}
		if off%4 != 0 {
			// Only files with general.alignment < 4 get here; float32
			// weights must be aligned to be used in place on every CPU.
			b = osmem.AlignedCopy(b)
		}
		ts.data[t.Name] = b
	}
	return r, nil
}

// cacheFile is the mapped --experts-from file of a punched model.
type cacheFile struct {
	r    *gguf.Reader
	f    *os.File
	data []byte // mapped, unless the model is paged
}

// openCache maps the --experts-from file once per model.
func (m *Model) openCache() (*cacheFile, error) {
	if m.cache != nil {
		return m.cache, nil
	}
	f, r, err := openReader(m.opts.ExpertsFrom)
	if err != nil {
		return nil, err
	}
	if n, err := experts.Punched(f, r.File); err == nil && n > 0 {
		f.Close()
		return nil, fmt.Errorf("the cache is punched too (%d bytes of holes)", n)
	}
	m.unmap = append(m.unmap, f.Close) // a pager reads experts from f
	var data []byte
	if !m.opts.PageExperts {
		unmap := func() error { return nil }
		if data, unmap, _, err = osmem.Map(f, r.Size()); err != nil {
			return nil, err
		}
		m.unmap = append(m.unmap, unmap)
	}
	m.cache = &cacheFile{r: r, f: f, data: data}
	return m.cache, nil
}

// tensor returns the cache's bytes of t, which it must hold with the same
// type and shape.
func (c *cacheFile) tensor(t *gguf.TensorInfo) ([]byte, error) {
	off, err := c.locate(t)
	if err != nil {
		return nil, err
	}
	end := off + t.Size()
	if end > int64(len(c.data)) {
		return nil, fmt.Errorf("tensor %q is past the end of the cache", t.Name)
	}
	b := c.data[off:end:end]
	if off%4 != 0 {
		b = osmem.AlignedCopy(b)
	}
	return b, nil
}

// locate returns where the cache holds t's bytes, which it must hold with
// the same type and shape.
func (c *cacheFile) locate(t *gguf.TensorInfo) (int64, error) {
	i := c.r.TensorIndex(t.Name)
	if i < 0 {
		return 0, fmt.Errorf("the cache has no tensor %q", t.Name)
	}
	ct := &c.r.Tensors[i]
	if ct.Type != t.Type || ct.Shape() != t.Shape() {
		return 0, fmt.Errorf("tensor %q is %s %s in the cache, %s %s in the model", t.Name, ct.Type, ct.Shape(), t.Type, t.Shape())
	}
	off := c.r.TensorFileOffset(i)
	if off < 0 || off+ct.Size() > c.r.Size() {
		return 0, fmt.Errorf("tensor %q is past the end of the cache", t.Name)
	}
	return off, nil
}

// get returns tensor name after checking its shape against dims (a
// negative dim matches any size); a missing optional tensor is nil.
func (ts *tensorSet) get(name string, optional bool, dims ...int) (*gguf.TensorInfo, error) {
	t, ok := ts.info[name]
	if !ok {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("tensor %q is missing", name)
	}
	ts.used[name] = true
	ok = len(t.Dims) == len(dims)
	for i := 0; ok && i < len(dims); i++ {
		ok = dims[i] < 0 || t.Dims[i] == uint64(dims[i])
	}
	if !ok {
		return nil, fmt.Errorf("tensor %q has shape %s, expected %v (-1: any)", name, t.Shape(), dims)
	}
	return t, nil
}

// newMatrix wraps the bytes of t as rows x cols, with its kernel.
func (ts *tensorSet) newMatrix(t *gguf.TensorInfo, cols, rows int) (*Matrix, error) {
	w, err := kernels.NewMatrix(t.Name, t.Type, cols, rows, int(t.RowBytes()), ts.data[t.Name])
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	return w, nil
}

// matrix returns the 2-D tensor name with ne = [cols, rows] (rows < 0: any).
func (ts *tensorSet) matrix(name string, cols, rows int, optional bool) (*Matrix, error) {
	if e, ok := ts.layouts[name]; ok && e.Kind.Ternary() {
		return ts.terMatrix(e, cols, rows)
	}
	t, err := ts.get(name, optional, cols, rows)
	if t == nil {
		return nil, err
	}
	return ts.newMatrix(t, cols, int(t.Dims[1]))
}

// experts returns the 3-D tensor name (ne = [cols, rows, n]) as n matrices.
func (ts *tensorSet) experts(name string, cols, rows, n int) ([]*Matrix, error) {
	if e, ok := ts.layouts[name]; ok && e.Kind.Ternary() {
		all, err := ts.terMatrix(e, cols, rows, n)
		if err != nil {
			return nil, err
		}
		out := make([]*Matrix, n)
		for i := range out {
			out[i] = all.Slice(i*rows, (i+1)*rows)
		}
		return out, nil
	}
	t, err := ts.q2lutExperts(name, cols, rows, n)
	if t == nil && err == nil {
		t, err = ts.get(name, false, cols, rows, n)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := ts.data[t.Name]; !ok {
		// paged: matrices without bytes, which the pager's slots supply
		w, err := ts.newMatrix(t, cols, rows)
		if err != nil {
			return nil, err
		}
		if _, ok := ts.layouts[name]; ok {
			w.UseQ2LUT()
		}
		out := make([]*Matrix, n)
		for e := range out {
			c := *w
			out[e] = &c
		}
		return out, nil
	}
	all, err := ts.newMatrix(t, cols, rows*n)
	if err != nil {
		return nil, err
	}
	if _, ok := ts.layouts[name]; ok {
		all.UseQ2LUT()
	}
	out := make([]*Matrix, n)
	for e := range out {
		out[e] = all.Slice(e*rows, (e+1)*rows)
	}
	return out, nil
}

// vector returns the 1-D tensor name of length n as float32, in place when
// it is F32 and dequantized otherwise.
func (ts *tensorSet) vector(name string, n int, optional bool) ([]float32, error) {
	return ts.floats(name, optional, n)
}

// floats returns tensor name (of shape dims) as float32, in place when it
// is F32 and dequantized otherwise.
func (ts *tensorSet) floats(name string, optional bool, dims ...int) ([]float32, error) {
	t, err := ts.get(name, optional, dims...)
	if t == nil {
		return nil, err
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	if t.Type == gguf.TypeF32 {
		return kernels.F32s(ts.data[name])[:n], nil
	}
	out := make([]float32, n)
	if err := kernels.DequantizeRow(t.Type, out, ts.data[name]); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return out, nil
}

func (m *Model) build(ts *tensorSet) error {
	c, err := readConfig(m.Metadata)
	if err != nil {
		return err
	}
	if err := m.opts.override(&c); err != nil {
		return err
	}
	if m.opts.PageExperts && len(m.paged) == 0 {
		return fmt.Errorf("the model has no expert tensors to page")
	}
	if ts.layouts, err = q2lutLayouts(m.Metadata, ts); err != nil {
		return err
	}
	te, ok := ts.info["token_embd.weight"]
	if e, in := ts.layouts["token_embd.weight"]; in {
		te, ok = ts.info[e.Name] // rows stay rows: ne1 is the vocabulary
	}
	if !ok {
		return fmt.Errorf("tensor \"token_embd.weight\" is missing")
	}
	if len(te.Dims) != 2 || te.Dims[1] == 0 || te.Dims[1] > maxDim {
		return fmt.Errorf("tensor token_embd.weight has shape %s", te.Shape())
	}
	c.Vocab = int(te.Dims[1])
	if m.Embed, err = ts.matrix("token_embd.weight", c.Embd, c.Vocab, false); err != nil {
		return err
	}
	if m.OutputNorm, err = ts.vector("output_norm.weight", c.Embd, false); err != nil {
		return err
	}
	if m.Output, err = ts.matrix("output.weight", c.Embd, -1, true); err != nil {
		return err
	}
	if m.Output == nil {
		if !c.fam.tiedHead {
			return fmt.Errorf("tensor \"output.weight\" is missing (the %s architecture has no tied head)", c.Arch)
		}
		m.Output = m.Embed // tied head, as llama.cpp falls back to token_embd
	}
	if err := m.loadHeadIDs(ts, c.Vocab); err != nil {
		return err
	}
	if m.Output != m.Embed {
		// only the rows of the tokens evaluated are read
		osmem.AdviseRandom(ts.data["token_embd.weight"])
	}
	if m.RopeFactors, err = ts.vector("rope_freqs.weight", c.RopeDims/2, true); err != nil {
		return err
	}
	m.Layers = make([]Layer, c.Layers)
	for i := range m.Layers {
		if err := m.loadLayer(ts, &c, i); err != nil {
			return err
		}
	}
	if err := m.loadMTP(ts, &c); err != nil {
		return err
	}
	for name := range ts.info {
		if !ts.used[name] && !c.skipped(name) {
			return fmt.Errorf("tensor %q is not used by the %s architecture (wrong file or unsupported variant)", name, c.Arch)
		}
	}
	m.Config = c
	return m.packMatrices()
}

// loadHeadIDs reads output_ids.weight, the pruned head's id list.
func (m *Model) loadHeadIDs(ts *tensorSet, vocab int) error {
	t, ok := ts.info["output_ids.weight"]
	if !ok {
		if m.Output.Rows != vocab {
			return fmt.Errorf("output.weight has %d rows but the vocabulary has %d and there is no output_ids.weight", m.Output.Rows, vocab)
		}
		return nil
	}
	ts.used[t.Name] = true
	if t.Type != gguf.TypeI32 || len(t.Dims) != 1 || int(t.Dims[0]) != m.Output.Rows || m.Output == m.Embed {
		return fmt.Errorf("output_ids.weight must be I32 [%d] (one id per row of output.weight), got %s %s", m.Output.Rows, t.Type, t.Shape())
	}
	raw := ts.data[t.Name]
	ids := make([]int32, m.Output.Rows)
	for i := range ids {
		ids[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		if ids[i] < 0 || int(ids[i]) >= vocab || (i > 0 && ids[i] <= ids[i-1]) {
			return fmt.Errorf("output_ids.weight[%d] = %d: ids must be ascending and below the vocabulary size %d", i, ids[i], vocab)
		}
	}
	m.OutputIDs = ids
	return nil
}

func (m *Model) loadLayer(ts *tensorSet, c *Config, i int) error {
	l := &m.Layers[i]
	f := c.fam
	p := fmt.Sprintf("blk.%d.", i)
	ld := layerTensors{ts: ts, p: p}
	ld.vec(&l.AttnNorm, "attn_norm.weight", c.Embd, false)
	ld.vec(&l.FFNNorm, f.ffnNorm+".weight", c.Embd, false)
	if ld.err != nil {
		return ld.err
	}
	var err error
	if f.mixer != nil {
		if l.Mixer, err = f.mixer(ts, c, i, p); err != nil {
			return err
		}
	}
	if l.Mixer == nil {
		if err = m.loadAttention(ts, c, l, p); err != nil {
			return err
		}
	}
	return m.loadFFN(ts, c, l, i, p)
}

// loadAttention loads an attention layer's projections, biases and norms.
func (m *Model) loadAttention(ts *tensorSet, c *Config, l *Layer, p string) error {
	f := c.fam
	ld := layerTensors{ts: ts, p: p}
	vec, mat := ld.vec, ld.mat
	qRows := c.QDim()
	if f.attnGate {
		qRows *= 2
	}
	if f.fusedQKV {
		var qkv *Matrix
		mat(&qkv, "attn_qkv.weight", c.Embd, c.QDim()+2*c.KVDim())
		if ld.err != nil {
			return ld.err
		}
		q, kv := c.QDim(), c.KVDim()
		l.Q, l.K, l.V = qkv.Slice(0, q), qkv.Slice(q, q+kv), qkv.Slice(q+kv, q+2*kv)
	} else {
		mat(&l.Q, "attn_q.weight", c.Embd, qRows)
		mat(&l.K, "attn_k.weight", c.Embd, c.KVDim())
		mat(&l.V, "attn_v.weight", c.Embd, c.KVDim())
	}
	mat(&l.O, "attn_output.weight", c.QDim(), c.Embd)
	if f.biases != biasNone {
		optional := f.biases == biasOptional
		vec(&l.BQ, "attn_q.bias", c.QDim(), optional)
		vec(&l.BK, "attn_k.bias", c.KVDim(), optional)
		vec(&l.BV, "attn_v.bias", c.KVDim(), optional)
	}
	if f.biases == biasOptional {
		vec(&l.BO, "attn_output.bias", c.Embd, true)
	}
	switch f.qkNorm {
	case qkNormHead:
		vec(&l.QNorm, "attn_q_norm.weight", c.HeadDim, false)
		vec(&l.KNorm, "attn_k_norm.weight", c.HeadDim, false)
	case qkNormWhole:
		vec(&l.QNorm, "attn_q_norm.weight", c.QDim(), false)
		vec(&l.KNorm, "attn_k_norm.weight", c.KVDim(), false)
	}
	if f.postNorms {
		vec(&l.PostAttnNorm, "post_attention_norm.weight", c.Embd, false)
		vec(&l.PostFFNNorm, "post_ffw_norm.weight", c.Embd, false)
	}
	return ld.err
}

// layerTensors loads one layer's tensors (names after the prefix p),
// keeping the first error: a run of loads is checked once.
type layerTensors struct {
	ts  *tensorSet
	p   string
	err error
}

// vec loads the vector p+name of n floats.
func (ld *layerTensors) vec(dst *[]float32, name string, n int, optional bool) {
	if ld.err == nil {
		*dst, ld.err = ld.ts.vector(ld.p+name, n, optional)
	}
}

// mat loads the matrix p+name of rows x cols.
func (ld *layerTensors) mat(dst **Matrix, name string, cols, rows int) {
	if ld.err == nil {
		*dst, ld.err = ld.ts.matrix(ld.p+name, cols, rows, false)
	}
}

// floats loads the F32 tensor p+name of shape dims.
func (ld *layerTensors) floats(dst *[]float32, name string, dims ...int) {
	if ld.err == nil {
		*dst, ld.err = ld.ts.tensorFloats(ld.p+name, dims...)
	}
}

// experts loads the 3-D tensor p+name as n matrices of rows x cols.
func (ld *layerTensors) experts(dst *[]*Matrix, name string, cols, rows, n int) {
	if ld.err == nil {
		*dst, ld.err = ld.ts.experts(ld.p+name, cols, rows, n)
	}
}

// loadFFN loads layer i's FFN into l: dense, or the router, experts,
// shared experts and their gate of a MoE layer.
func (m *Model) loadFFN(ts *tensorSet, c *Config, l *Layer, i int, p string) error {
	f := c.fam
	if !c.moeLayer(i) {
		return ts.ffn(&l.FFN, p, "", c.Embd, c.FF, f.biases == biasOptional)
	}
	ld := layerTensors{ts: ts, p: p}
	ld.mat(&l.Router, "ffn_gate_inp.weight", c.Embd, c.Experts)
	if f.expBias {
		ld.vec(&l.ExpBias, "exp_probs_b.bias", c.Experts, true)
	}
	for _, w := range expertWeights(l, c) {
		ld.experts(w.dst, w.name, w.cols, w.rows, c.Experts)
	}
	if ld.err != nil {
		return ld.err
	}
	if f.sharedGate {
		t, err := ts.get(p+"ffn_gate_inp_shexp.weight", false, c.Embd)
		if err != nil {
			return err
		}
		if l.SharedGate, err = ts.newMatrix(t, c.Embd, 1); err != nil {
			return err
		}
	}
	if c.SharedFF > 0 {
		return ts.ffn(&l.Shared, p, "_shexp", c.Embd, c.SharedFF, false)
	}
	return nil
}

// ffn loads the FFN p+ffn_{gate,up,down}+suffix.weight of width ff, with
// their optional biases if the family has them.
func (ts *tensorSet) ffn(f *FFN, p, suffix string, embd, ff int, biases bool) error {
	var err error
	for _, s := range []struct {
		dst        **Matrix
		name       string
		cols, rows int
	}{{&f.Gate, "ffn_gate", embd, ff}, {&f.Up, "ffn_up", embd, ff}, {&f.Down, "ffn_down", ff, embd}} {
		if *s.dst, err = ts.matrix(p+s.name+suffix+".weight", s.cols, s.rows, false); err != nil {
			return err
		}
	}
	if !biases {
		return nil
	}
	for _, s := range []struct {
		dst  *[]float32
		name string
		n    int
	}{{&f.BGate, "ffn_gate", ff}, {&f.BUp, "ffn_up", ff}, {&f.BDown, "ffn_down", embd}} {
		if *s.dst, err = ts.vector(p+s.name+suffix+".bias", s.n, true); err != nil {
			return err
		}
	}
	return nil
}

// skipped reports whether tensor name belongs to a block past Layers (the
// NextN/MTP blocks llama.cpp loads with TENSOR_SKIP): such tensors are
// neither required nor checked.
func (c *Config) skipped(name string) bool {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return false
	}
	n, _, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	l, err := strconv.Atoi(n)
	return err == nil && l >= c.Layers && l < c.Layers+c.NextN
}

// KVCacheBytes returns the size of an F32 KV cache for ctx positions (the
// attention layers' keys and values), with the state of the layers that
// have other token mixers (MLA's latent cache, KDA's and Gated DeltaNet's
// recurrent and convolution state, which does not grow with ctx).
func (m *Model) KVCacheBytes(ctx int) int64 {
	return m.KVCacheBytesOf(ctx, gguf.TypeF32, gguf.TypeF32)
}

// KVCacheBytesOf is KVCacheBytes with keys of type tk and values of type
// tv (Options.TypeK, TypeV; the other mixers' state stays float32).
func (m *Model) KVCacheBytesOf(ctx int, tk, tv gguf.Type) int64 {
	c := &m.Config
	var n int64
	row := int64(kernels.ActRowBytes(tk, c.KVDim()) + kernels.ActRowBytes(tv, c.KVDim()))
	for i := range m.Layers {
		L := &m.Layers[i]
		if L.attends() {
			n += int64(ctx) * row
		}
		if L.Mixer != nil {
			n += 4 * int64(L.Mixer.contextFloats(ctx))
		}
	}
	return n
}

// attends reports whether the layer runs the standard attention block
// (with a slot in the KV cache).
func (l *Layer) attends() bool { return l.Mixer == nil }

var negInf = float32(math.Inf(-1))
