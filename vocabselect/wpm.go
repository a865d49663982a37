package vocabselect

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

// encodeWPM tokenizes one fragment: each word, prefixed with "▁", is cut
// into the longest tokens from the left; a word with a part no token covers
// becomes the unknown token.
func (s *session) encodeWPM(frag string, out []int32) []int32 {
	t := s.t
	buf, ends := s.wpmWords(frag)
	a := 0
	for _, b := range ends {
		word := buf[a:b]
		a = b
		if len(word) == 0 {
			continue
		}
		w := append(append(s.enc[:0], "\u2581"...), word...)
		s.enc = w
		n := len(w)
		start := len(out)
		for i := 0; i < n; i++ {
			match := false
			for j := min(n, i+t.maxLen+1); j > i; j-- {
				if id, ok := t.toID[string(w[i:j])]; ok {
					out = append(out, id)
					match = true
					i = j - 1
					break
				}
			}
			if !match {
				out = out[:start]
				break
			}
		}
		if len(out) == start && t.valid(t.unk) {
			out = append(out, t.unk)
		}
	}
	return out
}
