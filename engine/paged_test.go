package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/moegen"
	"github.com/ggufkit/gguf/ops"
)

// moeModel is a generated MoE of family arch (internal/moegen: a skewed
// router, experts-last unless mixed), 256 tokens, embd a multiple of 256
// for the K-quants.
func moeModel(arch string, embd, ff, layers, experts, used int, typ, expType gguf.Type) moegen.Spec {
	m := fixture.Model{Arch: arch, Name: fmt.Sprintf("%s-x%d-k%d-%s-%s", arch, experts, used, typ, expType),
		Layers: layers, Embd: embd, FF: ff, Heads: 4, KVHeads: 2, Vocab: 256, Experts: experts, ExpertsUsed: used,
		Type: typ, HeadType: typ, Seed: uint64(experts*131 + used)}
	if arch == "bailingmoe2" {
		m.ExpertFF, m.SharedExperts, m.DenseLead, m.Sigmoid, m.WeightsNorm, m.WeightsScale = ff, 1, 1, true, true, 2.5
		m.Groups, m.GroupsUsed, m.NextN = 4, 2, 1
		m.Layers++
	}
	if arch == "qwen3moe" {
		m.ExpertFF = ff
	}
	if arch == "bailingmoe3" { // KDA and MLA layers, as bench/crosscheck's bailingmoe3
		m.ExpertFF, m.SharedExperts, m.DenseLead, m.Sigmoid, m.WeightsNorm, m.WeightsScale = ff, 1, 1, true, true, 2.5
		m.Layers, m.RopeDims, m.MLALayers, m.KVLoraRank, m.QLoraRank = 4, 16, []int{1, 3}, 64, 64
		m.NopeDim, m.VHeadDim, m.KDAHeadDim, m.ConvKernel, m.GateLowerBound = 16, 16, 16, 4, -5
	}
	return moegen.Spec{Model: m, ExpertType: expType, Skew: 3, ExpertsLast: true}
}

// writeMoE writes s to dir and returns its path.
func writeMoE(t testing.TB, dir string, s moegen.Spec) string {
	t.Helper()
	path := filepath.Join(dir, s.Name+fmt.Sprintf("-last%v.gguf", s.ExpertsLast))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := s.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
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
	specs := []moegen.Spec{
		moeModel("llama", 64, 64, 3, 64, 4, gguf.TypeF32, gguf.TypeF32),
		moeModel("llama", 256, 256, 2, 8, 2, gguf.TypeQ8_0, gguf.TypeQ4_K),
		moeModel("llama", 256, 256, 2, 16, 4, gguf.TypeQ8_0, gguf.TypeQ2_K),
		moeModel("qwen3moe", 64, 32, 2, 16, 4, gguf.TypeF32, gguf.TypeF32),
		moeModel("olmoe", 64, 32, 2, 16, 2, gguf.TypeF32, gguf.TypeF32),
		moeModel("bailingmoe2", 64, 32, 2, 16, 4, gguf.TypeF32, gguf.TypeF32),
		moeModel("bailingmoe3", 64, 32, 4, 16, 4, gguf.TypeF32, gguf.TypeF32),
	}
	if testing.Short() {
		specs = specs[:2]
	}
	toks := moeTokens(40)
	direct := true
	type file struct {
		g    moegen.Spec
		path string
	}
	var files []file
	for _, g := range specs {
		path := writeMoE(t, dir, g)
		files = append(files, file{g, path})
		if g.ExpertType == gguf.TypeQ2_K {
			// the same experts repacked for the table-lookup kernel
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file{g, writeModel(t, dir, "q2lut-"+filepath.Base(path), runOps(t, b, ops.Options{ExpertsLayout: "q2lut"}))})
		}
	}
	for _, f := range files {
		g, path := f.g, f.path
		for _, oneByOne := range []bool{true, false} {
			want, _ := runLogits(t, path, OpenOptions{}, Options{Batch: 8}, toks, oneByOne)
			for _, pool := range []int{g.ExpertsUsed, g.Experts / 2, g.Experts} {
				for _, pol := range []string{"lru", "lfu:0.9"} {
					for _, pre := range []int{0, g.ExpertsUsed} {
						if !oneByOne && pre > 0 {
							continue // prefetch runs when decoding one token at a time
						}
						policy, _ := pager.ParsePolicy(pol)
						po := &PagerOptions{Pool: pool, Policy: policy, Prefetch: pre, Readers: 3, Direct: direct}
						direct = !direct
						got, st := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po, Batch: 8}, toks, oneByOne)
						name := fmt.Sprintf("%s one=%v pool=%d %s prefetch=%d", filepath.Base(path), oneByOne, pool, pol, pre)
						if !sameBits(got, want) {
							t.Fatalf("%s: logits differ from the unpaged run", name)
						}
						if st.Misses == 0 || st.BytesRead == 0 {
							t.Fatalf("%s: nothing was paged in (%+v)", name, st)
						}
						if pre == 0 && st.BytesRead != st.Misses*expertBytes(t, path) {
							t.Fatalf("%s: read %d bytes for %d misses of %d bytes", name, st.BytesRead, st.Misses, expertBytes(t, path))
						}
						if pool == g.Experts && st.Misses > int64(g.Experts*g.Layers) {
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
	L := &m.Layers[len(m.Layers)-1]
	return int64(L.GateExps[0].Rows*L.GateExps[0].RowBytes + L.UpExps[0].Rows*L.UpExps[0].RowBytes + L.DownExps[0].Rows*L.DownExps[0].RowBytes)
}

// TestPagerBiasReproducible: a cache-aware run (bias > 0, prefetch on)
// gives the same bits twice, and misses less than the unbiased run.
func TestPagerBiasReproducible(t *testing.T) {
	g := moeModel("llama", 64, 64, 3, 32, 4, gguf.TypeF32, gguf.TypeF32)
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
	g := moeModel("llama", 64, 64, 3, 32, 4, gguf.TypeF32, gguf.TypeF32)
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
			tw := pager.NewTraceWriter(&buf, g.Experts)
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
	g := moeModel("llama", 64, 64, 2, 8, 3, gguf.TypeF32, gguf.TypeF32)
	last := writeMoE(t, dir, g)
	g.ExpertsLast = false
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
	// The --moe-budget the message asks for is one word that reads back as
	// enough.
	_, err = NewState(m, Options{Ctx: 16, Pager: &PagerOptions{Budget: 1000}})
	hint := regexp.MustCompile(`--moe-budget (\S+)$`).FindStringSubmatch(err.Error())
	if hint == nil {
		t.Fatalf("no one-word --moe-budget in %q", err)
	}
	budget, perr := humanize.ParseBytes(hint[1])
	if perr != nil {
		t.Fatalf("--moe-budget %s: %v", hint[1], perr)
	}
	s, err := NewState(m, Options{Ctx: 16, Pager: &PagerOptions{Budget: int64(budget), Readers: 1}})
	if err != nil {
		t.Fatalf("--moe-budget %s, as asked: %v", hint[1], err)
	}
	s.Close()
	for n, want := range map[int64]string{294912: "288KiB", 774500: "757KiB", 5000: "5000", 3<<30 + 1: "3073MiB", 20 << 30: "20GiB"} {
		if got := budgetArg(n); got != want {
			t.Errorf("budgetArg(%d) = %s, want %s", n, got, want)
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

// TestPagerResidency: the non-expert part read into memory (NoMmap) or
// locked (Mlock) computes the same bits as mapped, and only the part
// before the experts is resident (ResidentBytes), the experts' bytes
// counted in WeightBytes.
func TestPagerResidency(t *testing.T) {
	g := moeModel("llama", 64, 64, 2, 16, 2, gguf.TypeF32, gguf.TypeF32)
	path := writeMoE(t, t.TempDir(), g)
	toks := moeTokens(16)
	want, _ := runLogits(t, path, OpenOptions{}, Options{}, toks, true)
	po := &PagerOptions{Pool: 4}
	for _, oo := range []OpenOptions{{PageExperts: true, NoMmap: true}, {PageExperts: true, Mlock: true}} {
		m, err := OpenWith(path, oo)
		if err != nil {
			if oo.Mlock && strings.Contains(err.Error(), "ulimit -l") {
				t.Logf("mlock refused here: %v", err)
				continue
			}
			t.Fatal(err)
		}
		expertBytes := int64(0)
		for _, src := range m.paged {
			expertBytes += src.size
		}
		if m.ResidentBytes+expertBytes != m.WeightBytes || expertBytes == 0 {
			t.Fatalf("%+v: resident %d + experts %d != weights %d", oo, m.ResidentBytes, expertBytes, m.WeightBytes)
		}
		m.Close()
		got, _ := runLogits(t, path, oo, Options{Pager: po}, toks, true)
		if !sameBits(got, want) {
			t.Fatalf("%+v: logits differ from the mapped unpaged run", oo)
		}
	}
}

// TestPagerAllocatesNothing: decoding a token through the pager (misses,
// reads, evictions) allocates nothing, as the unpaged runtime does: the
// slots, queues and buffers are all made by NewState.
func TestPagerAllocatesNothing(t *testing.T) {
	g := moeModel("llama", 64, 64, 2, 16, 2, gguf.TypeF32, gguf.TypeF32)
	path := writeMoE(t, t.TempDir(), g)
	m, err := OpenWith(path, OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := NewState(m, Options{Ctx: 256, Pager: &PagerOptions{Pool: 4, Prefetch: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	toks := moeTokens(60)
	i := 0
	step := func() {
		if err := s.Eval(toks[i:i+1], 0, nil); err != nil {
			t.Fatal(err)
		}
		i++
	}
	step() // the queues' first growth
	if a := testing.AllocsPerRun(50, step); a != 0 {
		t.Fatalf("%.1f allocations per paged token", a)
	}
	if st := s.PagerStats(); st.Misses == 0 {
		t.Fatal("no misses: the test paged nothing")
	}
}

// resizedPagerRun returns a generated MoE, opened paged, a State of it
// with pools of pool slots, tokens to run and the unpaged run's logits of
// them: TestPagerShrink and TestPagerGrow resize the pools as they run.
func resizedPagerRun(t *testing.T, pool int) (moegen.Spec, *Model, *State, []int32, []float32) {
	t.Helper()
	g := moeModel("llama", 256, 256, 2, 16, 4, gguf.TypeQ8_0, gguf.TypeQ4_K)
	path := writeMoE(t, t.TempDir(), g)
	toks := moeTokens(32)
	want, _ := runLogits(t, path, OpenOptions{}, Options{}, toks, true)
	m, err := OpenWith(path, OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s, err := NewState(m, Options{Ctx: 256, Pager: &PagerOptions{Pool: pool, Prefetch: 4, Readers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return g, m, s, toks, want
}

// TestPagerShrink: pools cut while decoding (as the memory guard does)
// hold fewer bytes, never fewer slots than a token's working set, and the
// run goes on computing the unpaged run's bits, with prefetches queued
// into the slots it dropped.
func TestPagerShrink(t *testing.T) {
	g, m, s, toks, want := resizedPagerRun(t, 12)
	var got []float32
	keep := func(_ int, l []float32) { got = append(got, l...) }
	before := s.PagerStats()
	if before.PoolBytes != 12*m.ExpertSlotBytes() {
		t.Fatalf("pools of %d bytes, ExpertSlotBytes %d", before.PoolBytes, m.ExpertSlotBytes())
	}
	for i, tok := range toks {
		switch i {
		case 10:
			if n := s.ShrinkPager(7); n != 7 {
				t.Fatalf("ShrinkPager(7) = %d", n)
			}
		case 20:
			if n := s.ShrinkPager(1); n != g.ExpertsUsed {
				t.Fatalf("ShrinkPager(1) = %d, not the working set %d", n, g.ExpertsUsed)
			}
		}
		if err := s.Eval([]int32{tok}, 0, keep); err != nil {
			t.Fatal(err)
		}
	}
	if !sameBits(got, want) {
		t.Fatal("logits differ from the unpaged run after the pools shrank")
	}
	after := s.PagerStats()
	if after.Slots != g.ExpertsUsed || after.PoolBytes != int64(g.ExpertsUsed)*m.ExpertSlotBytes() {
		t.Fatalf("after shrinking: %d slots, %d bytes", after.Slots, after.PoolBytes)
	}
}

// TestPagerGrow: pools shrunk to a token's working set and grown back
// (as the memory guard does when memory returns) hold the bytes of their
// slots, at most the layer's experts, and the run goes on computing the
// unpaged run's bits, the new slots filling as experts miss.
func TestPagerGrow(t *testing.T) {
	g, m, s, toks, want := resizedPagerRun(t, 8)
	var got []float32
	keep := func(_ int, l []float32) { got = append(got, l...) }
	for i, tok := range toks {
		switch i {
		case 8:
			s.ShrinkPager(1)
		case 16:
			if n := s.GrowPager(12); n != 12 {
				t.Fatalf("GrowPager(12) = %d", n)
			}
		case 24:
			if n := s.GrowPager(100); n != g.Experts {
				t.Fatalf("GrowPager(100) = %d, not the %d experts", n, g.Experts)
			}
		}
		if err := s.Eval([]int32{tok}, 0, keep); err != nil {
			t.Fatal(err)
		}
	}
	if !sameBits(got, want) {
		t.Fatal("logits differ from the unpaged run after the pools shrank and grew")
	}
	st := s.PagerStats()
	if st.Slots != g.Experts || st.PoolBytes != int64(g.Experts)*m.ExpertSlotBytes() || st.Misses == 0 {
		t.Fatalf("after growing: %d slots, %d bytes, %d misses", st.Slots, st.PoolBytes, st.Misses)
	}
}

// TestPagerStageExact: predicted experts read into staging slots
// (PagerOptions.Stage) leave the pools' placements, so the hits and
// misses, and the logits those of the unpaged run; the layers take some
// of their misses from the staging slots instead of reading them again.
func TestPagerStageExact(t *testing.T) {
	specs := []moegen.Spec{
		moeModel("llama", 256, 256, 2, 16, 4, gguf.TypeQ8_0, gguf.TypeQ4_K),
		moeModel("qwen3moe", 64, 32, 3, 16, 4, gguf.TypeF32, gguf.TypeF32),
	}
	toks := moeTokens(40)
	for _, g := range specs {
		path := writeMoE(t, t.TempDir(), g)
		want, _ := runLogits(t, path, OpenOptions{}, Options{}, toks, true)
		for _, pool := range []int{g.ExpertsUsed, g.Experts / 2} {
			for _, direct := range []bool{false, true} {
				name := fmt.Sprintf("%s pool=%d direct=%v", g.Arch, pool, direct)
				po := func(stage int) *PagerOptions {
					return &PagerOptions{Pool: pool, Stage: stage, Readers: 3, Direct: direct}
				}
				_, plain := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po(0)}, toks, true)
				got, st := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Pager: po(g.ExpertsUsed)}, toks, true)
				if !sameBits(got, want) {
					t.Fatalf("%s: logits differ from the unpaged run", name)
				}
				if st.Hits != plain.Hits || st.Misses != plain.Misses {
					t.Fatalf("%s: staging changed the placements: %d hits %d misses, without %d %d", name, st.Hits, st.Misses, plain.Hits, plain.Misses)
				}
				if st.Staged == 0 || st.StagedUsed == 0 || st.StagedUsed > st.Misses || st.StagedUsed > st.Staged {
					t.Fatalf("%s: %d staged, %d of them used, %d misses", name, st.Staged, st.StagedUsed, st.Misses)
				}
				t.Logf("%s: %d misses, %d staged, %d used", name, st.Misses, st.Staged, st.StagedUsed)
			}
		}
	}
	m, err := OpenWith(writeMoE(t, t.TempDir(), specs[0]), OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s, err := NewState(m, Options{Ctx: 16, Pager: &PagerOptions{Pool: 4, Prefetch: 2, Stage: 2}}); err == nil {
		s.Close()
		t.Fatal("prefetch and stage together were accepted")
	}
}
