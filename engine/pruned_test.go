package engine

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// writePruned writes a copy of the GGUF at src whose head keeps only the
// rows of ids (ascending): output.weight holds those rows and
// output_ids.weight (I32) their vocabulary ids, as the build issue's
// head pruning writes them; token_embd stays complete.
func writePruned(t testing.TB, src string, ids []int32) string {
	t.Helper()
	r := testfiles.Reader(t, src)
	var infos []gguf.TensorInfo
	var datas [][]byte
	for i, ti := range r.Tensors {
		b, err := io.ReadAll(r.TensorData(i))
		if err != nil {
			t.Fatal(err)
		}
		if ti.Name == "output.weight" {
			rb := int(ti.RowBytes())
			var rows []byte
			for _, id := range ids {
				rows = append(rows, b[int(id)*rb:(int(id)+1)*rb]...)
			}
			b = rows
			ti.Dims = []uint64{ti.Dims[0], uint64(len(ids))}
			idb := make([]byte, 4*len(ids))
			for j, id := range ids {
				binary.LittleEndian.PutUint32(idb[4*j:], uint32(id))
			}
			infos = append(infos, ti, gguf.TensorInfo{Name: "output_ids.weight", Dims: []uint64{uint64(len(ids))}, Type: gguf.TypeI32})
			datas = append(datas, b, idb)
			continue
		}
		infos = append(infos, ti)
		datas = append(datas, b)
	}
	out := filepath.Join(t.TempDir(), "pruned.gguf")
	writeGGUF(t, out, r.Metadata, infos, datas)
	return out
}

// writeGGUF writes a GGUF file from metadata, tensor infos and their bytes.
func writeGGUF(t testing.TB, path string, md *gguf.Metadata, infos []gguf.TensorInfo, datas [][]byte) {
	t.Helper()
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	gw, err := gguf.NewWriter(w, 3, md, infos)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range datas {
		if _, err := gw.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
}

// prunedIDs keeps every id but the multiples of 3 above 2 (so BOS/EOS and
// most of the story's tokens stay, and many of its targets are misses).
func prunedIDs() []int32 {
	var ids []int32
	for id := int32(0); id < 512; id++ {
		if id <= 2 || id%3 != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestPrunedHead checks a head-pruned stories260K: kept ids get exactly the
// full model's logits, all others -inf; sampling at temperature 1.5 never
// emits an id outside the head; perplexity counts the targets outside it as
// misses and scores the rest exactly as the full model does.
func TestPrunedHead(t *testing.T) {
	full := shared.Path(t, "models", "stories260K-f32.gguf")
	ids := prunedIDs()
	pm := openModel(t, writePruned(t, full, ids))
	if len(pm.OutputIDs) != len(ids) || pm.Output.Rows != len(ids) {
		t.Fatalf("pruned head has %d rows", pm.Output.Rows)
	}
	fm := openModel(t, full)
	kept := map[int32]bool{}
	for _, id := range ids {
		kept[id] = true
	}
	seq := []int32{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315}
	fs, ps := newState(t, fm, Options{Ctx: 512}), newState(t, pm, Options{Ctx: 512})
	want := sequenceLogits(t, fs, seq, len(seq))
	got := sequenceLogits(t, ps, seq, len(seq))
	for i := range got {
		id := int32(i % 512)
		if kept[id] && got[i] != want[i] {
			t.Fatalf("pos %d id %d: %g, full model %g", i/512, id, got[i], want[i])
		}
		if !kept[id] && !math.IsInf(float64(got[i]), -1) {
			t.Fatalf("pos %d id %d outside the head has logit %g", i/512, id, got[i])
		}
	}

	ps.Reset()
	sm := NewSampler(SamplerOptions{Temp: 1.5, TopK: 0, TopP: 1, Seed: 7}, 512)
	n := 0
	_, err := Generate(ps, sm, []int32{1}, 500, func(int32) bool { return false }, func(id int32) error {
		if !kept[id] {
			t.Fatalf("generated id %d outside the head", id)
		}
		n++
		return nil
	})
	if err != nil || n != 500 {
		t.Fatalf("generated %d tokens: %v", n, err)
	}

	// Perplexity over llama.cpp's greedy story: the full model scores every
	// target, the pruned one skips exactly the targets outside its head.
	_, story := greedyIDs(t, "refdata", "llama-cpp", "logits-f32-kvf32-nofa-greedy-ids.txt")
	tokens := append([]int32{1, 403, 407, 261, 378}, story...)
	fs.Reset()
	ps.Reset()
	fr, err := Perplexity(fs, SliceTokens(tokens), PerplexityOptions{Ctx: 64, BOS: 1})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Perplexity(ps, SliceTokens(tokens), PerplexityOptions{Ctx: 64, BOS: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Charged figures: with the full model the head's probabilities are
	// scaled by its share and each miss costs its full NLL, so a head cut
	// from unchanged weights scores the full model's PPL; without it each
	// miss costs ln(vocab).
	cr, err := Perplexity(ps, SliceTokens(tokens), PerplexityOptions{Ctx: 64, BOS: 1, Full: fs})
	if err != nil {
		t.Fatal(err)
	}
	if cr.PPL != pr.PPL || cr.MissCharge != "full model" || math.Abs(cr.FullPPL-fr.PPL) > 1e-9*fr.PPL {
		t.Errorf("with the full model: head PPL %v (alone %v), full PPL %v (alone %v), charge %q", cr.PPL, pr.PPL, cr.FullPPL, fr.PPL, cr.MissCharge)
	}
	if rel := math.Abs(cr.ChargedPPL-fr.PPL) / fr.PPL; rel > 1e-5 || !(cr.HeadShare > 0 && cr.HeadShare < 1) {
		t.Errorf("a head cut from unchanged weights, charged with the full model: PPL %v, full model %v (rel %.2g), head share %v", cr.ChargedPPL, fr.PPL, rel, cr.HeadShare)
	}
	logV := math.Log(float64(fs.c.Vocab))
	headNLL := float64(math.Log(pr.PPL) * float64(pr.Scored))
	if want := math.Exp((headNLL + float64(logV*float64(pr.Misses))) / float64(pr.Scored+pr.Misses)); pr.MissCharge != "fixed" || pr.MissNLL != logV || math.Abs(pr.ChargedPPL-want) > 1e-9*want {
		t.Errorf("fixed charge: %q %v, charged PPL %v, want %v", pr.MissCharge, pr.MissNLL, pr.ChargedPPL, want)
	}
	if fr.ChargedPPL != fr.PPL || fr.FullPPL != 0 {
		t.Errorf("no misses: charged %v, PPL %v, full %v", fr.ChargedPPL, fr.PPL, fr.FullPPL)
	}
	t.Logf("pruned, misses charged: %.4f (full model), %.4f (ln V); full alone %.4f", cr.ChargedPPL, pr.ChargedPPL, fr.PPL)
	misses := 0
	for c := 0; c < fr.Chunks; c++ {
		for j := 32; j < 63; j++ {
			if !kept[tokens[c*64+j+1]] {
				misses++
			}
		}
	}
	if fr.Misses != 0 || pr.Misses != misses || pr.Scored+pr.Misses != fr.Scored || misses == 0 {
		t.Fatalf("full: %d scored %d misses; pruned: %d scored %d misses; expected %d misses", fr.Scored, fr.Misses, pr.Scored, pr.Misses, misses)
	}
	t.Logf("full PPL %.4f over %d; pruned PPL %.4f over %d, %d misses", fr.PPL, fr.Scored, pr.PPL, pr.Scored, pr.Misses)
}
