package vocabselect

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ggufkit/gguf/internal/shared"
)

func loadVocab(t testing.TB, name string) *Tokenizer {
	t.Helper()
	tok, err := Load(context.Background(), shared.Path(t, "models", "vocab", "ggml-vocab-"+name+".gguf"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestCountMatchesWhole checks that chunked, parallel counting gives exactly
// the counts of tokenizing a multi-MB corpus whole, with small chunks so that
// there are hundreds of seams.
func TestCountMatchesWhole(t *testing.T) {
	qwen2, err := ImportHF(qwen2Dir(t), "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	q2, err := NewTokenizer(qwen2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		tok    *Tokenizer
		corpus string
	}{
		{"llama-spm", loadVocab(t, "llama-spm"), "corpus/en/war-and-peace.txt"},
		{"gpt-2", loadVocab(t, "gpt-2"), "corpus/en/war-and-peace.txt"},
		{"bert-bge", loadVocab(t, "bert-bge"), "corpus/de/german-classics-7-books.txt"},
		{"deepseek-llm", loadVocab(t, "deepseek-llm"), "corpus/ru/anna-karenina-excerpt.txt"},
		{"qwen2", q2, "corpus/zh/hongloumeng-excerpt.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.tok.ChunkExact() {
				t.Fatalf("%s: ChunkExact is false", c.name)
			}
			data, err := os.ReadFile(shared.Path(t, c.corpus))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]uint64, c.tok.NumTokens())
			ids := c.tok.Encode(string(data), false, false)
			for _, id := range ids {
				want[id]++
			}
			var progress int64
			got, err := c.tok.Count(context.Background(), bytes.NewReader(data), CountOptions{Workers: 2, ChunkSize: 64 << 10, Progress: func(n int64) { progress = n }})
			if err != nil {
				t.Fatal(err)
			}
			if got.Tokens != uint64(len(ids)) || got.Bytes != int64(len(data)) || progress != int64(len(data)) {
				t.Fatalf("tokens %d bytes %d progress %d, want %d %d %d", got.Tokens, got.Bytes, progress, len(ids), len(data), len(data))
			}
			if !slices.Equal(got.Counts, want) {
				for id := range want {
					if got.Counts[id] != want[id] {
						t.Errorf("id %d (%q): chunked %d, whole %d", id, c.tok.Piece(int32(id)), got.Counts[id], want[id])
					}
				}
			}
		})
	}
}

// TestCutFallbacks covers text without line breaks: it is still cut, before
// a space, and counting stays exact for a byte-level BPE vocabulary.
func TestCutFallbacks(t *testing.T) {
	tok := loadVocab(t, "gpt-2")
	text := strings.Repeat("one two three, four five. ", 4000)
	whole := tok.Encode(text, false, false)
	got, err := tok.Count(context.Background(), strings.NewReader(text), CountOptions{ChunkSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens != uint64(len(whole)) {
		t.Fatalf("chunked %d tokens, whole %d", got.Tokens, len(whole))
	}
	if c := tok.cut([]byte("abc"), true); c <= 0 || c > 3 {
		t.Fatalf("forced cut of a word: %d", c)
	}
	if c := tok.cut([]byte("abc\nxyz"), false); c != 4 {
		t.Fatalf("cut after the line break: %d, want 4", c)
	}
	if c := tok.cut([]byte("abc \nxyz"), false); c != 0 {
		t.Fatalf("a line break after a space is not a safe cut: %d", c)
	}
	if c := tok.cut([]byte("abc\xe3\nxyz"), false); c != 0 {
		t.Fatalf("a line break that a broken sequence swallows is not a safe cut: %d", c)
	}
}

// TestCountsFileRoundTrip writes counts and reads them back.
func TestCountsFileRoundTrip(t *testing.T) {
	tok := loadVocab(t, "llama-spm")
	c, err := tok.Count(context.Background(), strings.NewReader("Hello world\nHello again, world!\n"), CountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCounts(&buf, tok, []string{"model: test"}, c); err != nil {
		t.Fatal(err)
	}
	if !IsCountsFile(buf.Bytes()) {
		t.Fatal("written file not recognized")
	}
	back, err := ReadCounts(bytes.NewReader(buf.Bytes()), tok.NumTokens())
	if err != nil {
		t.Fatal(err)
	}
	if back.Tokens != c.Tokens || back.Bytes != c.Bytes || !slices.Equal(back.Counts, c.Counts) {
		t.Fatal("counts changed through the file")
	}
	if _, err := ReadCounts(strings.NewReader(countsMagic+"\n5\t1\t\"x\"\n5\t2\t\"x\"\n"), 10); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("duplicate id: %v", err)
	}
}

// TestPartitionManySpecials checks the byte-pair filter of partition on
// vocabularies with more than manySpecials special tokens: each special
// token written between two words is recognized (parseSpecial), and the
// text around it is tokenized as it is alone.
func TestPartitionManySpecials(t *testing.T) {
	for _, name := range []string{"deepseek-llm", "phi-3"} {
		tok := loadVocab(t, name)
		if len(tok.special) <= manySpecials {
			t.Fatalf("%s: %d special tokens, want more than %d", name, len(tok.special), manySpecials)
		}
		checked := 0
		for k, id := range tok.special {
			if k%7 != 0 {
				continue
			}
			text := "hello" + tok.tokens[id] + " world"
			rest := " world"
			if tok.attrs[id]&attrRstrip != 0 {
				rest = "world"
			}
			want := append(append(tok.Encode("hello", false, false), id), tok.Encode(rest, false, false)...)
			if got := tok.Encode(text, false, true); !slices.Equal(got, want) {
				t.Errorf("%s %q: got %v want %v", name, text, got, want)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("%s: no special token checked", name)
		}
	}
}

// repeatReader yields n bytes of a repeated pattern without holding them.
type repeatReader struct {
	pattern []byte
	n, off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.pattern[r.off:])
		k += c
		r.n -= c
		r.off = (r.off + c) % len(r.pattern)
	}
	return k, nil
}

// TestCountMemoryBounded counts texts that are one long word to the
// pre-tokenizers (NUL bytes; random CJK without a break) with two workers:
// the heap must stay within twice the stated bound of about 50 MB per worker
// (twice for the garbage collector's slack), where merging whole 4 MB chunks
// grew it by 750 MB.
func TestCountMemoryBounded(t *testing.T) {
	qwen2, err := ImportHF(qwen2Dir(t), "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewTokenizer(qwen2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var cjk []byte
	for range 1 << 16 {
		cjk = utf8.AppendRune(cjk, rune(0x4E00+rng.IntN(0x9FFF-0x4E00)))
	}
	// HeapSys never shrinks, so its growth since the start is the peak of
	// both runs.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for name, pattern := range map[string][]byte{"nul": {0}, "cjk": cjk} {
		const size = 16 << 20
		c, err := tok.Count(context.Background(), &repeatReader{pattern: pattern, n: size}, CountOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		grown := int64(after.HeapSys) - int64(before.HeapSys)
		if bound := int64(2 * 2 * 50 << 20); grown > bound {
			t.Errorf("%s: heap grew by %d MB counting %d MB texts, bound %d MB", name, grown>>20, size>>20, bound>>20)
		}
		if c.Bytes != size || c.Tokens == 0 {
			t.Errorf("%s: %d bytes, %d tokens", name, c.Bytes, c.Tokens)
		}
		t.Logf("%s: heap grew by %d MB, %d tokens", name, grown>>20, c.Tokens)
	}
}
