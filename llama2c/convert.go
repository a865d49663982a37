package llama2c

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"github.com/ggufkit/gguf/gguf"
)

// Token types as llama.cpp numbers them (llama_token_type).
const (
	typeNormal  = 1
	typeUnknown = 2
	typeControl = 3
	typeByte    = 6
)

var byteToken = regexp.MustCompile(`^<0x[0-9A-Fa-f]`)

// vocab returns the GGUF tokens and token types of t as llama.cpp's
// converter makes them.
func (t *Tokenizer) vocab() ([]string, []int32) {
	tokens := make([]string, len(t.Pieces))
	types := make([]int32, len(t.Pieces))
	for i, p := range t.Pieces {
		typ := int32(typeNormal)
		switch {
		case i == 0:
			p, typ = []byte("<unk>"), typeUnknown
		case i == 1:
			p, typ = []byte("<s>"), typeControl
		case i == 2:
			p, typ = []byte("</s>"), typeControl
		case len(p) == 0:
			typ = typeControl
		case byteToken.Match(p):
			typ = typeByte
		}
		tokens[i] = string(bytes.ReplaceAll(p, []byte(" "), []byte("\u2581")))
		types[i] = typ
	}
	return tokens, types
}

// Metadata returns the GGUF metadata of the converted model.
func Metadata(c *Config, t *Tokenizer) (*gguf.Metadata, error) {
	if len(t.Pieces) != c.Vocab {
		return nil, fmt.Errorf("tokenizer has %d tokens, the checkpoint %d", len(t.Pieces), c.Vocab)
	}
	tokens, types := t.vocab()
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	return gguf.NewMetadata(
		gguf.KV{Key: gguf.KeyTokens, Value: gguf.MustArray(tokens)},
		gguf.KV{Key: "tokenizer.ggml.scores", Value: gguf.MustArray(t.Scores)},
		gguf.KV{Key: gguf.KeyTokenType, Value: gguf.MustArray(types)},
		gguf.KV{Key: "tokenizer.ggml.model", Value: gguf.String("llama")},
		gguf.KV{Key: gguf.KeyArchitecture, Value: gguf.String("llama")},
		gguf.KV{Key: gguf.KeyName, Value: gguf.String("llama")},
		gguf.KV{Key: "tokenizer.ggml.unknown_token_id", Value: u(0)},
		gguf.KV{Key: "tokenizer.ggml.bos_token_id", Value: u(1)},
		gguf.KV{Key: "tokenizer.ggml.eos_token_id", Value: u(2)},
		gguf.KV{Key: "llama.context_length", Value: u(c.SeqLen)},
		gguf.KV{Key: "llama.embedding_length", Value: u(c.Dim)},
		gguf.KV{Key: "llama.feed_forward_length", Value: u(c.HiddenDim)},
		gguf.KV{Key: "llama.attention.head_count", Value: u(c.Heads)},
		gguf.KV{Key: "llama.attention.head_count_kv", Value: u(c.KVHeads)},
		gguf.KV{Key: "llama.block_count", Value: u(c.Layers)},
		gguf.KV{Key: "llama.rope.dimension_count", Value: u(c.HeadSize())},
		gguf.KV{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
	)
}

// tensor is one output tensor and where its bytes come from.
type tensor struct {
	info gguf.TensorInfo
	src  *io.SectionReader
}

// tensors lists the GGUF tensors in llama.cpp's converter order.
func (c *Checkpoint) tensors() []tensor {
	D, F, KV, V := int64(c.Dim), int64(c.HiddenDim), int64(c.KVDim()), int64(c.Vocab)
	mk := func(name string, src *io.SectionReader, dims ...int64) tensor {
		d := make([]uint64, len(dims))
		for i, v := range dims {
			d[i] = uint64(v)
		}
		return tensor{gguf.TensorInfo{Name: name, Dims: d, Type: gguf.TypeF32}, src}
	}
	cls := c.array("wcls", 0, V*D)
	if c.Shared {
		cls = c.array("token_embedding_table", 0, V*D)
	}
	ts := []tensor{
		mk("token_embd.weight", c.array("token_embedding_table", 0, V*D), D, V),
		mk("output_norm.weight", c.array("rms_final_weight", 0, D), D),
		mk("output.weight", cls, D, V),
	}
	for l := int64(0); l < int64(c.Layers); l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			mk(p+"attn_q.weight", c.array("wq", l*D*D, D*D), D, D),
			mk(p+"attn_k.weight", c.array("wk", l*D*KV, D*KV), D, KV),
			mk(p+"attn_v.weight", c.array("wv", l*D*KV, D*KV), D, KV),
			mk(p+"attn_output.weight", c.array("wo", l*D*D, D*D), D, D),
			mk(p+"attn_norm.weight", c.array("rms_att_weight", l*D, D), D),
			mk(p+"ffn_gate.weight", c.array("w1", l*D*F, D*F), D, F),
			mk(p+"ffn_down.weight", c.array("w2", l*F*D, F*D), F, D),
			mk(p+"ffn_up.weight", c.array("w3", l*D*F, D*F), D, F),
			mk(p+"ffn_norm.weight", c.array("rms_ffn_weight", l*D, D), D),
		)
	}
	return ts
}

// Convert writes the GGUF file of checkpoint c with tokenizer t to w, one
// tensor at a time straight from the checkpoint (nothing is held in memory
// but the vocabulary).
func Convert(w io.Writer, c *Checkpoint, t *Tokenizer) error {
	md, err := Metadata(&c.Config, t)
	if err != nil {
		return err
	}
	ts := c.tensors()
	infos := make([]gguf.TensorInfo, len(ts))
	for i := range ts {
		infos[i] = ts[i].info
	}
	gw, err := gguf.NewWriter(w, 3, md, infos)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if _, err := io.Copy(gw, t.src); err != nil {
			return fmt.Errorf("writing %s: %w", t.info.Name, err)
		}
	}
	return gw.Close()
}
