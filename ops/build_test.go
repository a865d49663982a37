package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
)

// input opens data as a random-access plan input.
func input(t testing.TB, name string, data []byte) *plan.Input {
	t.Helper()
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &plan.Input{Name: name, File: r.File, ReaderAt: bytes.NewReader(data)}
}

// streamInput opens data as a forward-only stream input.
func streamInput(t testing.TB, name string, data []byte) *plan.Input {
	t.Helper()
	sr, err := gguf.NewStreamReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	in := &plan.Input{Name: name, File: sr.File}
	in.Stream, in.StreamPos = sr.Raw()
	return in
}

// run plans opts over in and executes the plan into memory.
func run(t testing.TB, in *plan.Input, opts ops.Options) ([]byte, *ops.Report) {
	t.Helper()
	p, rep, err := ops.Plan(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), rep
}

func tensorBytes(t testing.TB, data []byte, name string) ([]byte, *gguf.TensorInfo) {
	t.Helper()
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	i := r.TensorIndex(name)
	if i < 0 {
		t.Fatalf("no tensor %s", name)
	}
	b, _ := io.ReadAll(r.TensorData(i))
	return b, &r.Tensors[i]
}

// rankedIDs returns a deterministic ranked id list over a vocabulary.
func rankedIDs(vocab, n int, seed uint64) []int32 {
	rng := fixture.SplitMix64(seed)
	perm := make([]int32, vocab)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := vocab - 1; i > 0; i-- {
		j := int(rng.Next() % uint64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm[:n]
}

// checkHead verifies a pruned file: rows equal the source rows byte for
// byte, output_ids holds the ids ascending, a multiple of pad rows, the
// specials present, and head.* metadata recorded.
func checkHead(t *testing.T, orig, built []byte, srcTensor string, ranked []int32, rows, pad int) {
	t.Helper()
	src, srcInfo := tensorBytes(t, orig, srcTensor)
	head, headInfo := tensorBytes(t, built, headprune.OutputTensor)
	idb, idInfo := tensorBytes(t, built, headprune.IDsTensor)
	ids, err := headprune.DecodeIDs(idb)
	if err != nil {
		t.Fatal(err)
	}
	if idInfo.Type != gguf.TypeI32 || int(headInfo.Dims[1]) != len(ids) || headInfo.Type != srcInfo.Type {
		t.Fatalf("head %v %s, ids %v %s", headInfo.Dims, headInfo.Type, idInfo.Dims, idInfo.Type)
	}
	if len(ids)%pad != 0 {
		t.Errorf("%d rows, not a multiple of %d", len(ids), pad)
	}
	for _, id := range ranked[:rows] {
		if _, ok := slices.BinarySearch(ids, id); !ok {
			t.Errorf("ranked id %d missing", id)
		}
	}
	r, _ := gguf.NewReader(bytes.NewReader(orig), int64(len(orig)))
	for _, sp := range headprune.Specials(r.Metadata, headprune.VocabSize(r.File)) {
		if _, ok := slices.BinarySearch(ids, sp); !ok {
			t.Errorf("special id %d missing", sp)
		}
	}
	rb := int(srcInfo.RowBytes())
	for j, id := range ids {
		if !bytes.Equal(head[j*rb:(j+1)*rb], src[int(id)*rb:(int(id)+1)*rb]) {
			t.Fatalf("row %d (id %d) differs from %s row %d", j, id, srcTensor, id)
		}
	}
	bf, _ := gguf.NewReader(bytes.NewReader(built), int64(len(built)))
	if n, _ := bf.Metadata.Uint(headprune.KeyRows); int(n) != len(ids) || bf.Metadata.String(headprune.KeySource) != srcTensor {
		t.Errorf("head metadata: rows %d source %q", n, bf.Metadata.String(headprune.KeySource))
	}
	if emb, _ := tensorBytes(t, built, headprune.EmbdTensor); !bytes.Equal(emb, mustTensor(t, orig, headprune.EmbdTensor)) {
		t.Error("token_embd.weight changed")
	}
}

func mustTensor(t testing.TB, data []byte, name string) []byte {
	b, _ := tensorBytes(t, data, name)
	return b
}

func stories(t testing.TB) []byte {
	data, err := os.ReadFile(shared.Path(t, "models", "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tiedStories is stories260K without its output.weight copy: the model then
// ties its head to token_embd, as llama2.c's original does.
func tiedStories(t testing.TB) []byte {
	out, _ := run(t, input(t, "stories", stories(t)), ops.Options{Drops: []*regexp.Regexp{regexp.MustCompile(`^output\.weight$`)}})
	return out
}

func TestHeadPruneStories(t *testing.T) {
	ranked := rankedIDs(512, 200, 1)
	for _, tc := range []struct {
		name, src string
		data      []byte
	}{{"untied", headprune.OutputTensor, stories(t)}, {"tied", headprune.EmbdTensor, tiedStories(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rows := range []int{1, 60, 200} {
				out, rep := run(t, input(t, tc.name, tc.data), ops.Options{HeadIDs: ranked, Head: headprune.Options{Rows: rows, Pad: 8}})
				checkHead(t, tc.data, out, tc.src, ranked, rows, 8)
				if rep.Head.Ranked != rows || rep.HeadSource != tc.src {
					t.Errorf("report %+v %s", rep.Head, rep.HeadSource)
				}
				// Padding takes the next ranked ids first.
				if rows == 60 {
					ids, _ := headprune.DecodeIDs(mustTensor(t, out, headprune.IDsTensor))
					n := 0
					for _, id := range ranked[60:] {
						if _, ok := slices.BinarySearch(ids, id); ok {
							n++
						}
					}
					if n != rep.Head.Padding || rep.Head.Padding == 0 {
						t.Errorf("padding %d, of which %d from the ranked list", rep.Head.Padding, n)
					}
				}
			}
		})
	}
}

// TestHeadPruneQuantized: Q8_0 and Q4_K rows are copied raw.
func TestHeadPruneQuantized(t *testing.T) {
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		m := fixture.Dense()
		m.Embd, m.FF, m.Heads, m.KVHeads, m.Vocab = 256, 256, 4, 2, 300
		m.Type, m.HeadType = gguf.TypeQ8_0, typ
		for _, tied := range []bool{false, true} {
			m.Tied = tied
			data := m.Build()
			ranked := rankedIDs(300, 100, 3)
			out, _ := run(t, input(t, "q", data), ops.Options{HeadIDs: ranked, Head: headprune.Options{Pad: 8}})
			src := headprune.OutputTensor
			if tied {
				src = headprune.EmbdTensor
			}
			checkHead(t, data, out, src, ranked, 100, 8)
		}
	}
}

// TestRecutIdentical: re-cutting a built file gives the same bytes as
// building the original with the new list (the seeds' E29 check).
func TestRecutIdentical(t *testing.T) {
	first := rankedIDs(512, 300, 5)
	second := rankedIDs(512, 120, 9) // tied: any ids
	subset := append([]int32(nil), first[40:150]...)
	for _, tc := range []struct {
		name   string
		data   []byte
		second []int32
	}{{"tied", tiedStories(t), second}, {"untied", stories(t), subset}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []headprune.Options{{Pad: 8}, {Pad: 8, Rows: 77}, {Pad: 1, NoSpecials: true}} {
				built, _ := run(t, input(t, "orig", tc.data), ops.Options{HeadIDs: first, Head: headprune.Options{Pad: 8}})
				direct, _ := run(t, input(t, "orig", tc.data), ops.Options{HeadIDs: tc.second, Head: opts})
				recut, rep := run(t, input(t, "built", built), ops.Options{HeadIDs: tc.second, Head: opts})
				if !rep.Recut {
					t.Error("not reported as a re-cut")
				}
				if !bytes.Equal(recut, direct) {
					t.Fatalf("re-cut (%d bytes) differs from a direct build (%d bytes), options %+v", len(recut), len(direct), opts)
				}
			}
		})
	}
	// Untied: ids outside the built head are an error that lists them.
	built, _ := run(t, input(t, "orig", stories(t)), ops.Options{HeadIDs: first[:100], Head: headprune.Options{Pad: 8, NoSpecials: true}})
	_, _, err := ops.Plan(input(t, "built", built), ops.Options{HeadIDs: first[200:210], Head: headprune.Options{Pad: 1, NoSpecials: true}})
	if err == nil || !strings.Contains(err.Error(), "lacks 10 of the requested ids") {
		t.Fatalf("missing ids: %v", err)
	}
}

// TestExpertsLast: experts move after every other tensor, infos and data
// together, every tensor's bytes unchanged, offsets valid.
func TestExpertsLast(t *testing.T) {
	data := fixture.MoE().Build()
	for _, in := range []*plan.Input{input(t, "moe", data), streamInput(t, "moe", data)} {
		out, rep := run(t, in, ops.Options{ExpertsLast: true})
		if rep.ExpertTensors != 6 {
			t.Errorf("%d expert tensors", rep.ExpertTensors)
		}
		r, err := gguf.NewReader(bytes.NewReader(out), int64(len(out)))
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
		if len(r.Tensors) != len(orig.Tensors) {
			t.Fatal("tensor count changed")
		}
		seen := false
		for i, ti := range r.Tensors {
			if experts.IsExpert(ti.Name) {
				seen = true
			} else if seen {
				t.Errorf("non-expert %s after an expert", ti.Name)
			}
			j := orig.TensorIndex(ti.Name)
			a, _ := io.ReadAll(r.TensorData(i))
			b, _ := io.ReadAll(orig.TensorData(j))
			if !bytes.Equal(a, b) {
				t.Errorf("%s bytes changed", ti.Name)
			}
		}
		info := experts.Describe(r.File)
		if info == nil || !info.Last || len(info.Layers) != 2 {
			t.Fatalf("describe: %+v", info)
		}
		first := r.Tensors[r.TensorIndex("blk.0.ffn_gate_exps.weight")]
		if info.NonExpertEnd != r.DataOffset+int64(first.Offset) {
			t.Errorf("non-expert end %d", info.NonExpertEnd)
		}
		// One expert: gate [64,64] + up [64,64] + down [64,64] in F32.
		if info.Layers[0].BytesPerExpert != 3*64*64*4 || info.Layers[0].Experts != 4 {
			t.Errorf("layer 0: %+v", info.Layers[0])
		}
		if d := experts.Describe(orig.File); d.Last {
			t.Error("the original is not experts-last")
		}
	}
}

// TestStreamInputSpools: from a stream, a plan that needs data out of order
// (a tied head cut from token_embd, experts moved last) spools what it
// needs later and gives the same bytes as random access.
func TestStreamInputSpools(t *testing.T) {
	m := fixture.MoE()
	m.Tied = true
	data := m.Build()
	opts := ops.Options{HeadIDs: rankedIDs(m.Vocab, 30, 2), Head: headprune.Options{Pad: 8}, ExpertsLast: true,
		Drops: []*regexp.Regexp{regexp.MustCompile(`^blk\.0\.attn_norm`)}}
	want, _ := run(t, input(t, "moe", data), opts)
	p, _, err := ops.Plan(streamInput(t, "moe", data), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := p.Execute(context.Background(), &out, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatal("stream build differs from random-access build")
	}
	if res.Spooled == 0 {
		t.Error("nothing was spooled, though the head rows come from an earlier tensor")
	}
}

// TestEdits: drop, rename, add (with and without --replace), set, del,
// align.
func TestEdits(t *testing.T) {
	base := stories(t)
	moe := fixture.MoE().Build()
	set, err := ops.ParseSet("general.name=str:edited")
	if err != nil {
		t.Fatal(err)
	}
	arr, err := ops.ParseSet("x.list=arr[i32]:1,-2,3")
	if err != nil {
		t.Fatal(err)
	}
	out, rep := run(t, input(t, "base", base), ops.Options{
		Drops:   []*regexp.Regexp{regexp.MustCompile(`^blk\.4\.`)},
		Renames: []ops.Rename{{Old: "output_norm.weight", New: "output_norm2.weight"}},
		Adds:    []ops.Add{{Input: input(t, "moe", moe), Pattern: regexp.MustCompile(`^blk\.1\.ffn_.*_exps`)}},
		Sets:    []gguf.KV{set, arr},
		Deletes: []string{"tokenizer.ggml.padding_token_id"},
		Align:   64,
	})
	r, err := gguf.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dropped) != 9 || len(rep.Added) != 3 || r.TensorIndex("blk.4.attn_q.weight") >= 0 || r.TensorIndex("output_norm2.weight") < 0 {
		t.Errorf("dropped %d added %d", len(rep.Dropped), len(rep.Added))
	}
	if r.Alignment != 64 || r.Metadata.String("general.name") != "edited" {
		t.Errorf("alignment %d name %q", r.Alignment, r.Metadata.String("general.name"))
	}
	if v, _ := r.Metadata.Get("x.list"); v.Format(-1) != "1 -2 3" || v.ElemType() != gguf.TypeInt32 {
		t.Errorf("array: %s %s", v.TypeString(), v.Format(-1))
	}
	if _, ok := r.Metadata.Get("tokenizer.ggml.padding_token_id"); ok {
		t.Error("deleted key present")
	}
	if !bytes.Equal(mustTensor(t, out, "blk.1.ffn_up_exps.weight"), mustTensor(t, moe, "blk.1.ffn_up_exps.weight")) {
		t.Error("added tensor bytes differ")
	}
	// Name clashes need --replace; then the tensor is replaced in place.
	add := []ops.Add{{Input: input(t, "moe", moe), Pattern: regexp.MustCompile(`^output_norm\.weight$`)}}
	if _, _, err := ops.Plan(input(t, "base", base), ops.Options{Adds: add}); err == nil || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("clash: %v", err)
	}
	out, rep = run(t, input(t, "base", base), ops.Options{Adds: add, Replace: true})
	if len(rep.Replaced) != 1 || !bytes.Equal(mustTensor(t, out, "output_norm.weight"), mustTensor(t, moe, "output_norm.weight")) {
		t.Error("replace did not take the added tensor")
	}
	for _, bad := range []ops.Options{
		{Drops: []*regexp.Regexp{regexp.MustCompile("nothing-matches")}},
		{Renames: []ops.Rename{{Old: "nope", New: "x"}}},
		{Deletes: []string{"no.such.key"}},
		{ExpertsLast: true},
	} {
		if _, _, err := ops.Plan(input(t, "base", base), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	for _, spec := range []string{"k", "k=u32", "k=u99:1", "k=u8:300", "k=arr[zz]:1"} {
		if _, err := ops.ParseSet(spec); err == nil {
			t.Errorf("ParseSet(%q) accepted", spec)
		}
	}
}

// TestParseSetFileCaps: @FILE values endless or too large are refused with
// a message naming the cap, not read until memory runs out.
func TestParseSetFileCaps(t *testing.T) {
	many := filepath.Join(t.TempDir(), "many.txt")
	if err := os.WriteFile(many, bytes.Repeat([]byte("1\n"), ops.MaxSetFileLines+1), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"x=arr[i32]:@" + many: "lines"}
	if _, err := os.Stat("/dev/urandom"); err == nil {
		cases["x=arr[str]:@/dev/urandom"] = "MiB"
		cases["x=str:@/dev/zero"] = "MiB"
	}
	for spec, want := range cases {
		if _, err := ops.ParseSet(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSet(%q): %v, want an error about the cap (%s)", spec, err, want)
		}
	}
}

func TestReadIDs(t *testing.T) {
	ids, err := headprune.ReadIDs(strings.NewReader("# ranked\n5\n\n 3 # comment\n7\n"), 10)
	if err != nil || !slices.Equal(ids, []int32{5, 3, 7}) {
		t.Fatalf("%v %v", ids, err)
	}
	for in, want := range map[string]string{"1\n2\n1\n": "line 3: the id repeats line 1", "1\n10\n": "line 2: the id is outside",
		"x\n": "line 1", "-1\n": "outside"} {
		if _, err := headprune.ReadIDs(strings.NewReader(in), 10); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestSpecials(t *testing.T) {
	r, _ := gguf.NewReader(bytes.NewReader(stories(t)), int64(len(stories(t))))
	// stories260K: <unk> (unknown), <s>, </s> (control); its 4294967295
	// separator/padding ids are not tokens.
	if got := headprune.Specials(r.Metadata, 512); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Errorf("specials %v", got)
	}
	c, err := headprune.Choose([]int32{9, 8}, 512, []int32{0, 1, 2}, headprune.Options{Pad: 8})
	if err != nil {
		t.Fatal(err)
	}
	// 2 ranked + 3 specials + 3 smallest unused ids (3, 4, 5).
	if !slices.Equal(c.IDs, []int32{0, 1, 2, 3, 4, 5, 8, 9}) {
		t.Errorf("ids %v", c.IDs)
	}
	if _, err := headprune.Choose([]int32{1}, 4, nil, headprune.Options{Pad: 8}); err == nil {
		t.Error("padding beyond the vocabulary accepted")
	}
}

// TestIDsTensorLayout checks the output_ids encoding: little-endian I32.
func TestIDsTensorLayout(t *testing.T) {
	out, _ := run(t, input(t, "s", stories(t)), ops.Options{HeadIDs: []int32{300, 7}, Head: headprune.Options{Pad: 1, NoSpecials: true}})
	b := mustTensor(t, out, headprune.IDsTensor)
	if len(b) != 8 || binary.LittleEndian.Uint32(b) != 7 || binary.LittleEndian.Uint32(b[4:]) != 300 {
		t.Fatalf("% x", b)
	}
}
