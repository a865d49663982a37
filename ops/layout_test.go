package ops_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// planErr returns the error of planning or executing opts over data.
func planErr(t *testing.T, data []byte, opts ops.Options) error {
	t.Helper()
	p, _, err := ops.Plan(input(t, "in", data), opts)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	_, err = p.Execute(context.Background(), &out, plan.Options{})
	return err
}

// q2kExperts quantizes a generated F32 MoE model with its experts in Q2_K
// (the rest Q8_0, where it fits) by the project's quantizer, experts last.
func q2kExperts(t *testing.T, m fixture.Model) []byte {
	t.Helper()
	q := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0,
		TensorTypes: []quant.TensorTypeRule{{Regex: regexp.MustCompile(`_exps`), Type: gguf.TypeQ2_K}}}}
	out, _ := run(t, input(t, m.Name, m.Build()), ops.Options{Quant: q, ExpertsLast: true})
	return out
}

// TestQ2LUTBuild: on experts-last MoE files of several shapes, q2lut
// renames and repacks every Q2_K expert tensor at the same size, and
// --experts-layout none gives back the original file byte for byte.
func TestQ2LUTBuild(t *testing.T) {
	for _, m := range []fixture.Model{
		{Name: "moe-256", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 5},
		{Name: "moe-512", Layers: 1, Embd: 512, FF: 256, Heads: 8, KVHeads: 2, Vocab: 96, Experts: 3, ExpertsUsed: 2, Seed: 6},
		// 264 rows per gate/up expert: 16 full groups and an 8-row Q2_K
		// tail; down (264 columns) cannot be Q2_K and is left alone.
		{Name: "moe-tail", Layers: 1, Embd: 256, FF: 264, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 2, ExpertsUsed: 1, Seed: 7},
	} {
		base := q2kExperts(t, m)
		packed, rep := run(t, input(t, "base", base), ops.Options{ExpertsLayout: "q2lut"})
		if len(packed) <= len(base) {
			t.Errorf("%s: packed %d bytes, base %d (names and arrays grow the header only)", m.Name, len(packed), len(base))
		}
		pr, err := gguf.NewReader(bytes.NewReader(packed), int64(len(packed)))
		if err != nil {
			t.Fatal(err)
		}
		es, err := layout.Entries(pr.Metadata)
		if err != nil || len(es) == 0 || len(es) != len(rep.Layouts.Packed) {
			t.Fatalf("%s: entries %v %v", m.Name, es, err)
		}
		if info := experts.Describe(pr.File); info == nil || !info.Last || info.ExpertTensors != 3*m.Layers {
			t.Errorf("%s: packed file's experts: %+v", m.Name, info)
		}
		for _, e := range es {
			st, ok := pr.Tensor(e.Name)
			if !ok {
				t.Fatalf("%s: no %s", m.Name, e.Name)
			}
			if _, ok := pr.Tensor(e.Original()); ok {
				t.Errorf("%s: %s is still there under its original name", m.Name, e.Original())
			}
			orig, ti := tensorBytes(t, base, e.Original())
			got, _ := tensorBytes(t, packed, e.Name)
			want := make([]byte, len(orig))
			if err := layout.PackQ2LUT(want, orig, int64(ti.Dims[0]), int64(ti.Dims[1])); err != nil {
				t.Fatal(err)
			}
			if st.Type != gguf.TypeQ2_K || st.Size() != ti.Size() || !bytes.Equal(got, want) {
				t.Errorf("%s: %s: type %s, %d bytes (was %d), bytes as PackQ2LUT makes them: %v", m.Name, e.Name, st.Type, st.Size(), ti.Size(), bytes.Equal(got, want))
			}
		}
		if m.FF%256 != 0 && len(rep.Layouts.Kept) != m.Layers {
			t.Errorf("%s: kept %v", m.Name, rep.Layouts.Kept)
		}
		back, rep2 := run(t, input(t, "packed", packed), ops.Options{ExpertsLayout: "none"})
		if !bytes.Equal(back, base) {
			t.Errorf("%s: q2lut then none is not the original file", m.Name)
		}
		if len(rep2.Layouts.Restored) != len(es) {
			t.Errorf("%s: restored %d of %d", m.Name, len(rep2.Layouts.Restored), len(es))
		}
		// From a stream the same bytes come out.
		if s, _ := run(t, streamInput(t, "base", base), ops.Options{ExpertsLayout: "q2lut"}); !bytes.Equal(s, packed) {
			t.Errorf("%s: stream input differs", m.Name)
		}
	}
}

// TestQ2LUTRefusals: q2lut needs experts last and Q2_K experts; a packed
// file is not quantized or head-pruned as if its tensors were plain.
func TestQ2LUTRefusals(t *testing.T) {
	m := fixture.Model{Name: "moe", Layers: 1, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 2, ExpertsUsed: 1, Seed: 8}
	q := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0,
		TensorTypes: []quant.TensorTypeRule{{Regex: regexp.MustCompile(`_exps`), Type: gguf.TypeQ2_K}}}}
	interleaved, _ := run(t, input(t, "m", m.Build()), ops.Options{Quant: q})
	for _, c := range []struct {
		data []byte
		opts ops.Options
		want string
	}{
		{interleaved, ops.Options{ExpertsLayout: "q2lut"}, "needs the experts last"},
		{m.Build(), ops.Options{ExpertsLayout: "q2lut", ExpertsLast: true}, "no expert tensor is Q2_K"},
		{fixture.Dense().Build(), ops.Options{ExpertsLayout: "q2lut"}, "no expert tensors"},
		{interleaved, ops.Options{ExpertsLayout: "q2lut3"}, "want q2lut or none"},
	} {
		if err := planErr(t, c.data, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.opts, err, c.want)
		}
	}
	// Experts last and q2lut in one build equal the two steps.
	one, _ := run(t, input(t, "m", interleaved), ops.Options{ExpertsLast: true, ExpertsLayout: "q2lut"})
	last, _ := run(t, input(t, "m", interleaved), ops.Options{ExpertsLast: true})
	two, _ := run(t, input(t, "m", last), ops.Options{ExpertsLayout: "q2lut"})
	if !bytes.Equal(one, two) {
		t.Error("one-pass experts-last + q2lut differs from two passes")
	}
	if err := planErr(t, one, ops.Options{Quant: q}); err == nil || !strings.Contains(err.Error(), "restore them first") {
		t.Errorf("quantizing a packed file: %v", err)
	}
}

// ternaryModel is a generated dense model quantized to typ by the
// project's quantizer (--pure: every matrix typ).
func ternaryModel(t *testing.T, typ gguf.Type) []byte {
	t.Helper()
	m := fixture.Model{Name: "tern", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 9}
	q := &ops.Quantize{Rules: &quant.Rules{Default: typ, Pure: true}}
	out, _ := run(t, input(t, "tern", m.Build()), ops.Options{Quant: q})
	return out
}

// TestTernaryBuild: every ternary layout of Q2_0, TQ1_0 and TQ2_0 models
// restores to the original file byte for byte where it is lossless; the
// lossy one needs --lossy and keeps TQ1_0/TQ2_0 exact.
func TestTernaryBuild(t *testing.T) {
	for _, typ := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		base := ternaryModel(t, typ)
		for _, k := range []layout.Kind{layout.Ter3, layout.Ter2, layout.Ter2S128} {
			opts := ops.Options{TernaryLayout: string(k)}
			if !k.Lossless() {
				if err := planErr(t, base, opts); err == nil || !strings.Contains(err.Error(), "--lossy") {
					t.Errorf("%s %s without --lossy: %v", typ, k, err)
				}
				opts.LossyLayout = true
			}
			packed, rep := run(t, input(t, "base", base), opts)
			if len(rep.Layouts.Packed) == 0 {
				t.Fatalf("%s %s: nothing packed", typ, k)
			}
			r, err := gguf.NewReader(bytes.NewReader(packed), int64(len(packed)))
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range r.Tensors {
				if ti.Type == typ {
					t.Errorf("%s %s: %s left in %s", typ, k, ti.Name, typ)
				}
			}
			back, _ := run(t, input(t, "packed", packed), ops.Options{TernaryLayout: "none"})
			if same := bytes.Equal(back, base); same != (k.Lossless() || typ != gguf.TypeQ2_0) {
				t.Errorf("%s %s: restored file identical: %v", typ, k, same)
			}
		}
	}
}

// TestTernaryFourthCode: a Q2_0 tensor with a +2 weight is refused with
// an error naming the tensor and block.
func TestTernaryFourthCode(t *testing.T) {
	base := ternaryModel(t, gguf.TypeQ2_0)
	r, err := gguf.NewReader(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := r.Tensor("blk.1.ffn_up.weight")
	bad := append([]byte(nil), base...)
	// Block 37 of the tensor: its first code byte, weight 0 set to code 3.
	bad[r.DataOffset+int64(ti.Offset)+37*18+2] |= 3
	err = planErr(t, bad, ops.Options{TernaryLayout: "ter3"})
	if err == nil || !strings.Contains(err.Error(), `tensor "blk.1.ffn_up.weight" block 37 (row 9)`) || !strings.Contains(err.Error(), "+2") {
		t.Fatalf("got %v", err)
	}
}

// layoutFixtures are the files of testdata/llamacpp-layouts.txt: each
// original, as made by the project's quantizer, and its repacked form.
func layoutFixtures(t *testing.T) []struct {
	name string
	data []byte
} {
	moe := fixture.Model{Name: "layout-moe", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 21}
	el := q2kExperts(t, moe)
	lut, _ := run(t, input(t, "el", el), ops.Options{ExpertsLayout: "q2lut"})
	q2 := ternaryModel(t, gguf.TypeQ2_0)
	ter3, _ := run(t, input(t, "q2", q2), ops.Options{TernaryLayout: "ter3"})
	// Only the head is Q2_0: llama.cpp would fall back to token_embd for a
	// missing output.weight, so its tensor count check must catch it.
	dense := fixture.Model{Name: "layout-head", Layers: 1, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 22}
	q2t := gguf.TypeQ2_0
	hq := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0, OutputType: &q2t}}
	head, _ := run(t, input(t, "head", dense.Build()), ops.Options{Quant: hq})
	headTer, _ := run(t, input(t, "head", head), ops.Options{TernaryLayout: "ter2"})
	return []struct {
		name string
		data []byte
	}{{"moe-q2k-el.gguf", el}, {"moe-q2lut.gguf", lut}, {"dense-q2_0.gguf", q2}, {"dense-q2_0-ter3.gguf", ter3},
		{"head-q2_0.gguf", head}, {"head-q2_0-ter2.gguf", headTer}}
}

// TestWriteLayoutFixtures writes the layout fixtures to $GGUF_LAYOUT_FIXTURES
// for testdata/llamacpp-layouts.sh, which loads them with stock llama.cpp.
func TestWriteLayoutFixtures(t *testing.T) {
	dir := os.Getenv("GGUF_LAYOUT_FIXTURES")
	if dir == "" {
		t.Skip("set GGUF_LAYOUT_FIXTURES to a directory to write the layout fixtures there")
	}
	for _, f := range layoutFixtures(t) {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLlamaCppRefusesLayouts checks testdata/llamacpp-layouts.txt, what
// stock llama.cpp did with the layout fixtures (llamacpp-layouts.sh): the
// files are the ones this code makes (same sha256), every original loaded,
// and every repacked file was refused for the mechanism the layouts rely
// on: a tensor looked up by its original name that our file only has
// renamed, or a tensor count that our renamed tensors break.
func TestLlamaCppRefusesLayouts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "llamacpp-layouts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fixtures := map[string][]byte{}
	for _, f := range layoutFixtures(t) {
		fixtures[f.name] = f.data
	}
	missing := regexp.MustCompile(`check_tensor_dims: tensor '([^']+)' not found$`)
	count := regexp.MustCompile(`wrong number of tensors; expected (\d+), got (\d+)$`)
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		sum, result, _ := strings.Cut(rest, " ")
		data, ok := fixtures[name]
		if !ok {
			t.Fatalf("unknown fixture %s", name)
		}
		seen++
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
			t.Errorf("%s: sha256 %s, llama.cpp ran %s (rerun testdata/llamacpp-layouts.sh)", name, got, sum)
			continue
		}
		r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		es, err := layout.Entries(r.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			if result != "loaded" {
				t.Errorf("%s: an original file did not load: %s", name, result)
			}
			continue
		}
		if m := missing.FindStringSubmatch(result); m != nil {
			_, has := r.Tensor(m[1])
			renamed := slices.ContainsFunc(es, func(e layout.Entry) bool { return e.Original() == m[1] })
			if has || !renamed {
				t.Errorf("%s: llama.cpp missed %s, which is not one of our renamed tensors", name, m[1])
			}
		} else if m := count.FindStringSubmatch(result); m != nil {
			want, _ := strconv.Atoi(m[1])
			got, _ := strconv.Atoi(m[2])
			if want != len(r.Tensors) || want-got > len(es) || got >= want {
				t.Errorf("%s: tensor count %s/%s, file has %d tensors, %d repacked", name, m[2], m[1], len(r.Tensors), len(es))
			}
		} else {
			t.Errorf("%s: llama.cpp did not refuse it by name or count: %s", name, result)
		}
	}
	if seen != len(fixtures) {
		t.Errorf("%d of %d fixtures recorded", seen, len(fixtures))
	}
}
