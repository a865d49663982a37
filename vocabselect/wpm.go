package vocabselect

import (
	"math/bits"
	"strings"
)

// WordPiece tokenization (llm_tokenizer_wpm_session), as llama.cpp runs it on
// converted BERT vocabularies: word-initial pieces carry a "▁" prefix and
// continuation pieces none (the converter rewrote "##x" to "x").

// isChineseCpt is the CJK test of BERT's BasicTokenizer, with the range
// llama.cpp copied from Hugging Face's Rust code.
func isChineseCpt(c rune) bool {
	return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
		(c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
		(c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
		(c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F)
}

// wpmWords is the BERT normalizer and pre-tokenizer: optional NFD and accent
// stripping, lowercasing, control characters dropped, whitespace splitting
// and punctuation, ASCII symbols and CJK characters as words of their own.
// It appends the end of each word to ends and returns the words' bytes.
func (s *session) wpmWords(frag string) ([]byte, []int) {
	t := s.t
	buf := s.word[:0]
	ends := s.ends[:0]
	finish := func() {
		if len(ends) == 0 || ends[len(ends)-1] != len(buf) {
			ends = append(ends, len(buf))
		}
	}
	for i := 0; i < len(frag); {
		c, n := decodeCpt(frag, i)
		i += n
		if t.stripAccent {
			c = nfdCpt(c)
		}
		f := cptFlags(c)
		if f&flagWhitespace != 0 {
			finish()
			continue
		}
		if c == 0 || c == 0xFFFD || f&flagControl != 0 {
			continue
		}
		if t.stripAccent && f&flagMark != 0 {
			continue
		}
		lc := c
		if t.lowercase {
			lc = lowerCpt(c)
		}
		if f&flagPunct != 0 || (c < 0x7F && f&flagSymbol != 0) || isChineseCpt(c) {
			finish()
			buf = appendCpt(buf, lc)
			finish()
			continue
		}
		buf = appendCpt(buf, lc)
	}
	finish()
	s.word, s.ends = buf, ends
	return buf, ends
}

// encodeWPM tokenizes one fragment. The text is taken in chunks between
// ASCII whitespace: normalization leaves ASCII as it is and splits words at
// whitespace, so a chunk always gives the same tokens, which the cache then
// keeps (most chunks are a word, perhaps with punctuation).
func (s *session) encodeWPM(frag string, out []int32) []int32 {
	for i := 0; i < len(frag); {
		if isCSpace(frag[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(frag) && !isCSpace(frag[j]) {
			j++
		}
		chunk := frag[i:j]
		i = j
		var hit bool
		if out, hit = s.cache.appendIDs(out, chunk); hit {
			continue
		}
		n := len(out)
		out = s.wpmChunk(chunk, out)
		s.cache.put(chunk, out[n:])
	}
	return out
}

// wpmChunk tokenizes a piece of text: each word, prefixed with "▁", is cut
// into the longest tokens from the left; a word with a part no token covers
// becomes the unknown token.
func (s *session) wpmChunk(chunk string, out []int32) []int32 {
	t := s.t
	buf, ends := s.wpmWords(chunk)
	a := 0
	for _, b := range ends {
		word := buf[a:b]
		a = b
		if len(word) == 0 {
			continue
		}
		w := append(append(s.enc[:0], "\u2581"...), word...)
		s.enc = w
		start := len(out)
		for i := 0; i < len(w); {
			id, end := t.wpmLongest(w, i)
			if id < 0 {
				out = out[:start]
				break
			}
			out = append(out, id)
			i = end
		}
		if len(out) == start && t.valid(t.unk) {
			out = append(out, t.unk)
		}
	}
	return out
}

// wpmLongest returns the longest token that w has at i and where it ends,
// or -1. Only the lengths wpmLens allows for the first three bytes are
// looked up, longest first: llama.cpp tries every length down from the
// longest token's, which on text the vocabulary does not cover (Cyrillic in
// an English vocabulary) meant some twenty lookups per character. A word's
// start is its "▁", which every word-initial token shares, so there the
// three bytes after the "▁" choose the lengths (wpmSpaceLens): a CJK
// character, a word of its own, then costs one lookup instead of one per
// length of a word-initial token.
func (t *Tokenizer) wpmLongest(w []byte, i int) (int32, int) {
	rest := min(len(w)-i, t.maxLen)
	lens, skip := t.wpmLens, 0
	if rest >= 6 && w[i] == 0xE2 && w[i+1] == 0x96 && w[i+2] == 0x81 {
		lens, skip = t.wpmSpaceLens, 3
	}
	if rest >= skip+3 {
		mask := lens[prefixHash(w[i+skip], w[i+skip+1], w[i+skip+2])]
		for mask != 0 {
			l := 63 - bits.LeadingZeros64(mask)
			mask &^= 1 << l
			lo, hi := l, l
			if l == 63 {
				hi = rest // bit 63 stands for every length from 63 on
			}
			for n := min(hi, rest); n >= lo; n-- {
				if id, ok := t.toID[string(w[i:i+n])]; ok {
					return id, i + n
				}
			}
		}
	}
	// The lengths the masks leave out, where a token has them: "▁" and one
	// or two bytes, "▁" alone, one or two bytes. A character no token
	// covers (the unknown token's case) then costs no lookup.
	if skip == 3 {
		m := t.wpmShort[w[i+3]]
		for n := 5; n >= 4; n-- {
			if m&(1<<n) != 0 {
				if id, ok := t.toID[string(w[i:i+n])]; ok {
					return id, i + n
				}
			}
		}
		if t.wpmSpace >= 0 {
			return t.wpmSpace, i + 3
		}
	}
	m := t.wpmShort[w[i]]
	for n := min(rest, 2); n >= 1; n-- {
		if m&(1<<n) != 0 {
			if id, ok := t.toID[string(w[i:i+n])]; ok {
				return id, i + n
			}
		}
	}
	return -1, i
}

// prefixHash buckets three bytes of a token for wpmLens and wpmSpaceLens.
func prefixHash(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 16
}

// buildWPMLens sets, for every token of three bytes or more, the bit of its
// length (63 for 63 and more) in the mask of its first three bytes' bucket,
// and for every token of "▁" and three bytes or more the same bit in
// wpmSpaceLens, in the bucket of the three bytes after the "▁".
// wpmShort and wpmSpace note the shorter tokens.
func (t *Tokenizer) buildWPMLens() {
	t.wpmLens = make([]uint64, 1<<16)
	t.wpmSpaceLens = make([]uint64, 1<<16)
	t.wpmSpace = -1
	for id, w := range t.tokens {
		switch {
		case len(w) == 3 && w == "\u2581":
			t.wpmSpace = int32(id)
		case len(w) == 4 || len(w) == 5:
			if strings.HasPrefix(w, "\u2581") {
				t.wpmShort[w[3]] |= 1 << len(w)
			}
		case len(w) == 1 || len(w) == 2:
			t.wpmShort[w[0]] |= 1 << len(w)
		}
		if len(w) >= 3 {
			t.wpmLens[prefixHash(w[0], w[1], w[2])] |= 1 << min(len(w), 63)
		}
		if len(w) >= 6 && strings.HasPrefix(w, "\u2581") {
			t.wpmSpaceLens[prefixHash(w[3], w[4], w[5])] |= 1 << min(len(w), 63)
		}
	}
}
