package vocabselect

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// SentencePiece-style tokenization (llm_tokenizer_spm_session): the text,
// with spaces escaped as "▁", starts as one symbol per UTF-8 character;
// adjacent pairs whose concatenation is a token are merged, highest score
// first (leftmost on ties), until no pair is a token; symbols that are not
// tokens fall back to byte tokens.
//
// llama.cpp looks every concatenation up in its token map. Here the same
// merges come from a pairTable: a symbol is a token id (or, for a character
// that is no token but occurs in one, an id of its own), every way of
// cutting a token into two symbols is one entry, and a token's score becomes
// its rank among all scores, so that the merge loop of byte-level BPE runs
// unchanged.

// spmModel is a SentencePiece vocabulary as merge tables, built on first use
// (a vocabulary of 256k tokens takes a fraction of a second, which commands
// that never tokenize should not pay).
type spmModel struct {
	pairs *pairTable
	// chars maps the text of every one-character token, and of every
	// character that is no token but occurs in one, to its symbol.
	chars map[string]int32
	ascii [128]int32 // chars for the one-byte characters, -1 if none
	// cuts says where no token spans, so that text is merged one word at
	// a time (see encodeSPM).
	cuts spmCuts
}

// spmCuts are places no token spans.
type spmCuts uint8

const (
	// cutSpace: before every run of "▁" that follows another character
	// (no token has "▁" after another character).
	cutSpace spmCuts = 1 << iota
	// cutNewline: after a line break followed by anything but a line break
	// (no token has a byte other than '\n' and '\r' after a '\n').
	cutNewline
)

// nextChar returns the length of the symbol starting at w[i]: llama.cpp's
// unicode_len_utf8 of its first byte, cut at the end of the text.
func nextChar[T string | []byte](w T, i int) int {
	return min(utf8Len(w[i]), len(w)-i)
}

func newSPMModel(t *Tokenizer) *spmModel {
	n := len(t.tokens)
	oneChar := 0
	for _, w := range t.tokens {
		if w != "" && nextChar(w, 0) == len(w) {
			oneChar++
		}
	}
	m := &spmModel{chars: make(map[string]int32, oneChar+oneChar/4)}
	rank := spmRanks(t.scores[:n])
	ids := newTextSet(t.tokens)
	next := int32(n)
	// sym is the symbol of w[a:b] (hash h) when it is a token, or, for one
	// character that is no token, the id of its own; else -1. (A character
	// that is a token is in chars from the loop below.)
	sym := func(w string, a, b int, h uint64, oneChar bool) int32 {
		s := w[a:b]
		if id := ids.get(s, h); id >= 0 {
			return id
		}
		if !oneChar {
			return -1
		}
		if id, ok := m.chars[s]; ok {
			return id
		}
		m.chars[s] = next
		next++
		return next - 1
	}
	type merge struct{ l, r, res int32 }
	var merges []merge
	var pre []uint64
	for id, w := range t.tokens {
		if len(w) == 0 {
			continue
		}
		first := nextChar(w, 0)
		if first == len(w) {
			m.chars[w] = int32(id)
			continue
		}
		// Every prefix's polynomial hash, from which each suffix's follows.
		pre = polyPrefixes(pre[:0], w)
		whole := pre[len(w)]
		for k := first; k < len(w); k += nextChar(w, k) {
			if l := sym(w, 0, k, mixText(pre[k], k), k == first); l >= 0 {
				suf := whole - pre[k]*ids.pow[len(w)-k]
				if r := sym(w, k, len(w), mixText(suf, len(w)-k), k+nextChar(w, k) == len(w)); r >= 0 {
					merges = append(merges, merge{l, r, int32(id)})
				}
			}
		}
	}
	pairs := make(pairBuilder, 0, len(merges))
	for _, mg := range merges {
		pairs.add(mg.l, mg.r, rank[mg.res], mg.res)
	}
	m.pairs = pairs.build(int(next))
	for b := range m.ascii {
		m.ascii[b] = -1
		if id, ok := m.chars[string(rune(b))]; ok {
			m.ascii[b] = id
		}
	}
	m.cuts = cutSpace | cutNewline
	for _, w := range t.tokens {
		rest := w
		for strings.HasPrefix(rest, "\u2581") {
			rest = rest[len("\u2581"):]
		}
		if strings.Contains(rest, "\u2581") {
			m.cuts &^= cutSpace
		}
		for k := 0; k+1 < len(w); k++ {
			if c := w[k+1]; w[k] == '\n' && c != '\n' && c != '\r' {
				m.cuts &^= cutNewline
			}
		}
	}
	return m
}

// textSet finds a token's id from its text and a hash the caller computes,
// for newSPMModel, which looks up every prefix and suffix of every token: a
// polynomial hash gives the hashes of all the prefixes and suffixes of a
// token in one pass over it, where a map hashed each of them again.
type textSet struct {
	tokens []string
	slots  []textSlot
	pow    []uint64 // powers of polyBase, up to the longest token's length
}

// textSlot is the upper half of a token's hash and its id plus one (0: a
// free slot).
type textSlot struct{ tag, id uint32 }

const polyBase = 0x100000001b3

// polyPrefixes appends the polynomial hash of every prefix of w, w[:0]
// through w, to dst. The hash of w[k:] is then dst[len(w)] minus
// dst[k]·polyBase^(len(w)-k).
func polyPrefixes(dst []uint64, w string) []uint64 {
	h := uint64(0)
	dst = append(dst, 0)
	for i := 0; i < len(w); i++ {
		h = h*polyBase + uint64(w[i]) + 1
		dst = append(dst, h)
	}
	return dst
}

// mixText finishes the polynomial hash h of a text of n bytes.
func mixText(h uint64, n int) uint64 {
	h ^= uint64(n) * 0x9E3779B97F4A7C15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// newTextSet indexes tokens, whose texts are distinct.
func newTextSet(tokens []string) *textSet {
	size := 16
	for size < 2*len(tokens) {
		size *= 2
	}
	s := &textSet{tokens: tokens, slots: make([]textSlot, size)}
	mask := uint64(size - 1)
	maxLen := 0
	var pre []uint64
	for id, w := range tokens {
		maxLen = max(maxLen, len(w))
		pre = polyPrefixes(pre[:0], w)
		h := mixText(pre[len(w)], len(w))
		i := h & mask
		for s.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = textSlot{uint32(h >> 32), uint32(id) + 1}
	}
	s.pow = make([]uint64, maxLen+1)
	s.pow[0] = 1
	for i := 1; i <= maxLen; i++ {
		s.pow[i] = s.pow[i-1] * polyBase
	}
	return s
}

// get returns the id of the token w, whose hash is h, or -1.
func (s *textSet) get(w string, h uint64) int32 {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := s.slots[i]
		if sl.id == 0 {
			return -1
		}
		if sl.tag == uint32(h>>32) && s.tokens[sl.id-1] == w {
			return int32(sl.id - 1)
		}
	}
}

// spmRanks turns scores into ranks: 0 for the highest score, equal scores
// share a rank, so that "lower rank first" is llama.cpp's "higher score
// first" and ties still go to the leftmost pair. A NaN score (which
// llama.cpp's comparisons leave unordered) ranks after all others, each on
// its own. The ids are sorted as integers, score and id packed in one key,
// which is several times faster than sorting them with a comparison
// function.
func spmRanks(scores []float32) []int32 {
	keys := make([]uint64, len(scores))
	for id, s := range scores {
		keys[id] = uint64(^scoreKey(s))<<32 | uint64(id)
	}
	slices.Sort(keys)
	rank := make([]int32, len(scores))
	r := int32(0)
	for k, key := range keys {
		id := int32(uint32(key))
		if k > 0 && scores[id] != scores[int32(uint32(keys[k-1]))] {
			r++
		}
		rank[id] = r
	}
	return rank
}

// scoreKey maps a score to an integer in the scores' order, NaN below
// every number; -0 and +0 get neighbouring keys.
func scoreKey(s float32) uint32 {
	if math.IsNaN(float64(s)) {
		return 0
	}
	b := math.Float32bits(s)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

// appendEscaped appends text with every space replaced by "▁" and, when
// prefix is set, one more "▁" in front (llama.cpp's add_space_prefix).
func appendEscaped(buf []byte, text string, prefix bool) []byte {
	if prefix {
		buf = append(buf, "\u2581"...)
	}
	for {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return append(buf, text...)
		}
		buf = append(append(buf, text[:i]...), "\u2581"...)
		text = text[i+1:]
	}
}

// encodeSPM tokenizes one text fragment. Where the vocabulary allows it
// (spmModel.cuts), no merge can cross the start of a "▁" run or the place
// after a line break, so the text is merged one word at a time between such
// places. That gives the tokens of merging it whole, llama.cpp's way (each
// word's merges happen in the same order), and lets repeated words come from
// the cache.
//
// The words are found in the text as it is, a space counting as a "▁": in
// valid UTF-8 that cuts where the escaped text would be cut. Only the words
// the cache lacks are escaped. Invalid UTF-8 is escaped first, because
// SentencePiece cuts characters by their first byte and a broken sequence
// before a space takes bytes of its "▁".
func (s *session) encodeSPM(frag string, prefix bool, out []int32) []int32 {
	m := s.t.spmModel()
	if m.cuts == 0 {
		s.word = appendEscaped(s.word[:0], frag, prefix)
		return s.mergeSPM(s.word, out)
	}
	text, valid := frag, utf8.ValidString(frag)
	if !valid {
		text = string(appendEscaped(s.word[:0], frag, false))
	}
	start, prevSpace, prevNL := 0, false, false
	for off := 0; off < len(text); {
		n := nextChar(text, off)
		c := text[off]
		space := c == ' ' || (n == 3 && c == 0xE2 && text[off+1] == 0x96 && text[off+2] == 0x81)
		nl := c == '\n'
		if off > start && ((m.cuts&cutSpace != 0 && space && !prevSpace) ||
			(m.cuts&cutNewline != 0 && prevNL && !nl && c != '\r')) {
			out = s.spmWord(text[start:off], prefix && start == 0, out)
			start = off
		}
		prevSpace, prevNL = space, nl
		off += n
		if valid && !space && !nl {
			// The characters up to the next space, "▁" or line break cut
			// nothing and leave prevSpace and prevNL false. In valid UTF-8
			// these bytes never occur inside a character, so the scan can
			// skip bytes rather than step through characters.
			for off < len(text) && !spmStop[text[off]] {
				off++
			}
		}
	}
	return s.spmWord(text[start:], prefix && start == 0, out)
}

// spmStop marks the bytes encodeSPM stops at: a space, the first byte of
// "▁" and a line break.
var spmStop = [256]bool{' ': true, 0xE2: true, '\n': true}

// spmWord merges one word (with the leading "▁" of add_space_prefix when
// prefix is set), through the cache. The cache maps a word to the tokens of
// its escaped form, so a word and its escaped form share the same entry
// meaning.
func (s *session) spmWord(word string, prefix bool, out []int32) []int32 {
	key := word
	if prefix {
		key = "\u2581" + word
	}
	if out, ok := s.cache.appendIDs(out, key); ok {
		return out
	}
	s.word = appendEscaped(s.word[:0], key, false)
	n := len(out)
	out = s.mergeSPM(s.word, out)
	s.cache.put(key, out[n:])
	return out
}

// mergeSPM runs the merge loop over escaped text and appends its tokens.
func (s *session) mergeSPM(text []byte, out []int32) []int32 {
	for s.maxWord > 0 && len(text) > s.maxWord {
		n := charStart(text, s.maxWord)
		out = s.mergeSPMWith(text[:n], out, true)
		text = text[n:]
	}
	return s.mergeSPMWith(text, out, len(text) > smallWord)
}

// mergeSPMWith is mergeSPM with the choice of a heap (long texts) or a
// linear scan (short ones); both give the same merges.
func (s *session) mergeSPMWith(text []byte, out []int32, useHeap bool) []int32 {
	t := s.t
	m := t.spmModel()
	syms := s.syms[:0]
	for off := 0; off < len(text); {
		n := nextChar(text, off)
		sym := int32(-1)
		if c := text[off]; c < 0x80 {
			sym = m.ascii[c]
		} else if id, ok := m.chars[string(text[off:off+n])]; ok {
			sym = id
		}
		syms = append(syms, mergeSym{sym: sym, start: int32(off)})
		off += n
	}
	s.mg.link(syms)
	s.mg.merge(syms, useHeap)
	s.syms = syms
	// llama.cpp's resegment looks a symbol that is not a token up in its
	// rev_merge map, but that map only holds texts that are tokens, so such
	// a symbol always falls back to its bytes.
	for i := int32(0); i >= 0 && int(i) < len(syms); i = syms[i].next {
		if sym := syms[i].sym; sym >= 0 && int(sym) < len(t.tokens) {
			out = append(out, sym)
			continue
		}
		for j := int(syms[i].start); j < symEnd(syms, i, len(text)); j++ {
			// A vocabulary with neither <0xXX> nor the one-byte token makes
			// llama.cpp throw; the unknown token stands in for it here.
			if id := t.byteTok[text[j]]; id >= 0 {
				out = append(out, id)
			} else if t.valid(t.unk) {
				out = append(out, t.unk)
			}
		}
	}
	return out
}
