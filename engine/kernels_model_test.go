package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
)

// The kernels inside a forward pass: the low-bit and packed kernels give a
// model's logits as their references do (the kernels themselves are tested
// in package kernels).

// TestLowBitModels runs 2-layer width-256 Q1_0 and Q2_0 models, a prompt
// of 24 tokens. With the kernels in use (assembly on AVX2 machines), one
// batch on 2 threads must give the logits of one token at a time on one
// thread (the pool and batching change no product); with the portable
// kernels the logits must equal the reference kernels' bit for bit.
// (TestGeneratedModels's fast-against-reference comparison does not fit
// these types on AVX2: the assembly follows ggml's AVX2 float order, the
// reference ggml's generic one, and one last-bit difference moving a q8
// activation across a rounding step moves every later logit by ~0.05;
// TestLowBitKernels checks each order exactly instead.)
func TestLowBitModels(t *testing.T) {
	dir := t.TempDir()
	seq := make([]int32, 24)
	for i := range seq {
		seq[i] = int32(i*37%511 + 1)
	}
	for _, c := range []struct {
		typ gguf.Type
	}{{gguf.TypeQ1_0}, {gguf.TypeQ2_0}} {
		m := openModel(t, writeGenerated(t, dir, genSpec{embd: 256, ff: 512, layers: 2, heads: 8, kvHeads: 4, typ: c.typ}))
		batched := sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 2, Batch: 24}), seq, len(seq))
		single := sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1}), seq, len(seq))
		if d, at := maxDiff(batched, single); d > 1e-5 {
			t.Errorf("%s: batched and single-token logits differ by %.3g at pos %d id %d", c.typ, d, at/512, at%512)
		}
		var portable, ref []float32
		kernels.WithPortable(c.typ, func() {
			portable = sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 2, Batch: 24}), seq, len(seq))
		})
		kernels.WithReference(func() { ref = sequenceLogits(t, newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1}), seq, len(seq)) })
		if d, at := maxDiff(portable, ref); d > 1e-5 {
			t.Errorf("%s: portable and reference logits differ by %.3g at pos %d id %d", c.typ, d, at/512, at%512)
		}
	}
}

// BenchmarkLowBitModel runs 4-layer width-512 Q1_0 and Q2_0 models (every
// matrix in the type, the head too) with the integer kernels ("fast") and
// with the generic path they replaced ("generic": the model opened while
// the type is mapped to the generic q8_0 kernel), prompt batches of 64
// tokens and one-token generation, 1 and 2 threads.
func BenchmarkLowBitModel(b *testing.B) {
	dir := b.TempDir()
	for _, typ := range []gguf.Type{gguf.TypeQ1_0, gguf.TypeQ2_0} {
		path := writeGenerated(b, dir, genSpec{embd: 512, ff: 1536, layers: 4, heads: 8, kvHeads: 4, typ: typ})
		fast := openModel(b, path)
		var generic *Model
		kernels.WithGeneric(typ, func() { generic = openModel(b, path) })
		for _, threads := range []int{1, 2} {
			for _, c := range []struct {
				kind string
				m    *Model
			}{{"fast", fast}, {"generic", generic}} {
				for _, r := range []struct {
					name string
					fn   func(*testing.B, *State)
				}{{"prompt", benchPrompt}, {"gen", benchGen}} {
					b.Run(fmt.Sprintf("%s/t%d/%s/%s", typ, threads, r.name, c.kind), func(b *testing.B) {
						r.fn(b, newState(b, c.m, Options{Ctx: 512, Threads: threads, Batch: 64}))
					})
				}
			}
		}
	}
}

// packedLogits opens the model at path with o under kernel set set and
// returns the logits of crosscheck.PromptIDs evaluated batch tokens at a
// time, with the bytes the model repacked.
func packedLogits(t *testing.T, path string, o OpenOptions, set string, batch int) ([]float32, int64) {
	t.Helper()
	if err := kernels.SelectKernels(set); err != nil {
		t.Fatal(err)
	}
	m, err := OpenWith(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := newState(t, m, Options{Ctx: 64, Threads: 2, Batch: batch})
	ids := crosscheck.PromptIDs
	return sequenceLogits(t, s, ids, len(ids)), m.PackedBytes
}

// TestPackedModel opens a Q4_0, a Q8_0, a Q4_K and a Q6_K model with and without the group
// layout on every kernel set. Where a set packs the type, mapped, locked
// and (for a layout the size of the rows) read into memory, one token at a
// time as in a batch, give the same bits on every such set (the group
// kernels are exact); a layout larger than the rows is not made for a file
// read into memory, which then runs as with NoRepack. Without repacking the
// row kernels give the same logits to float rounding.
func TestPackedModel(t *testing.T) {
	ids := crosscheck.PromptIDs
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		path := crossModel(t, crosscheck.Case{Shape: "dense", Type: typ.String()})
		run := func(o OpenOptions, set string, batch int) ([]float32, int64) {
			t.Helper()
			return packedLogits(t, path, o, set, batch)
		}
		var want []float32
		for _, set := range kernels.KernelSets() {
			got, packed := run(OpenOptions{}, set, len(ids))
			rows, none := run(OpenOptions{NoRepack: true}, set, len(ids))
			if none != 0 {
				t.Errorf("%s %s: NoRepack packed %d bytes", typ, set, none)
			}
			if _ = kernels.SelectKernels(set); !kernels.Packs(typ) {
				if packed != 0 || !slices.Equal(got, rows) {
					t.Errorf("%s %s packs nothing, yet packed %d bytes or changed the logits", typ, set, packed)
				}
				continue
			}
			if packed == 0 {
				t.Fatalf("%s %s: no matrix was packed", typ, set)
			}
			if want == nil {
				want = got
				d, _ := maxDiff(rows, want)
				t.Logf("%s: %d bytes packed (%s); row kernels against the group kernels: max |diff| %.3g", typ, packed, set, d)
				if d > 0.25 {
					t.Errorf("%s: row kernels are %g off the group kernels", typ, d)
				}
			}
			same := typ != gguf.TypeQ4_K // Q4_K's layout is 32 bytes a super-block larger
			for _, c := range []struct {
				o     OpenOptions
				batch int
			}{{OpenOptions{}, len(ids)}, {OpenOptions{}, 1}, {OpenOptions{Mlock: true}, len(ids)}, {OpenOptions{NoMmap: true}, len(ids)}} {
				got, packed := run(c.o, set, c.batch)
				switch {
				case c.o.NoMmap && !same:
					if packed != 0 || !slices.Equal(got, rows) {
						t.Errorf("%s %s NoMmap: packed %d bytes of a larger layout, or changed the logits", typ, set, packed)
					}
				default:
					if d, at := maxDiff(got, want); d != 0 {
						t.Errorf("%s %s %+v batch %d: max |diff| %g at %d", typ, set, c.o, c.batch, d, at)
					}
				}
			}
		}
		if want == nil && typ == gguf.TypeQ4_0 {
			t.Errorf("%s: no kernel set packs it (every set should)", typ)
		} else if want == nil {
			t.Logf("%s: no kernel set of this build packs it", typ)
		}
	}
}

// TestPackedExperts opens a qwen3moe model whose experts are Q4_0, Q8_0,
// Q4_K or Q6_K (the rest Q8_0) on every kernel set. Where the set packs
// the experts' type, every resident expert matrix is packed at Open
// (NoRepack: none), and so is every slot of a paged model once read (in
// place; pools of half the experts: slots read again and again), which
// gives the resident model's logits bit for bit, for a 40-token prompt on
// 2 threads and one token at a time. Without repacking the row kernels
// give the same logits to float rounding.
func TestPackedExperts(t *testing.T) {
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	dir := t.TempDir()
	toks := moeTokens(40)
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		g := moeModel("qwen3moe", 256, 256, 2, 8, 2, gguf.TypeQ8_0, typ)
		path := writeMoE(t, dir, g)
		for _, set := range kernels.KernelSets() {
			if err := kernels.SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			want := kernels.Packs(typ)
			for _, noRepack := range []bool{false, true} {
				m, err := OpenWith(path, OpenOptions{NoRepack: noRepack})
				if err != nil {
					t.Fatal(err)
				}
				for l := range m.Layers {
					L := &m.Layers[l]
					for _, es := range [][]*Matrix{L.GateExps, L.UpExps, L.DownExps} {
						for e, w := range es {
							if got := w.PackedData() != nil; got != (want && !noRepack) {
								t.Fatalf("%s %s NoRepack %v: layer %d expert %d of %s packed %v", typ, set, noRepack, l, e, w.Name, got)
							}
						}
					}
				}
				m.Close()
			}
			for _, batch := range []int{len(toks), 1} {
				o := Options{Batch: batch, Threads: 2}
				res, _ := runLogits(t, path, OpenOptions{}, o, toks, batch == 1)
				o.Pager = &PagerOptions{Pool: g.Experts / 2, Readers: 2}
				paged, st := pagedPackedLogits(t, path, o, toks, want)
				if st.Misses <= int64(g.Experts) {
					t.Errorf("%s %s batch %d: %d misses: slots were not read again", typ, set, batch, st.Misses)
				}
				if !sameBits(paged, res) {
					d, at := maxDiff(paged, res)
					t.Errorf("%s %s batch %d: paged differs from resident by %g at %d", typ, set, batch, d, at)
				}
				rows, _ := runLogits(t, path, OpenOptions{NoRepack: true}, Options{Batch: batch, Threads: 2}, toks, batch == 1)
				if d, _ := maxDiff(rows, res); d > 0.25 {
					t.Errorf("%s %s batch %d: row kernels are %g off the group kernels", typ, set, batch, d)
				}
			}
		}
	}
}

// pagedPackedLogits is runLogits of a paged model (one token at a time
// for o.Batch 1) that checks after every evaluation that each slot read
// is packed as want says.
func pagedPackedLogits(t *testing.T, path string, o Options, toks []int32, want bool) ([]float32, *PagerStats) {
	t.Helper()
	m, err := OpenWith(path, OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	o.Ctx = 256
	s, err := NewState(m, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []float32
	keep := func(_ int, l []float32) { out = append(out, l...) }
	for i := 0; i < len(toks); i += o.Batch {
		if err := s.Eval(toks[i:min(i+o.Batch, len(toks))], 0, keep); err != nil {
			t.Fatal(err)
		}
		for l, pl := range s.pg.layers {
			for x := range pl.mat {
				for part := range pl.mat[x] {
					if read := s.pg.loader.Gen(pl.buf[x][part]) != 0; read && (pl.mat[x][part].PackedData() != nil) != want {
						t.Fatalf("layer %d slot %d matrix %d: packed %v after its read", l, x, part, !want)
					}
				}
			}
		}
	}
	return out, s.PagerStats()
}
