package vocabselect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// pair is one llama.cpp tokenizer test case: an input and the ids
// test-tokenizer-0 got for it (no BOS, special tokens not parsed).
type pair struct {
	text string
	ids  []int32
}

// readPairs reads a .inp/.out pair of llama.cpp's tokenizer tests.
func readPairs(tb testing.TB, inp string) []pair {
	tb.Helper()
	in, err := os.ReadFile(inp)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(strings.TrimSuffix(inp, ".inp") + ".out")
	if err != nil {
		tb.Fatal(err)
	}
	texts := strings.Split(string(in), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] != "" {
		tb.Fatalf("%s: does not end with the separator", inp)
	}
	texts = texts[:len(texts)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		tb.Fatalf("%s: %d inputs but %d output lines", inp, len(texts), len(lines))
	}
	pairs := make([]pair, len(texts))
	for i, l := range lines {
		pairs[i].text = texts[i]
		for _, f := range strings.Fields(l) {
			id, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				tb.Fatalf("%s line %d: %v", inp, i+1, err)
			}
			pairs[i].ids = append(pairs[i].ids, int32(id))
		}
	}
	return pairs
}

// checkPairs encodes every input and compares with llama.cpp's ids; it
// returns the number of pairs checked.
func checkPairs(t *testing.T, tok *Tokenizer, pairs []pair) int {
	t.Helper()
	for i, p := range pairs {
		got := tok.Encode(p.text, false, false)
		if !slices.Equal(got, p.ids) {
			t.Errorf("pair %d %q:\n got  %v\n want %v", i, p.text, got, p.ids)
		}
	}
	return len(pairs)
}

// TestLlamaCppVocabPairs checks every vocab GGUF that has llama.cpp test
// pairs, token for token.
func TestLlamaCppVocabPairs(t *testing.T) {
	files := shared.Glob(t, "models/vocab/*.gguf.inp")
	total := 0
	for _, inp := range files {
		model := strings.TrimSuffix(inp, ".inp")
		t.Run(filepath.Base(model), func(t *testing.T) {
			tok, err := Load(context.Background(), model)
			if err != nil {
				t.Fatal(err)
			}
			total += checkPairs(t, tok, readPairs(t, inp))
		})
	}
	t.Logf("%d vocab GGUFs, %d llama.cpp tokenizer pairs checked", len(files), total)
}
