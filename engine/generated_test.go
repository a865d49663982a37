package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/quant"
)

// genSpec is a generated llama model: random weights scaled to keep
// activations O(1), stories260K's tokenizer (vocabulary 512), so that
// `gguf run` can run it too.
type genSpec struct {
	embd, ff, layers, heads, kvHeads int
	typ                              gguf.Type // type of every matrix
}

// writeGenerated writes the model to dir and returns its path.
func writeGenerated(t testing.TB, dir string, g genSpec) string {
	t.Helper()
	f, err := os.Open(shared.Path(t, "models", "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	src, err := gguf.NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := &gguf.Metadata{}
	for _, kv := range src.Metadata.KVs() {
		if kv.Key == "general.architecture" || len(kv.Key) > 10 && kv.Key[:10] == "tokenizer." {
			md.Set(kv.Key, kv.Value)
		}
	}
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	md.Set("llama.context_length", u(512))
	md.Set("llama.embedding_length", u(g.embd))
	md.Set("llama.feed_forward_length", u(g.ff))
	md.Set("llama.block_count", u(g.layers))
	md.Set("llama.attention.head_count", u(g.heads))
	md.Set("llama.attention.head_count_kv", u(g.kvHeads))
	md.Set("llama.attention.layer_norm_rms_epsilon", gguf.Float32(1e-5))
	rng := rand.New(rand.NewPCG(uint64(g.embd), uint64(g.typ)))
	kv := g.embd / g.heads * g.kvHeads
	var infos []gguf.TensorInfo
	var datas [][]byte
	add := func(name string, typ gguf.Type, std float32, dims ...int) {
		n := 1
		d := make([]uint64, len(dims))
		for i, v := range dims {
			n *= v
			d[i] = uint64(v)
		}
		x := make([]float32, n)
		for i := range x {
			if len(dims) == 1 {
				x[i] = 1 + float32(0.02*float32(rng.NormFloat64()))
			} else {
				x[i] = std * float32(rng.NormFloat64())
			}
		}
		b := kernels.BytesOf(x)
		if typ != gguf.TypeF32 {
			size, _ := typ.RowSize(int64(n))
			b = make([]byte, size)
			if err := quant.Quantize(typ, b, x, nil); err != nil {
				t.Fatal(err)
			}
		}
		infos = append(infos, gguf.TensorInfo{Name: name, Dims: d, Type: typ})
		datas = append(datas, b)
	}
	e := float32(1) / float32(g.embd)
	add("token_embd.weight", g.typ, 1, g.embd, 512)
	add("output_norm.weight", gguf.TypeF32, 0, g.embd)
	add("output.weight", g.typ, 2*sqrt32(e), g.embd, 512)
	for l := 0; l < g.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.TypeF32, 0, g.embd)
		add(p+"attn_q.weight", g.typ, sqrt32(e), g.embd, g.embd)
		add(p+"attn_k.weight", g.typ, sqrt32(e), g.embd, kv)
		add(p+"attn_v.weight", g.typ, sqrt32(e), g.embd, kv)
		add(p+"attn_output.weight", g.typ, 3*sqrt32(e), g.embd, g.embd)
		add(p+"ffn_norm.weight", gguf.TypeF32, 0, g.embd)
		add(p+"ffn_gate.weight", g.typ, sqrt32(e), g.embd, g.ff)
		add(p+"ffn_up.weight", g.typ, sqrt32(e), g.embd, g.ff)
		add(p+"ffn_down.weight", g.typ, 3*sqrt32(1/float32(g.ff)), g.ff, g.embd)
	}
	path := filepath.Join(dir, fmt.Sprintf("gen-%d-%s.gguf", g.embd, g.typ))
	writeGGUF(t, path, md, infos, datas)
	return path
}

func sqrt32(x float32) float32 { return kernels.Sqrtf(x) }

var genTypes = []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ5_K, gguf.TypeF16}

// TestGeneratedModels runs 2-layer width-256 models of several types with
// 2 threads, a prompt batch of 24 and the fast kernels, against one thread,
// one token at a time and the reference kernels: the logits agree to float
// rounding (the integer sums are identical; the order of float additions
// differs), which checks the worker pool, batching and every fast kernel
// inside a real forward pass. F16 gets 1e-2: its activations are rounded
// to half precision before each product, and a last-bit difference moves
// an element across a half-float rounding step (2^-11 relative) far more
// often than across a q8 one (synthetic README, section 6: ~1e-2 for F16).
func TestGeneratedModels(t *testing.T) {
	dir := t.TempDir()
	seq := make([]int32, 24)
	for i := range seq {
		seq[i] = int32(i*37%511 + 1)
	}
	for _, typ := range genTypes {
		m := openModel(t, writeGenerated(t, dir, genSpec{embd: 256, ff: 512, layers: 2, heads: 8, kvHeads: 4, typ: typ}))
		fast := sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 2, Batch: 24}), seq, len(seq))
		var ref []float32
		kernels.WithReference(func() { ref = sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1}), seq, len(seq)) })
		d, at := maxDiff(fast, ref)
		t.Logf("%s: max |fast - ref| %.3g", typ, d)
		tol := 1e-3
		if typ == gguf.TypeF16 {
			tol = 1e-2
		}
		if d > tol {
			t.Errorf("%s: fast and reference differ by %.3g at pos %d id %d", typ, d, at/512, at%512)
		}
	}
}

// TestBatchIndependence runs 2-layer width-256 models of the types whose
// four-row kernels (dot4) promise each product bit for bit equal to the
// single-row dot: a prompt batch of 23 on 2 threads (four-row products
// and a tail of 3) must give exactly the logits of one token at a time on
// one thread. Q4_0 is not in
// TestGeneratedModels: its kernels follow ggml's x86 float order, the
// reference the generic C one, and a last-bit difference moving a q8
// activation across a rounding step moves later logits by ~0.05.
func TestBatchIndependence(t *testing.T) {
	dir := t.TempDir()
	seq := make([]int32, 23)
	for i := range seq {
		seq[i] = int32(i*37%511 + 1)
	}
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		m := openModel(t, writeGenerated(t, dir, genSpec{embd: 256, ff: 512, layers: 2, heads: 8, kvHeads: 4, typ: typ}))
		batched := sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 2, Batch: 23}), seq, len(seq))
		single := sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1}), seq, len(seq))
		if d, at := maxDiff(batched, single); d != 0 {
			t.Errorf("%s: batched and single-token logits differ by %.3g at pos %d id %d", typ, d, at/512, at%512)
		}
	}
}

// BenchmarkGenerated measures prompt (batches of 64 tokens) and generation
// speed on 4-layer width-512 models in F32, Q8_0, Q4_K, Q6_K and Q2_K,
// fast kernels against the reference kernels in the same run (the ratio is
// what counts: this machine is shared). Run with -benchtime 1x for a quick
// look.
func BenchmarkGenerated(b *testing.B) {
	dir := b.TempDir()
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ2_K} {
		m := openModel(b, writeGenerated(b, dir, genSpec{embd: 512, ff: 1536, layers: 4, heads: 8, kvHeads: 4, typ: typ}))
		for _, threads := range []int{1, 2} {
			for _, kind := range []string{"fast", "ref"} {
				run := func(name string, fn func(b *testing.B, s *State)) {
					b.Run(fmt.Sprintf("%s/t%d/%s/%s", typ, threads, name, kind), func(b *testing.B) {
						s := newState(b, m, Options{Ctx: 512, Threads: threads, Batch: 64})
						if kind == "ref" {
							kernels.WithReference(func() { fn(b, s) })
						} else {
							fn(b, s)
						}
					})
				}
				run("prompt", benchPrompt)
				run("gen", benchGen)
			}
		}
	}
}

func benchPrompt(b *testing.B, s *State) {
	tokens := make([]int32, 64)
	for i := range tokens {
		tokens[i] = int32(i*7%500 + 3)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Reset()
		if err := s.Eval(tokens, len(tokens)-1, func(int, []float32) {}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(tokens))/b.Elapsed().Seconds(), "tok/s")
}

func benchGen(b *testing.B, s *State) {
	tok := []int32{1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() == 256 {
			s.Reset()
		}
		if err := s.Eval(tok, 0, func(_ int, l []float32) { tok[0] = argmax(l) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
