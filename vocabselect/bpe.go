package vocabselect

import (
	"fmt"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// bpeModel holds the merges of a byte-level BPE vocabulary with every string
// interned, so that merging compares integers. Symbol ids below the token
// count are token ids; the others name strings that occur only in merges.
type bpeModel struct {
	strs  []string         // symbol id -> string
	extra map[string]int32 // interned strings that are not tokens
	// pairs holds every merge. Where a pair appears twice the first rank
	// wins, as with llama.cpp's emplace.
	pairs *pairTable
	// byteSym is the symbol of each byte's GPT-2 character, or -1 when that
	// character is neither a token nor part of a merge.
	byteSym [256]int32
	// oneByte is the token of the one-byte string, or -1: llama.cpp's
	// fallback for a final symbol that is not a token.
	oneByte [256]int32
}

func newBPEModel(md *gguf.Metadata, t *Tokenizer) (*bpeModel, error) {
	v, ok := md.Get(KeyMerges)
	if !ok {
		return nil, fmt.Errorf("cannot find tokenizer merges: %s is missing", KeyMerges)
	}
	merges, ok := v.Strings()
	if !ok {
		return nil, fmt.Errorf("%s is a %s, want an array of strings", KeyMerges, v.TypeString())
	}
	if len(merges) > 1<<30 {
		return nil, fmt.Errorf("%s has %d merges, more than a tokenizer can index", KeyMerges, len(merges))
	}
	m := &bpeModel{
		strs:  append([]string(nil), t.tokens...),
		extra: map[string]int32{},
	}
	pairs := make(pairBuilder, 0, len(merges))
	var buf []byte
	for rank, w := range merges {
		// llama.cpp splits at the first space after the first byte, so a
		// merge whose left side is a space still parses.
		var first, second string
		if len(w) > 1 {
			if i := strings.IndexByte(w[1:], ' '); i >= 0 {
				first, second = w[:i+1], w[i+2:]
			}
		}
		buf = append(append(buf[:0], first...), second...)
		l, r, res := m.intern(t, first), m.intern(t, second), m.internBytes(t, buf)
		pairs.add(l, r, int32(rank), res)
	}
	m.pairs = pairs.build(len(m.strs))
	for b := 0; b < 256; b++ {
		m.byteSym[b] = m.lookup(t, gpt2Bytes[b])
		m.oneByte[b] = -1
		if id, ok := t.toID[string([]byte{byte(b)})]; ok {
			m.oneByte[b] = id
		}
	}
	return m, nil
}

func (m *bpeModel) lookup(t *Tokenizer, s string) int32 {
	if id, ok := t.toID[s]; ok {
		return id
	}
	if id, ok := m.extra[s]; ok {
		return id
	}
	return -1
}

func (m *bpeModel) intern(t *Tokenizer, s string) int32 {
	if id := m.lookup(t, s); id >= 0 {
		return id
	}
	id := int32(len(m.strs))
	m.strs = append(m.strs, s)
	m.extra[s] = id
	return id
}

// internBytes is intern for a string in a reused buffer: most merge results
// are tokens, found without allocating.
func (m *bpeModel) internBytes(t *Tokenizer, b []byte) int32 {
	if id, ok := t.toID[string(b)]; ok {
		return id
	}
	return m.intern(t, string(b))
}

// mergeWord runs llama_tokenizer_bpe_session's merge loop over one word given
// as raw bytes (each byte starts as the symbol of its GPT-2 character) and
// appends the resulting token ids.
func (s *session) mergeWord(word string, out []int32) []int32 {
	for s.maxWord > 0 && len(word) > s.maxWord {
		n := charStart(word, s.maxWord)
		out = s.mergeWordWith(word[:n], out, true)
		word = word[n:]
	}
	return s.mergeWordWith(word, out, len(word) > smallWord)
}

// mergeWordWith is mergeWord with the choice of a heap (long words) or a
// linear scan (short ones); both give the same merges.
func (s *session) mergeWordWith(word string, out []int32, useHeap bool) []int32 {
	m := s.t.bpe
	syms := s.syms[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, mergeSym{sym: m.byteSym[word[i]], start: int32(i)})
	}
	s.mg.link(syms)
	s.mg.merge(syms, useHeap)
	s.syms = syms
	for i := int32(0); i >= 0 && int(i) < len(syms); i = syms[i].next {
		out = s.t.emitSymbol(syms[i].sym, word[syms[i].start], out)
	}
	return out
}

// emitSymbol appends the token of a final symbol, or, as llama.cpp does when
// the symbol's text is not a token, the tokens of its single bytes that are.
// b is the symbol's first byte, which is the whole symbol when sym < 0.
func (t *Tokenizer) emitSymbol(sym int32, b byte, out []int32) []int32 {
	m := t.bpe
	if sym >= 0 && int(sym) < len(t.tokens) {
		return append(out, sym)
	}
	str := gpt2Bytes[b]
	if sym >= 0 {
		str = m.strs[sym]
	}
	for i := 0; i < len(str); i++ {
		if id := m.oneByte[str[i]]; id >= 0 {
			out = append(out, id)
		}
	}
	return out
}
