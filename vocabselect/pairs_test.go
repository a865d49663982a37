package vocabselect

import (
	"context"
	"encoding/json"
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

// TestTok512 checks the stories260K model's 512-token SentencePiece
// vocabulary against llama-tokenize (--ids, BOS added) on the strings of
// refdata/tokenize-tok512-llamacpp-vs-llama2c.txt.
func TestTok512(t *testing.T) {
	tok, err := Load(context.Background(), shared.Path(t, "models", "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(shared.Path(t, "refdata", "tokenize-tok512-llamacpp-vs-llama2c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("bad line %q", line)
		}
		var text string
		var want []int32
		if err := json.Unmarshal([]byte(f[0]), &text); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(f[1]), &want); err != nil {
			t.Fatal(err)
		}
		got := tok.Encode(text, true, true)
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %v want %v", text, got, want)
		}
		if dec := tok.Decode(got[1:]); dec != text {
			t.Errorf("%q decodes to %q", text, dec)
		}
		n++
	}
	if n != 14 {
		t.Fatalf("checked %d strings, want 14", n)
	}
	t.Logf("tok512: %d strings match llama-tokenize", n)
}

// hfDir links a shared Hugging Face tokenizer folder into a temporary one
// under the names ImportHF expects (the shared copies of the Qwen2 configs
// carry a model prefix).
func hfDir(t testing.TB, name string, links map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for to, from := range links {
		if err := os.Symlink(shared.Path(t, "models", "tokenizers", name, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// qwen2Dir and llama3Dir are the two Hugging Face tokenizers in shared/.
func qwen2Dir(t testing.TB) string {
	return hfDir(t, "qwen2", map[string]string{
		"vocab.json": "vocab.json", "merges.txt": "merges.txt",
		"config.json":           "qwen2-1.5b-instruct_config.json",
		"tokenizer_config.json": "qwen2-1.5b-instruct_tokenizer_config.json",
		"added_tokens.json":     "qwen2-1.5b-instruct_added_tokens.json",
	})
}

func llama3Dir(t testing.TB) string {
	return hfDir(t, "llama3", map[string]string{"vocab.json": "vocab.json", "merges.txt": "merges.txt"})
}

// TestImportHFPairs imports the Qwen2 and Llama 3 tokenizer files and checks
// llama.cpp's test pairs for ggml-vocab-qwen2.gguf and
// ggml-vocab-llama-bpe.gguf through them.
func TestImportHFPairs(t *testing.T) {
	for _, c := range []struct {
		dir, pre, inp string
	}{
		{qwen2Dir(t), "qwen2", "models/tokenizers/qwen2/ggml-vocab-qwen2.gguf.inp"},
		{llama3Dir(t), "llama-bpe", "models/tokenizers/llama3/ggml-vocab-llama-bpe.gguf.inp"},
	} {
		t.Run(c.pre, func(t *testing.T) {
			md, err := ImportHF(c.dir, c.pre)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := NewTokenizer(md)
			if err != nil {
				t.Fatal(err)
			}
			n := checkPairs(t, tok, readPairs(t, shared.Path(t, c.inp)))
			t.Logf("%s: %d llama.cpp pairs match through import-hf", c.pre, n)
		})
	}
}

// TestQwen35Pairs checks llama.cpp's Qwen3.5 test pairs. The Qwen3.5 vocab
// GGUF is not available (shared/models/tokenizers/qwen35/SOURCE.txt), but
// its first 46 pairs have exactly the Qwen2 ids, so the Qwen2 vocabulary
// stands in for it under the qwen35 pre-tokenizer; the 4 extra pairs
// (combining marks, which qwen35 keeps inside words) must match too.
func TestQwen35Pairs(t *testing.T) {
	q35 := readPairs(t, shared.Path(t, "models/tokenizers/qwen35/ggml-vocab-qwen35.gguf.inp"))
	q2 := readPairs(t, shared.Path(t, "models/tokenizers/qwen2/ggml-vocab-qwen2.gguf.inp"))
	if len(q35) != 50 || len(q2) != 46 {
		t.Fatalf("got %d qwen35 and %d qwen2 pairs, want 50 and 46", len(q35), len(q2))
	}
	for i := range q2 {
		if q35[i].text != q2[i].text || !slices.Equal(q35[i].ids, q2[i].ids) {
			t.Fatalf("pair %d differs between the Qwen2 and Qwen3.5 tests: the stand-in does not hold", i)
		}
	}
	md, err := ImportHF(qwen2Dir(t), "qwen35")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewTokenizer(md)
	if err != nil {
		t.Fatal(err)
	}
	n := checkPairs(t, tok, q35)
	t.Logf("qwen35: %d llama.cpp pairs match (Qwen2 vocabulary standing in)", n)
}
