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
