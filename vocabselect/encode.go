package vocabselect

import (
	"strings"
)

// fragment is a piece of the input after special tokens are split out: a
// token (id >= 0) or the text s[start:end].
type fragment struct {
	id         int32
	start, end int
}

// session holds the buffers of one Encode call; sessions are pooled so that
// concurrent callers never share one.
type session struct {
	t     *Tokenizer
	frags []fragment
	next  []fragment
	text  cpText
	ends  []int
	tmp   []int
	word  []byte
	enc   []byte
	syms  []mergeSym
	mg    merger     // BPE and SentencePiece
	cache *wordCache // word -> ids, for every vocabulary kind
	// maxWord, when positive, is the longest text merged at once (see
	// streamMaxWord); 0 for one-shot tokenization, which merges any word
	// whole as llama.cpp does.
	maxWord int
	pairs   [1 << 16 / 64]uint64 // byte pairs of the text, see markPairs
}

func (t *Tokenizer) getSession() *session {
	if s, ok := t.sessions.Get().(*session); ok {
		return s
	}
	s := &session{t: t, cache: newWordCache()}
	switch t.kind {
	case kindBPE:
		s.mg.pairs = t.bpe.pairs
	case kindSPM:
		s.mg.pairs = t.spmModel().pairs
	}
	return s
}

// Encode tokenizes text as llama_tokenize does. With addSpecial the model's
// BOS/EOS (and SEP for WordPiece) are added as its add_bos/add_eos flags say.
// With parseSpecial, control and unknown tokens written in the text are
// recognized; user-defined tokens always are.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	// Room for about one token per three bytes, which most texts stay
	// under, so that a long text's tokens are not copied over and over as
	// the slice grows.
	return t.encode(make([]int32, 0, len(text)/3+4), text, addSpecial, parseSpecial, false)
}

// encode is session.encode in a pooled session.
func (t *Tokenizer) encode(out []int32, text string, addSpecial, parseSpecial, continuation bool) []int32 {
	s := t.getSession()
	defer t.sessions.Put(s)
	return s.encode(out, text, addSpecial, parseSpecial, continuation)
}

// encode appends the tokens of text to out, with the model's BOS/EOS when
// addSpecial (see affixes). continuation marks a piece of a longer text:
// SentencePiece then adds no leading space to its start.
func (s *session) encode(out []int32, text string, addSpecial, parseSpecial, continuation bool) []int32 {
	bos, eos := s.t.affixes()
	if addSpecial && bos >= 0 {
		out = append(out, bos)
		continuation = false // a token before the text: SentencePiece's space prefix applies
	}
	out = s.encodeText(out, text, parseSpecial, continuation)
	if addSpecial && eos >= 0 {
		out = append(out, eos)
	}
	return out
}

// affixes returns the tokens llama_tokenize adds around a text with
// add_special, -1 for none: BPE and SentencePiece add BOS and EOS as the
// model's add_bos/add_eos flags say, WordPiece always adds BOS and SEP.
func (t *Tokenizer) affixes() (first, last int32) {
	first, last = -1, -1
	if t.kind == kindWPM {
		return t.bos, t.sep
	}
	if t.addBOS {
		first = t.bos
	}
	if t.addEOS {
		last = t.eos
	}
	return first, last
}

// encodeText appends the tokens of text, without BOS/EOS.
func (s *session) encodeText(out []int32, text string, parseSpecial, continuation bool) []int32 {
	t := s.t
	s.partition(text, parseSpecial)
	if t.kind == kindSPM {
		prevSpecial := !continuation
		for _, f := range s.frags {
			if f.id >= 0 {
				out = append(out, f.id)
				prevSpecial = true
				continue
			}
			for frag := text[f.start:f.end]; frag != ""; {
				n := t.blockEnd(frag)
				out = s.encodeSPM(frag[:n], t.addSpacePrefix && prevSpecial, out)
				frag, prevSpecial = frag[n:], false
			}
		}
		return out
	}
	enc := s.encodeBPE
	if t.kind == kindWPM {
		enc = s.encodeWPM
	}
	for _, f := range s.frags {
		if f.id >= 0 {
			out = append(out, f.id)
			continue
		}
		for frag := text[f.start:f.end]; frag != ""; {
			n := t.blockEnd(frag)
			out = enc(frag[:n], out)
			frag = frag[n:]
		}
	}
	return out
}

// blockSize is the length from which a long text fragment is cut into
// blocks that are tokenized one after the other. The code point buffers of
// a block then stay in the CPU caches along with the word cache, where
// decoding a multi-MB fragment at once streamed tens of MB through them.
const blockSize = 32 << 10

// blockEnd returns the end of the first block of frag: the first place at
// or after blockSize where lineCut allows a cut, or the end of frag. Such a
// cut changes no token (see Count), except in a SentencePiece vocabulary
// with a token that spans a line break, which gets no blocks.
func (t *Tokenizer) blockEnd(frag string) int {
	if t.block <= 0 || len(frag) < 2*t.block || (t.kind == kindSPM && t.spmModel().cuts&cutNewline == 0) {
		return len(frag)
	}
	for i := t.block; i < len(frag); i++ {
		j := strings.IndexByte(frag[i:], '\n')
		if j < 0 {
			break
		}
		i += j
		if lineCut(frag, i) {
			return i + 1
		}
	}
	return len(frag)
}

// partition is tokenizer_st_partition: each special token, longest first,
// is searched in the text fragments left so far and splits them. Without
// parseSpecial only user-defined tokens are split out. lstrip/rstrip tokens
// eat the C whitespace next to them.
func (s *session) partition(text string, parseSpecial bool) {
	t := s.t
	s.frags = s.frags[:0]
	if text == "" {
		return
	}
	s.frags = append(s.frags, fragment{id: -1, start: 0, end: len(text)})
	pairs := len(t.special) > manySpecials
	if pairs {
		s.markPairs(text)
	}
	for _, id := range t.special {
		attr := t.attrs[id]
		if !parseSpecial && attr&(attrControl|attrUnknown) != 0 {
			continue
		}
		tok := t.tokens[id]
		if (pairs && !s.hasPairs(tok)) || !strings.Contains(text, tok) {
			continue
		}
		next := s.next[:0]
		for _, f := range s.frags {
			if f.id >= 0 {
				next = append(next, f)
				continue
			}
			start, end := f.start, f.end
			for {
				i := strings.Index(text[start:end], tok)
				if i < 0 {
					next = append(next, fragment{id: -1, start: start, end: end})
					break
				}
				m := start + i
				left := m
				if attr&attrLstrip != 0 {
					for left > start && isCSpace(text[left-1]) {
						left--
					}
				}
				if left > start {
					next = append(next, fragment{id: -1, start: start, end: left})
				}
				next = append(next, fragment{id: id, start: m, end: m + len(tok)})
				start = m + len(tok)
				if attr&attrRstrip != 0 {
					for start < end && isCSpace(text[start]) {
						start++
					}
				}
				if start >= end {
					break
				}
			}
		}
		s.next, s.frags = s.frags, next
	}
}

// manySpecials is the number of special tokens from which partition first
// notes which byte pairs the text has. Most texts contain none of the
// special tokens and one search of the text rules a token out, but some
// vocabularies have thousands of them (DeepSeek's placeholders), which made
// thousands of searches of every text.
const manySpecials = 8

// markPairs records in s.pairs every pair of adjacent bytes of text.
func (s *session) markPairs(text string) {
	clear(s.pairs[:])
	for i := 1; i < len(text); i++ {
		p := uint16(text[i-1])<<8 | uint16(text[i])
		s.pairs[p>>6] |= 1 << (p & 63)
	}
}

// hasPairs reports whether every pair of adjacent bytes of tok is in the
// text markPairs saw: false rules tok out.
func (s *session) hasPairs(tok string) bool {
	for i := 1; i < len(tok); i++ {
		p := uint16(tok[i-1])<<8 | uint16(tok[i])
		if s.pairs[p>>6]&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

// encodeBPE pre-tokenizes one fragment and merges each word.
func (s *session) encodeBPE(frag string, out []int32) []int32 {
	t := s.t
	s.text.decode(frag)
	s.ends, s.tmp = t.preTok.split(&s.text, s.ends, s.tmp)
	a, off, exact := 0, s.text.off, s.text.exact
	for _, b := range s.ends {
		var word string
		if exact {
			word = frag[off[a]:off[b]]
		} else {
			s.word = s.word[:0]
			for _, c := range s.text.cps[a:b] {
				s.word = appendCpt(s.word, c)
			}
			word = string(s.word)
		}
		a = b
		out = s.bpeWord(word, out)
	}
	return out
}

// bpeWord returns the tokens of one pre-tokenized word, from the cache when
// it was seen before.
func (s *session) bpeWord(word string, out []int32) []int32 {
	if out, ok := s.cache.appendIDs(out, word); ok {
		return out
	}
	t := s.t
	n := len(out)
	done := false
	if t.ignoreMerges {
		// llama3-style vocabularies take a whole word that is a token as is.
		enc := s.enc[:0]
		for i := 0; i < len(word); i++ {
			enc = append(enc, gpt2Bytes[word[i]]...)
		}
		s.enc = enc
		if id, ok := t.toID[string(enc)]; ok {
			out = append(out, id)
			done = true
		}
	}
	if !done {
		out = s.mergeWord(word, out)
	}
	s.cache.put(word, out[n:])
	return out
}
