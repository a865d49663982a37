package vocabselect

import "strings"

// SentencePiece-style tokenization (llm_tokenizer_spm_session): the text,
// with spaces escaped as "▁", starts as one symbol per UTF-8 character;
// adjacent pairs whose concatenation is a token are merged, highest score
// first (leftmost on ties), until no pair is a token; symbols that are not
// tokens fall back to byte tokens.

type spmSym struct {
	start, n   int32
	prev, next int32
}

type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

type spmState struct {
	syms []spmSym
	heap []spmBigram
	buf  []byte
}

func spmLess(a, b spmBigram) bool { // a pops before b
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

func (st *spmState) push(b spmBigram) { st.heap = heapPush(st.heap, b, spmLess) }

func (st *spmState) pop() spmBigram {
	top, h := heapPop(st.heap, spmLess)
	st.heap = h
	return top
}

// escapeSpaces returns text with every space replaced by "▁" and, when
// prefix is set, one more "▁" in front (llama.cpp's add_space_prefix).
func escapeSpaces(buf []byte, text string, prefix bool) []byte {
	buf = buf[:0]
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

// encodeSPM tokenizes one text fragment. When no token has a "▁" after
// another character (t.spmWords), no merge can cross the start of a "▁" run,
// so the text is merged one such word at a time, which gives the same
// tokens as merging it whole (each word's merges happen in the same order)
// and lets repeated words come from the cache.
func (s *session) encodeSPM(frag string, prefix bool, out []int32) []int32 {
	t := s.t
	st := &s.spm
	st.buf = escapeSpaces(st.buf, frag, prefix)
	text := st.buf
	if !t.spmWords {
		return s.mergeSPM(text, out)
	}
	start, prevSpace := 0, false
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		space := n == 3 && text[off] == 0xE2 && text[off+1] == 0x96 && text[off+2] == 0x81
		if space && !prevSpace && off > start {
			out = s.spmWord(text[start:off], out)
			start = off
		}
		prevSpace = space
		off += n
	}
	return s.spmWord(text[start:], out)
}

// spmWord merges one word, through the cache.
func (s *session) spmWord(word []byte, out []int32) []int32 {
	if ids, ok := s.cache[string(word)]; ok {
		return append(out, ids...)
	}
	n := len(out)
	out = s.mergeSPM(word, out)
	if len(s.cache) >= wordCacheMax {
		clear(s.cache)
	}
	s.cache[string(word)] = append([]int32(nil), out[n:]...)
	return out
}

// mergeSPM runs the merge loop over text and appends its tokens.
func (s *session) mergeSPM(text []byte, out []int32) []int32 {
	t := s.t
	st := &s.spm
	syms := st.syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, spmSym{start: int32(off), n: int32(n), prev: int32(len(syms) - 1), next: int32(len(syms) + 1)})
		off += n
	}
	if len(syms) == 0 {
		return out
	}
	syms[len(syms)-1].next = -1
	st.heap = st.heap[:0]
	try := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		a := syms[l].start
		b := a + syms[l].n + syms[r].n
		id, ok := t.toID[string(text[a:b])]
		if !ok {
			return
		}
		st.push(spmBigram{left: l, right: r, score: t.scores[id], size: b - a})
	}
	for i := 1; i < len(syms); i++ {
		try(int32(i-1), int32(i))
	}
	for len(st.heap) > 0 {
		bg := st.pop()
		l, r := &syms[bg.left], &syms[bg.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != bg.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		try(l.prev, bg.left)
		try(bg.left, l.next)
	}
	st.syms = syms
	// llama.cpp's resegment looks a symbol that is not a token up in its
	// rev_merge map, but that map only holds texts that are tokens, so such
	// a symbol always falls back to its bytes.
	for i := int32(0); i >= 0; i = syms[i].next {
		sy := syms[i]
		piece := text[sy.start : sy.start+sy.n]
		if id, ok := t.toID[string(piece)]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			// A vocabulary with neither <0xXX> nor the one-byte token makes
			// llama.cpp throw; the unknown token stands in for it here.
			if id := t.byteTok[piece[j]]; id >= 0 {
				out = append(out, id)
			} else if t.valid(t.unk) {
				out = append(out, t.unk)
			}
		}
	}
	return out
}
