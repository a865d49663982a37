package vocabselect

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/internal/shared"
)

// countFile counts a shared corpus file.
func countFile(t *testing.T, tok *Tokenizer, rel string) *Counts {
	t.Helper()
	f, err := os.Open(shared.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := tok.Count(context.Background(), f, CountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSelect checks the properties of a selected list on real corpora:
// ranked groups, unique, in range, specials and low ids included, padded,
// budgets respected and interleaved, and the file reproducible byte for byte.
func TestSelect(t *testing.T) {
	tok := loadVocab(t, "deepseek-llm")
	corpora := []Corpus{
		{Name: "en", Counts: countFile(t, tok, "corpus/en/war-and-peace.txt"), Budget: 3000},
		{Name: "ru", Counts: countFile(t, tok, "corpus/ru/anna-karenina-excerpt.txt")},
		{Name: "zh", Counts: countFile(t, tok, "corpus/zh/hongloumeng-excerpt.txt")},
	}
	opts := SelectOptions{Rows: 10001, KeepBelow: 1000, Pad: 8}
	run := func() ([]byte, *Selection) {
		sel, err := Select(tok, corpora, opts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := headprune.WriteIDs(&b, []string{"test header", "two\nlines"}, sel.IDs); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), sel
	}
	file1, sel := run()
	file2, _ := run()
	if !bytes.Equal(file1, file2) {
		t.Fatal("two runs gave different files")
	}
	ids, err := headprune.ReadIDs(bytes.NewReader(file1), tok.NumTokens())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, sel.IDs) {
		t.Fatal("ids file does not read back")
	}
	if len(ids) != 10008 || len(ids)%8 != 0 {
		t.Fatalf("%d ids, want 10008 (10001 rounded up to 8)", len(ids))
	}
	specials := tok.Specials()
	if !slices.Equal(ids[:len(specials)], specials) || sel.Specials != len(specials) {
		t.Fatalf("the list does not start with the %d specials", len(specials))
	}
	seen := map[int32]bool{}
	for _, id := range ids {
		if id < 0 || int(id) >= tok.NumTokens() || seen[id] {
			t.Fatalf("id %d out of range or repeated", id)
		}
		seen[id] = true
	}
	for id := int32(0); id < 1000; id++ {
		if !seen[id] {
			t.Fatalf("id %d below --keep-below is missing", id)
		}
	}
	free := 10001 - sel.Specials - sel.Low
	if sel.Budgets[0] != 3000 || sel.Budgets[1]+sel.Budgets[2] != free-3000 {
		t.Fatalf("budgets %v, want 3000 and an equal split of %d", sel.Budgets, free-3000)
	}
	if sel.Taken[0] != 3000 || sel.Fill != 7 {
		t.Fatalf("taken %v fill %d", sel.Taken, sel.Fill)
	}
	// The most frequent Russian token missing from the low ids must be
	// among the first rows after them: corpora are interleaved.
	start := sel.Specials + sel.Low
	ru := byFrequency(corpora[1].Counts.Counts)
	for _, id := range ru {
		if id >= 1000 && !slices.Contains(specials, id) {
			if i := slices.Index(ids, id); i < start || i > start+2 {
				t.Fatalf("top Russian token %d is at rank %d, want %d..%d", id, i, start, start+2)
			}
			break
		}
	}
	if _, err := Select(tok, corpora, SelectOptions{Rows: 500, KeepBelow: 1000}); err == nil {
		t.Fatal("rows below the kept ids must fail")
	}
	if _, err := Select(tok, []Corpus{{Name: "x", Counts: corpora[0].Counts, Budget: 1 << 20}}, opts); err == nil {
		t.Fatal("budgets over the rows must fail")
	}
}

// TestCoverageMatchesLlamaCpp computes, for every vocabulary with test
// pairs, the misses of an id-ranked head (the seeds' first kind: the lowest
// third of the ids) on each pair's text, and compares them with the misses
// counted from llama.cpp's own ids for that text.
func TestCoverageMatchesLlamaCpp(t *testing.T) {
	files := shared.Glob(t, "models/vocab/*.gguf.inp")
	checked := 0
	for _, inp := range files {
		tok, err := Load(context.Background(), strings.TrimSuffix(inp, ".inp"))
		if err != nil {
			t.Fatal(err)
		}
		var head []int32
		for id := int32(0); id < int32(tok.NumTokens()/3); id++ {
			head = append(head, id)
		}
		in := map[int32]bool{}
		for _, id := range head {
			in[id] = true
		}
		for _, p := range readPairs(t, inp) {
			c, err := tok.Count(context.Background(), strings.NewReader(p.text), CountOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rep := Coverage(tok, head, c, 3)
			var misses uint64
			missCount := map[int32]uint64{}
			for _, id := range p.ids {
				if !in[id] {
					misses++
					missCount[id]++
				}
			}
			if rep.Tokens != uint64(len(p.ids)) || rep.Misses != misses {
				t.Errorf("%s %q: tokens %d misses %d, llama.cpp %d and %d", inp, p.text, rep.Tokens, rep.Misses, len(p.ids), misses)
			}
			for _, m := range rep.Top {
				if missCount[m.ID] != m.Count || m.Text != string(tok.TokenToPiece(m.ID, true)) {
					t.Errorf("%q: top missing %+v, llama.cpp count %d", p.text, m, missCount[m.ID])
				}
			}
			checked++
		}
	}
	t.Logf("coverage of %d texts matches llama.cpp's ids", checked)
}
