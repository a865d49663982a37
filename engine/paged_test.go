package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/quant"
)

// moeSpec is a generated Mixtral-style llama MoE (llama.cpp's tensor
// names), written experts-last so it can be paged. Its router is skewed
// as real routers are: every token embedding shares an offset vector m,
// and router row e is z_e m + noise with z_e falling off like a Zipf law,
// so a few experts are much more popular; consecutive tokens of the test
// sequences repeat words, so they reuse experts.
type moeSpec struct {
	embd, ff, layers, experts, used int
	typ, expType                    gguf.Type
	lastOrder                       bool // false: experts interleaved with the layers (not pageable)
}

func (g moeSpec) String() string {
	return fmt.Sprintf("x%d-k%d-%s-%s", g.experts, g.used, g.typ, g.expType)
}

// writeMoE writes the model to dir and returns its path.
func writeMoE(t testing.TB, dir string, g moeSpec) string {
	t.Helper()
	const vocab = 256
	md := &gguf.Metadata{}
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	md.Set("general.architecture", gguf.String("llama"))
	md.Set("llama.context_length", u(256))
	md.Set("llama.embedding_length", u(g.embd))
	md.Set("llama.feed_forward_length", u(g.ff))
	md.Set("llama.block_count", u(g.layers))
	md.Set("llama.attention.head_count", u(4))
	md.Set("llama.attention.head_count_kv", u(2))
	md.Set("llama.attention.layer_norm_rms_epsilon", gguf.Float32(1e-5))
	md.Set("llama.expert_count", u(g.experts))
	md.Set("llama.expert_used_count", u(g.used))
	rng := rand.New(rand.NewPCG(uint64(g.experts), uint64(g.expType)))
	type tensor struct {
		info gguf.TensorInfo
		data []byte
	}
	var ts []tensor
	offset := make([]float32, g.embd)
	for i := range offset {
		offset[i] = float32(rng.NormFloat64())
	}
	add := func(name string, typ gguf.Type, gen func(i int) float32, dims ...int) {
		n := 1
		d := make([]uint64, len(dims))
		for i, v := range dims {
			n *= v
			d[i] = uint64(v)
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = gen(i)
		}
		b := bytesOf(x)
		if typ != gguf.TypeF32 {
			size, _ := typ.RowSize(int64(n))
			b = make([]byte, size)
			if err := quant.Quantize(typ, b, x, nil); err != nil {
				t.Fatal(err)
			}
		}
		ts = append(ts, tensor{gguf.TensorInfo{Name: name, Dims: d, Type: typ}, b})
	}
	normal := func(std float64) func(int) float32 {
		return func(int) float32 { return float32(std * rng.NormFloat64()) }
	}
	norm := func(int) float32 { return float32(1 + 0.02*rng.NormFloat64()) }
	e := 1 / float64(g.embd)
	add("token_embd.weight", g.typ, func(i int) float32 {
		return float32(0.5*float64(offset[i%g.embd]) + rng.NormFloat64())
	}, g.embd, vocab)
	add("output_norm.weight", gguf.TypeF32, norm, g.embd)
	add("output.weight", g.typ, normal(2*math.Sqrt(e)), g.embd, vocab)
	for l := 0; l < g.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.TypeF32, norm, g.embd)
		add(p+"attn_q.weight", g.typ, normal(math.Sqrt(e)), g.embd, g.embd)
		add(p+"attn_k.weight", g.typ, normal(math.Sqrt(e)), g.embd, g.embd/2)
		add(p+"attn_v.weight", g.typ, normal(math.Sqrt(e)), g.embd, g.embd/2)
		add(p+"attn_output.weight", g.typ, normal(3*math.Sqrt(e)), g.embd, g.embd)
		add(p+"ffn_norm.weight", gguf.TypeF32, norm, g.embd)
		zipf := make([]float64, g.experts)
		for x := range zipf {
			zipf[x] = 3 / float64(1+(x*7)%g.experts) // popular experts spread over the ids
		}
		add(p+"ffn_gate_inp.weight", gguf.TypeF32, func(i int) float32 {
			return float32(zipf[i/g.embd]*float64(offset[i%g.embd])*e + 2*math.Sqrt(e)*rng.NormFloat64())
		}, g.embd, g.experts)
		add(p+"ffn_gate_exps.weight", g.expType, normal(math.Sqrt(e)), g.embd, g.ff, g.experts)
		add(p+"ffn_down_exps.weight", g.expType, normal(3*math.Sqrt(1/float64(g.ff))), g.ff, g.embd, g.experts)
		add(p+"ffn_up_exps.weight", g.expType, normal(math.Sqrt(e)), g.embd, g.ff, g.experts)
	}
	if g.lastOrder {
		slices.SortStableFunc(ts, func(a, b tensor) int {
			ea, eb := experts.IsExpert(a.info.Name), experts.IsExpert(b.info.Name)
			switch {
			case ea == eb:
				return 0
			case eb:
				return -1
			}
			return 1
		})
	}
	var infos []gguf.TensorInfo
	var datas [][]byte
	for _, x := range ts {
		infos = append(infos, x.info)
		datas = append(datas, x.data)
	}
	path := filepath.Join(dir, g.String()+".gguf")
	writeGGUF(t, path, md, infos, datas)
	return path
}

// moeTokens is a test text: words that recur, as text does.
func moeTokens(n int) []int32 {
	rng := rand.New(rand.NewPCG(7, 7))
	words := []int32{3, 17, 42, 99, 5, 200, 17, 64}
	out := make([]int32, n)
	for i := range out {
		if rng.IntN(3) == 0 {
			out[i] = int32(rng.IntN(256))
		} else {
			out[i] = words[rng.IntN(len(words))]
		}
	}
	return out
}

// runLogits evaluates toks one at a time (batch 1) or as one prompt and
// returns every position's logits.
func runLogits(t *testing.T, path string, oo OpenOptions, so Options, toks []int32, oneByOne bool) ([]float32, *PagerStats) {
	t.Helper()
	m, err := OpenWith(path, oo)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	so.Ctx = 256
	s, err := NewState(m, so)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []float32
	keep := func(_ int, l []float32) { out = append(out, l...) }
	if oneByOne {
		for _, tok := range toks {
			if err := s.Eval([]int32{tok}, 0, keep); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := s.Eval(toks, 0, keep); err != nil {
		t.Fatal(err)
	}
	return out, s.PagerStats()
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPagerBitIdentical: with no bias, whatever the pool size (from one
// token's working set to every expert), policy, prefetch and batching,
// a paged run computes exactly the bits of the unpaged run of the same
// file, for F32, Q4_K and Q2_K experts and 8 to 64 experts per layer.
func TestPagerBitIdentical(t *testing.T) {
	dir := t.TempDir()
	specs := []moeSpec{
		{embd: 64, ff: 64, layers: 3, experts: 64, used: 4, typ: gguf.TypeF32, expType: gguf.TypeF32, lastOrder: true},
		{embd: 256, ff: 256, layers: 2, experts: 8, used: 2, typ: gguf.TypeQ8_0, expType: gguf.TypeQ4_K, lastOrder: true},
		{embd: 256, ff: 256, layers: 2, experts: 16, used: 4, typ: gguf.TypeQ8_0, expType: gguf.TypeQ2_K, lastOrder: true},
	}
	if testing.Short() {
		specs = specs[:2]
	}
	toks := moeTokens(40)
	for _, g := range specs {
		path := writeMoE(t, dir, g)
		for _, oneByOne := range []bool{true, false} {
			want, _ := runLogits(t, path, OpenOptions{}, Options{Batch: 8}, toks, oneByOne)
			for _, pool := range []int{g.used, g.experts / 2, g.experts} {
				for _, pol := range []string{"lru", "lfu:0.9"} {
					for _, pre := range []int{0, g.used} {
						if !oneByOne && pre > 0 {
							continue // prefetch runs when decoding one token at a time
						}
						policy, _ := pager.ParsePolicy(pol)
						po := &PagerOptions{Pool: pool, Policy: policy, Prefetch: pre, Readers: 3}
						got, st := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po, Batch: 8}, toks, oneByOne)
						name := fmt.Sprintf("%s one=%v pool=%d %s prefetch=%d", g, oneByOne, pool, pol, pre)
						if !sameBits(got, want) {
							t.Fatalf("%s: logits differ from the unpaged run", name)
						}
						if st.Misses == 0 || st.BytesRead == 0 {
							t.Fatalf("%s: nothing was paged in (%+v)", name, st)
						}
						if pre == 0 && st.BytesRead != st.Misses*expertBytes(t, path) {
							t.Fatalf("%s: read %d bytes for %d misses of %d bytes", name, st.BytesRead, st.Misses, expertBytes(t, path))
						}
						if pool == g.experts && st.Misses > int64(g.experts*g.layers) {
							t.Fatalf("%s: a pool of every expert missed %d times", name, st.Misses)
						}
					}
				}
			}
		}
	}
}

// expertBytes is one expert's gate, up and down bytes in path.
func expertBytes(t *testing.T, path string) int64 {
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	L := &m.Layers[0]
	return int64(L.GateExps[0].Rows*L.GateExps[0].RowBytes + L.UpExps[0].Rows*L.UpExps[0].RowBytes + L.DownExps[0].Rows*L.DownExps[0].RowBytes)
}

// TestPagerBiasReproducible: a cache-aware run (bias > 0, prefetch on)
// gives the same bits twice, and misses less than the unbiased run.
func TestPagerBiasReproducible(t *testing.T) {
	g := moeSpec{embd: 64, ff: 64, layers: 3, experts: 32, used: 4, typ: gguf.TypeF32, expType: gguf.TypeF32, lastOrder: true}
	path := writeMoE(t, t.TempDir(), g)
	toks := moeTokens(64)
	run := func(bias float32, pre int) ([]float32, *PagerStats) {
		po := &PagerOptions{Pool: 8, Policy: pager.Policy{Kind: pager.LRU}, Bias: bias, Prefetch: pre}
		return runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po}, toks, true)
	}
	base, st0 := run(0, 0)
	a, sa := run(0.3, 4)
	b, sb := run(0.3, 4)
	if !sameBits(a, b) {
		t.Fatal("two biased runs differ")
	}
	if sa.Misses != sb.Misses || sa.Hits != sb.Hits || sa.Prefetches != sb.Prefetches {
		t.Fatalf("two biased runs paged differently: %+v vs %+v", sa.Stats, sb.Stats)
	}
	if sameBits(a, base) {
		t.Fatal("bias 0.3 changed nothing")
	}
	_, s1 := run(0.3, 0)
	t.Logf("misses over %d tokens, pool 8 of 32: bias 0 %d, bias 0.3 %d, bias 0.3 + prefetch %d (%d prefetched, %d wasted)",
		len(toks), st0.Misses, s1.Misses, sa.Misses, sa.Prefetches, sa.PrefetchWasted)
	if s1.Misses >= st0.Misses {
		t.Fatalf("bias 0.3 missed %d times, bias 0 %d", s1.Misses, st0.Misses)
	}
}

// TestPagerTraceMatchesSimulator: the trace a paged run records, replayed
// by the simulator under the same pool size and policy, counts exactly
// the hits and misses the runtime counted.
func TestPagerTraceMatchesSimulator(t *testing.T) {
	g := moeSpec{embd: 64, ff: 64, layers: 3, experts: 32, used: 4, typ: gguf.TypeF32, expType: gguf.TypeF32, lastOrder: true}
	path := writeMoE(t, t.TempDir(), g)
	toks := moeTokens(64)
	for _, c := range []struct {
		pol  string
		bias float32
	}{{"lru", 0}, {"lru", 0.2}, {"lfu:0.95", 0}, {"lfu:0.95", 0.2}} {
		pol := c.pol
		for _, oneByOne := range []bool{true, false} {
			policy, _ := pager.ParsePolicy(pol)
			var buf bytes.Buffer
			tw := pager.NewTraceWriter(&buf, g.experts)
			po := &PagerOptions{Pool: 6, Policy: policy, Bias: c.bias}
			_, st := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po, Trace: tw, Batch: 16}, toks, oneByOne)
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			tr, err := pager.ReadTrace(&buf)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := pager.Simulate(tr, 6, policy)
			if err != nil {
				t.Fatal(err)
			}
			if sim.Total != st.Stats {
				t.Fatalf("%s one=%v: simulator %+v, runtime %+v", pol, oneByOne, sim.Total, st.Stats)
			}
			opt, err := pager.Simulate(tr, 6, pager.Policy{Kind: pager.Belady})
			if err != nil {
				t.Fatal(err)
			}
			if opt.Total.Misses > sim.Total.Misses {
				t.Fatalf("belady missed %d > %s's %d", opt.Total.Misses, pol, sim.Total.Misses)
			}
			t.Logf("%s bias %g one=%v: hit rate %.3f (belady %.3f) over %d calls", pol, c.bias, oneByOne, st.HitRate(), opt.Total.HitRate(), st.Calls)
		}
	}
}

// TestPagerErrors: a pool below one token's working set, a file that is
// not experts-last, Belady in the runtime and a pager for an unpaged
// model are refused with a message that says what to do.
func TestPagerErrors(t *testing.T) {
	dir := t.TempDir()
	g := moeSpec{embd: 64, ff: 64, layers: 2, experts: 8, used: 3, typ: gguf.TypeF32, expType: gguf.TypeF32, lastOrder: true}
	last := writeMoE(t, dir, g)
	g.lastOrder = false
	g.used = 2
	mixed := writeMoE(t, dir, g)
	if _, err := OpenWith(mixed, OpenOptions{PageExperts: true}); err == nil || !strings.Contains(err.Error(), "--experts-last") {
		t.Fatalf("not experts-last: %v", err)
	}
	m, err := OpenWith(last, OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct {
		o    *PagerOptions
		want string
	}{
		{&PagerOptions{Pool: 2}, "smaller than one token's working set (3 experts"},
		{&PagerOptions{Budget: 1000}, "smaller than one token's working set"},
		{&PagerOptions{Pool: 4, Policy: pager.Policy{Kind: pager.Belady}}, "gguf moe simulate"},
		{nil, "give the State a pager"},
	} {
		if _, err := NewState(m, Options{Ctx: 16, Pager: c.o}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
	}
	um, err := Open(last)
	if err != nil {
		t.Fatal(err)
	}
	defer um.Close()
	if _, err := NewState(um, Options{Ctx: 16, Pager: &PagerOptions{Pool: 4}}); err == nil || !strings.Contains(err.Error(), "PageExperts") {
		t.Errorf("pager on an unpaged model: %v", err)
	}
	if _, err := OpenWith(last, OpenOptions{ExpertsUsed: 9}); err == nil {
		t.Error("--experts 9 of 8 was accepted")
	}
}
