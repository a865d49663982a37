package vocabselect

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ggufkit/gguf/internal/shared"
)

var fuzzSeeds = []string{
	"", " ", "Hello world", "I'm here, isn't it?", "  two leading spaces", "trailing ",
	"naïve café 😀 emoji", "line1\nline2\r\n\n", "12345 + 678 = 13023", "ALLCAPS 'S 'LL",
	"re\u0301sume\u0301", "中文 日本語 한국어", "a\xffb\xc0\x80", "<s></s><|endoftext|>", "\t\v\f\u00a0\u3000",
	"▁x▁▁y", strings.Repeat("a", 300), strings.Repeat("ab ", 50),
}

// FuzzPreTokenizers checks every pre-tokenizer on any input: no panic, and
// the words are non-empty and cover the text exactly.
func FuzzPreTokenizers(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	all := [][]splitPass{preGPT2, preLlama3, preQwen2, preQwen35, preStarcoder, preFalcon, preDefault, preDSCoder, preDSLLM}
	f.Fuzz(func(t *testing.T, s string) {
		var ct cpText
		ct.decode(s)
		for i, passes := range all {
			p := &preTokenizer{passes: passes}
			ends, _ := p.split(&ct, nil, nil)
			prev := 0
			for _, e := range ends {
				if e <= prev {
					t.Fatalf("pre-tokenizer %d: ends %v not increasing", i, ends)
				}
				prev = e
			}
			if prev != len(ct.cps) {
				t.Fatalf("pre-tokenizer %d: words end at %d of %d code points", i, prev, len(ct.cps))
			}
		}
	})
}

var (
	fuzzOnce  sync.Once
	fuzzToks  map[string]*Tokenizer
	fuzzPlain map[string]*Tokenizer
	fuzzError error
)

// fuzzTokenizers returns the vocabularies the fuzz targets use, cutting
// texts into blocks from 32 bytes on, and (plain) the same vocabularies
// without blocks or SentencePiece word cuts.
func fuzzTokenizers(tb testing.TB) (toks, plain map[string]*Tokenizer) {
	dir := shared.Dir(tb)
	fuzzOnce.Do(func() {
		fuzzToks, fuzzPlain = map[string]*Tokenizer{}, map[string]*Tokenizer{}
		for _, n := range []string{"llama-spm", "gpt-2", "deepseek-coder", "deepseek-llm", "falcon", "bert-bge", "phi-3"} {
			for _, m := range []map[string]*Tokenizer{fuzzToks, fuzzPlain} {
				tok, err := Load(context.Background(), dir+"/models/vocab/ggml-vocab-"+n+".gguf")
				if err != nil {
					fuzzError = err
					return
				}
				m[n] = tok
			}
			fuzzToks[n].block, fuzzPlain[n].block = 16, 0
			if fuzzPlain[n].kind == kindSPM {
				fuzzPlain[n].spmModel().cuts = 0
			}
		}
	})
	if fuzzError != nil {
		tb.Fatal(fuzzError)
	}
	return fuzzToks, fuzzPlain
}

// hasSpecialText reports whether s contains the text of a control token,
// which SentencePiece may merge into that token even unparsed; llama.cpp
// does not promise a round trip then.
func hasSpecialText(tok *Tokenizer, s string) bool {
	for _, id := range tok.special {
		if strings.Contains(s, tok.tokens[id]) {
			return true
		}
	}
	return false
}

// FuzzEncode checks Encode on any input: no panic, ids in range, and
// Decode(Encode(x)) == x where llama.cpp guarantees it: valid UTF-8 without
// the text of a special token, with SentencePiece when it has no "▁", with
// byte-level BPE when the vocabulary does not clean spaces. (Invalid UTF-8
// does not survive either: BPE reads it as U+FFFD, and SentencePiece cuts
// symbols by their first byte, so a broken sequence before a space swallows
// part of the "▁".)
func FuzzEncode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks, _ := fuzzTokenizers(t)
		for name, tok := range toks {
			ids := tok.Encode(s, true, true)
			for _, id := range ids {
				if !tok.valid(id) {
					t.Fatalf("%s: id %d out of range for %q", name, id, s)
				}
			}
			plain := tok.Encode(s, false, false)
			if hasSpecialText(tok, s) {
				continue
			}
			roundTrip := false
			switch {
			case tok.kind == kindSPM:
				roundTrip = utf8.ValidString(s) && !strings.Contains(s, "\u2581")
			case tok.kind == kindBPE && !tok.cleanSpaces:
				roundTrip = utf8.ValidString(s)
			}
			if roundTrip {
				if got := tok.Decode(plain); got != s {
					t.Fatalf("%s: Decode(Encode(%q)) = %q (ids %v)", name, s, got, plain)
				}
			}
		}
	})
}

// FuzzFastPaths checks that what only makes tokenizing faster changes no
// token on any input: blocks, SentencePiece's word cuts, WordPiece's chunks
// and the word caches (warm from earlier inputs) against tokenizing each
// fragment whole.
func FuzzFastPaths(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("Hello world\nThe end. \xe3 \xe3a bc\n\nNext line\n  more text here")
	f.Fuzz(func(t *testing.T, s string) {
		toks, plain := fuzzTokenizers(t)
		for name, tok := range toks {
			got := tok.Encode(s, true, true)
			var want []int32
			if tok.kind == kindWPM {
				if hasSpecialText(tok, s) {
					continue
				}
				got = tok.Encode(s, false, false)
				sess := plain[name].getSession()
				want = sess.wpmChunk(s, nil)
				plain[name].sessions.Put(sess)
			} else {
				want = plain[name].Encode(s, true, true)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s %q: got %v, whole %v", name, s, got, want)
			}
		}
	})
}

// FuzzBPEMerge checks that the heap and the linear scan merge any word the
// same way, for byte-level BPE (unique ranks) and SentencePiece (ranks from
// scores, with ties).
func FuzzBPEMerge(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		for _, name := range []string{"gpt-2", "falcon", "llama-spm", "phi-3"} {
			toks, _ := fuzzTokenizers(t)
			tok := toks[name]
			s := tok.getSession()
			var a, b []int32
			if tok.kind == kindSPM {
				a = s.mergeSPMWith([]byte(word), nil, false)
				b = s.mergeSPMWith([]byte(word), nil, true)
			} else {
				a = s.mergeWordWith(word, nil, false)
				b = s.mergeWordWith(word, nil, true)
			}
			tok.sessions.Put(s)
			if !slices.Equal(a, b) {
				t.Fatalf("%s %q: scan %v heap %v", name, word, a, b)
			}
		}
	})
}

// TestSPMWordsEqualsWhole checks that merging SentencePiece text word by
// word gives the tokens of merging each fragment whole (llama.cpp's way), on
// a real corpus.
func TestSPMWordsEqualsWhole(t *testing.T) {
	for _, name := range []string{"llama-spm", "phi-3"} {
		tok := loadVocab(t, name)
		whole := loadVocab(t, name)
		if c := tok.spmModel().cuts; c != cutSpace|cutNewline {
			t.Fatalf("%s: expected word-by-word merging at spaces and line breaks, got cuts %b", name, c)
		}
		whole.spmModel().cuts = 0
		// French, Russian and Chinese, then a text with broken UTF-8 sequences before spaces and line
		// breaks, whose first bytes take bytes of the "▁" that follows.
		var texts []string
		for _, c := range []string{"fr/les-miserables-tome4-fr.txt", "ru/anna-karenina-excerpt.txt", "zh/hongloumeng-excerpt.txt"} {
			data, err := os.ReadFile(shared.Path(t, "corpus", c))
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(data[:100<<10]))
		}
		texts = append(texts, "ab\xe3 cd \xf0\x9f efg\xc3\nhi  \xe2\x96 jk\xe2 \u2581l \xe3 \xe3a bc")
		for _, text := range texts {
			if a, b := tok.Encode(text, true, true), whole.Encode(text, true, true); !slices.Equal(a, b) {
				t.Fatalf("%s: word-by-word and whole merging differ on %.40q", name, text)
			}
		}
	}
}

// TestBlocksEqualWhole checks that tokenizing long fragments in blocks
// gives the tokens of tokenizing them whole, for every kind of vocabulary
// and pre-tokenizer, on text in six languages cut into small blocks (many
// seams). The excerpts end inside UTF-8 sequences, so a broken sequence
// comes right before some line breaks.
func TestBlocksEqualWhole(t *testing.T) {
	text := corpusExcerpts(t, 40<<10, "\n", "en/war-and-peace.txt", "ru/anna-karenina-excerpt.txt",
		"zh/hongloumeng-excerpt.txt", "ja/aozora-soseki-kenji-4-works.txt", "ar/un-v1.0-dev+test.ar.txt",
		"de/german-classics-7-books.txt")
	toks := map[string]*Tokenizer{}
	for _, name := range []string{"llama-spm", "phi-3", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "mpt", "refact", "bert-bge"} {
		toks[name] = loadVocab(t, name)
	}
	for _, pre := range []string{"qwen2", "qwen35"} {
		md, err := ImportHF(qwen2Dir(t), pre)
		if err != nil {
			t.Fatal(err)
		}
		if toks[pre], err = NewTokenizer(md); err != nil {
			t.Fatal(err)
		}
	}
	md, err := ImportHF(llama3Dir(t), "llama-bpe")
	if err != nil {
		t.Fatal(err)
	}
	if toks["llama-bpe"], err = NewTokenizer(md); err != nil {
		t.Fatal(err)
	}
	for name, tok := range toks {
		tok.block = 0
		whole := tok.Encode(string(text), true, false)
		tok.block = 1 << 10
		blocks := tok.Encode(string(text), true, false)
		if !slices.Equal(whole, blocks) {
			i := 0
			for i < min(len(whole), len(blocks)) && whole[i] == blocks[i] {
				i++
			}
			t.Errorf("%s: blocks differ from whole at token %d of %d", name, i, len(whole))
		}
	}
}

// TestWPMChunksEqualWhole checks that WordPiece tokenization of text taken
// in chunks between ASCII whitespace (through the cache) gives the tokens
// of normalizing and cutting the text at once, on six languages with other
// whitespace, accents and control characters mixed in.
func TestWPMChunksEqualWhole(t *testing.T) {
	tok := loadVocab(t, "bert-bge")
	text := corpusExcerpts(t, 20<<10, "\u00a0e\u0301\u3000x\x00y\u200bz\t", "en/war-and-peace.txt",
		"ru/anna-karenina-excerpt.txt", "zh/hongloumeng-excerpt.txt", "fr/les-miserables-tome4-fr.txt",
		"ar/un-v1.0-dev+test.ar.txt", "de/german-classics-7-books.txt")
	s := tok.getSession()
	whole := s.wpmChunk(string(text), nil)
	tok.sessions.Put(s)
	if got := tok.Encode(string(text), false, false); !slices.Equal(got, whole) {
		t.Fatalf("chunked tokens (%d) differ from whole (%d)", len(got), len(whole))
	}
}

// FuzzWPMLongest checks that the length filter of wpmLongest finds the
// token llama.cpp's loop finds: every length from the longest token's down.
func FuzzWPMLongest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("\u2581привет")
	f.Add("\u2581unaffable")
	f.Add("\u2581中\u2581利\u2581未\u2581a\u2581ab\u2581\u2581，x")
	f.Fuzz(func(t *testing.T, s string) {
		toks, _ := fuzzTokenizers(t)
		tok := toks["bert-bge"]
		w := []byte(s)
		for i := 0; i < len(w); i++ {
			id, end := tok.wpmLongest(w, i)
			wantID, wantEnd := int32(-1), i
			for j := min(len(w), i+tok.maxLen); j > i; j-- {
				if x, ok := tok.toID[string(w[i:j])]; ok {
					wantID, wantEnd = x, j
					break
				}
			}
			if id != wantID || end != wantEnd {
				t.Fatalf("%q at %d: got %d..%d, want %d..%d", s, i, id, end, wantID, wantEnd)
			}
		}
	})
}

// corpusExcerpts concatenates the first size bytes of each shared corpus
// file, each followed by sep.
func corpusExcerpts(t *testing.T, size int, sep string, files ...string) []byte {
	t.Helper()
	var text []byte
	for _, c := range files {
		data, err := os.ReadFile(shared.Path(t, "corpus", c))
		if err != nil {
			t.Fatal(err)
		}
		text = append(append(text, data[:min(size, len(data))]...), sep...)
	}
	return text
}
