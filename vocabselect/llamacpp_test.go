package vocabselect

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLlamaCppInvalidUTF8 tokenizes a text full of invalid UTF-8 (overlong
// forms, values past U+10FFFF, surrogates, random bytes) with seven
// vocabularies and checks every id against the ones the real llama.cpp gave
// (testdata/llamacpp-invalid-utf8/README.md says how they were made).
func TestLlamaCppInvalidUTF8(t *testing.T) {
	dir := filepath.Join("testdata", "llamacpp-invalid-utf8")
	input, err := os.ReadFile(filepath.Join(dir, "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, vocab := range []string{"gpt-2", "bert-bge", "llama-spm", "deepseek-llm", "falcon", "qwen2", "llama-bpe"} {
		t.Run(vocab, func(t *testing.T) {
			want := readIDs(t, filepath.Join(dir, vocab+".ids"))
			var tok *Tokenizer
			switch vocab {
			case "qwen2", "llama-bpe":
				hf := qwen2Dir(t)
				if vocab == "llama-bpe" {
					hf = llama3Dir(t)
				}
				md, err := ImportHF(hf, vocab)
				if err != nil {
					t.Fatal(err)
				}
				if tok, err = NewTokenizer(md); err != nil {
					t.Fatal(err)
				}
			default:
				tok = loadVocab(t, vocab)
			}
			got := tok.Encode(string(input), true, false)
			if !slices.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%d ids, llama.cpp %d; first difference at id %d: got %v, want %v",
					len(got), len(want), i, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
			}
		})
	}
}

// readIDs reads a file of token ids, one per line.
func readIDs(t *testing.T, path string) []int32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, line := range strings.Fields(string(data)) {
		id, err := strconv.ParseInt(line, 10, 32)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, int32(id))
	}
	return ids
}
