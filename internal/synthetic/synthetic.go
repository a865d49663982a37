package synthetic

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/nprand"
)

// Spec is one synthetic llama model (README section 1).
type Spec struct {
	Name                         string
	Embd, FF, Layers, Heads, KVs int
	// Experts and Used are llama.expert_count and expert_used_count; 0
	// for a dense model, whose FF is the FFN width (else per expert).
	Experts, Used int
	// Tied models have no output.weight: the head reuses token_embd.
	Tied bool
	Seed uint64
}

// The three models of refdata/synthetic.
var (
	Dense256 = Spec{Name: "syn-dense-256", Embd: 256, FF: 768, Layers: 4, Heads: 8, KVs: 4, Seed: 1}
	Tied512  = Spec{Name: "syn-dense-512-tied", Embd: 512, FF: 1536, Layers: 2, Heads: 8, KVs: 8, Tied: true, Seed: 11}
	MoE256   = Spec{Name: "syn-moe-256", Embd: 256, FF: 512, Layers: 4, Heads: 8, KVs: 4, Experts: 8, Used: 2, Seed: 3}
)

// vocab is the vocabulary size of the tokenizer every model uses.
const vocab = 512

// tensor is one weight in generation (= file) order: its ggml dims and how
// its standard normals are scaled.
type tensor struct {
	name string
	dims []uint64
	norm bool    // w = 1 + 0.02 z
	std  float64 // else w = z * std
}

func (s Spec) tensors() []tensor {
	e, f := uint64(s.Embd), uint64(s.FF)
	headDim := e / uint64(s.Heads)
	kv := headDim * uint64(s.KVs)
	invE := 1 / math.Sqrt(float64(s.Embd))
	embdStd := 1.0
	if s.Tied {
		embdStd = 2 / math.Sqrt(float64(s.Embd))
	}
	ts := []tensor{
		{name: "token_embd.weight", dims: []uint64{e, vocab}, std: embdStd},
		{name: "output_norm.weight", dims: []uint64{e}, norm: true},
	}
	if !s.Tied {
		ts = append(ts, tensor{name: "output.weight", dims: []uint64{e, vocab}, std: 2 / math.Sqrt(float64(s.Embd))})
	}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor{name: p + "attn_norm.weight", dims: []uint64{e}, norm: true},
			tensor{name: p + "attn_q.weight", dims: []uint64{e, e}, std: invE},
			tensor{name: p + "attn_k.weight", dims: []uint64{e, kv}, std: invE},
			tensor{name: p + "attn_v.weight", dims: []uint64{e, kv}, std: invE},
			tensor{name: p + "attn_output.weight", dims: []uint64{e, e}, std: 3 * invE},
			tensor{name: p + "ffn_norm.weight", dims: []uint64{e}, norm: true},
		)
		down := 3 / math.Sqrt(float64(s.FF))
		if s.Experts == 0 {
			ts = append(ts,
				tensor{name: p + "ffn_gate.weight", dims: []uint64{e, f}, std: invE},
				tensor{name: p + "ffn_up.weight", dims: []uint64{e, f}, std: invE},
				tensor{name: p + "ffn_down.weight", dims: []uint64{f, e}, std: down},
			)
			continue
		}
		x := uint64(s.Experts)
		ts = append(ts,
			tensor{name: p + "ffn_gate_inp.weight", dims: []uint64{e, x}, std: 2 * invE},
			tensor{name: p + "ffn_gate_exps.weight", dims: []uint64{e, f, x}, std: invE},
			tensor{name: p + "ffn_up_exps.weight", dims: []uint64{e, f, x}, std: invE},
			tensor{name: p + "ffn_down_exps.weight", dims: []uint64{f, e, x}, std: down},
		)
	}
	return ts
}

// metadata is the header gguf-py wrote, in its order (README section 2),
// with the tokenizer arrays taken from tok.
func (s Spec) metadata(tok *gguf.Metadata) (*gguf.Metadata, error) {
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "general.name", Value: gguf.String(s.Name)},
		{Key: "llama.context_length", Value: u(512)},
		{Key: "llama.embedding_length", Value: u(s.Embd)},
		{Key: "llama.block_count", Value: u(s.Layers)},
		{Key: "llama.feed_forward_length", Value: u(s.FF)},
		{Key: "llama.attention.head_count", Value: u(s.Heads)},
		{Key: "llama.attention.head_count_kv", Value: u(s.KVs)},
		{Key: "llama.rope.dimension_count", Value: u(s.Embd / s.Heads)},
		{Key: "llama.rope.freq_base", Value: gguf.Float32(10000)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
	}
	if s.Experts > 0 {
		kvs = append(kvs, gguf.KV{Key: "llama.expert_count", Value: u(s.Experts)}, gguf.KV{Key: "llama.expert_used_count", Value: u(s.Used)})
	}
	kvs = append(kvs, gguf.KV{Key: "general.file_type", Value: u(0)}, gguf.KV{Key: "tokenizer.ggml.model", Value: gguf.String("llama")})
	for _, k := range []string{"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"} {
		v, ok := tok.Get(k)
		if !ok || v.Len() != vocab {
			return nil, fmt.Errorf("tokenizer metadata: %s missing or not %d long", k, vocab)
		}
		kvs = append(kvs, gguf.KV{Key: k, Value: v})
	}
	kvs = append(kvs,
		gguf.KV{Key: "tokenizer.ggml.unknown_token_id", Value: u(0)},
		gguf.KV{Key: "tokenizer.ggml.bos_token_id", Value: u(1)},
		gguf.KV{Key: "tokenizer.ggml.eos_token_id", Value: u(2)},
	)
	return gguf.NewMetadata(kvs...)
}

// Write writes the F32 model to w. tok supplies the tokenizer arrays: the
// metadata of models/stories260K-f32.gguf.
func Write(w io.Writer, s Spec, tok *gguf.Metadata) error {
	md, err := s.metadata(tok)
	if err != nil {
		return err
	}
	ts := s.tensors()
	infos := make([]gguf.TensorInfo, len(ts))
	for i, t := range ts {
		infos[i] = gguf.TensorInfo{Name: t.name, Dims: t.dims, Type: gguf.TypeF32}
	}
	gw, err := gguf.NewWriter(w, 3, md, infos)
	if err != nil {
		return err
	}
	rng := nprand.New(s.Seed)
	var buf []byte
	for _, t := range ts {
		n := 1
		for _, d := range t.dims {
			n *= int(d)
		}
		buf = fill(buf[:0], rng, n, t)
		if _, err := gw.Write(buf); err != nil {
			return err
		}
	}
	return gw.Close()
}

// fill appends the n weights of t as little-endian float32: one
// standard_normal call over the whole tensor, then float64 arithmetic and
// one rounding to float32. The explicit float64 conversion keeps the
// compiler from fusing 1 + 0.02 z into one FMA rounding where numpy rounds
// twice.
func fill(dst []byte, rng *nprand.Generator, n int, t tensor) []byte {
	for range n {
		z := rng.StandardNormal()
		w := float32(z * t.std)
		if t.norm {
			w = float32(1 + float64(0.02*z))
		}
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(w))
	}
	return dst
}

// WriteFile writes the F32 model to path, taking the tokenizer from the
// GGUF at tokPath (models/stories260K-f32.gguf).
func WriteFile(path string, s Spec, tokPath string) error {
	tf, err := os.Open(tokPath)
	if err != nil {
		return err
	}
	defer tf.Close()
	st, err := tf.Stat()
	if err != nil {
		return err
	}
	tr, err := gguf.NewReader(tf, st.Size())
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := Write(bw, s, tr.Metadata); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
