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
	// pairs maps left<<32|right to rank<<32|merged for every merge. Where a
	// pair appears twice the first rank wins, as with llama.cpp's emplace.
	pairs map[uint64]uint64
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
	m := &bpeModel{
		strs:  append([]string(nil), t.tokens...),
		extra: map[string]int32{},
		pairs: make(map[uint64]uint64, len(merges)),
	}
	for rank, w := range merges {
		// llama.cpp splits at the first space after the first byte, so a
		// merge whose left side is a space still parses.
		var first, second string
		if len(w) > 1 {
			if i := strings.IndexByte(w[1:], ' '); i >= 0 {
				first, second = w[:i+1], w[i+2:]
			}
		}
		l, r, res := m.intern(t, first), m.intern(t, second), m.intern(t, first+second)
		key := uint64(uint32(l))<<32 | uint64(uint32(r))
		if _, dup := m.pairs[key]; !dup {
			m.pairs[key] = uint64(rank)<<32 | uint64(uint32(res))
		}
	}
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

// merge returns the rank and result of merging symbols l and r.
func (m *bpeModel) merge(l, r int32) (rank int32, res int32, ok bool) {
	if l < 0 || r < 0 {
		return 0, 0, false
	}
	v, ok := m.pairs[uint64(uint32(l))<<32|uint64(uint32(r))]
	if !ok {
		return 0, 0, false
	}
	return int32(v >> 32), int32(uint32(v)), true
}

// bpeSym is one symbol of a word being merged.
type bpeSym struct {
	sym  int32 // symbol id, -1 for a byte whose character is unknown
	b    byte  // the byte, for sym == -1
	rank int32 // rank of merging with the next symbol, noMerge if none
	res  int32
	prev int32
	next int32
}

const noMerge = int32(1<<31 - 1)

// smallWord is the length up to which a linear scan for the best pair beats
// a heap.
const smallWord = 48

// mergeWord runs llama_tokenizer_bpe_session's merge loop over one word given
// as raw bytes (each byte starts as the symbol of its GPT-2 character) and
// appends the resulting token ids. The lowest rank merges first and, among
// equal ranks, the leftmost pair: the order llama.cpp's priority queue gives.
func (s *session) mergeWord(word string, out []int32) []int32 {
	return s.mergeWordWith(word, out, len(word) > smallWord)
}

// mergeWordWith is mergeWord with the choice of a heap (long words) or a
// linear scan (short ones); both give the same merges.
func (s *session) mergeWordWith(word string, out []int32, useHeap bool) []int32 {
	m := s.t.bpe
	if len(word) == 0 {
		return out
	}
	syms := s.syms[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, bpeSym{sym: m.byteSym[word[i]], b: word[i]})
	}
	n := len(syms)
	for i := 0; i < n; i++ {
		syms[i].prev, syms[i].next = int32(i-1), int32(i+1)
		syms[i].rank = noMerge
		if i+1 < n {
			if r, res, ok := m.merge(syms[i].sym, m.byteSym[word[i+1]]); ok {
				syms[i].rank, syms[i].res = r, res
			}
		}
	}
	if n > 0 {
		syms[n-1].next = -1
	}
	if useHeap {
		syms = s.mergeHeap(syms)
	} else {
		syms = s.mergeScan(syms)
	}
	s.syms = syms
	for i := int32(0); i >= 0 && int(i) < len(syms); i = syms[i].next {
		out = s.t.emitSymbol(syms[i], out)
	}
	return out
}

// emitSymbol appends the token of a final symbol, or, as llama.cpp does when
// the symbol's text is not a token, the tokens of its single bytes that are.
func (t *Tokenizer) emitSymbol(sy bpeSym, out []int32) []int32 {
	m := t.bpe
	if sy.sym >= 0 && int(sy.sym) < len(t.tokens) {
		return append(out, sy.sym)
	}
	str := gpt2Bytes[sy.b]
	if sy.sym >= 0 {
		str = m.strs[sy.sym]
	}
	for i := 0; i < len(str); i++ {
		if id := m.oneByte[str[i]]; id >= 0 {
			out = append(out, id)
		}
	}
	return out
}

// relink recomputes the merge of symbol i with its next one.
func (m *bpeModel) relink(syms []bpeSym, i int32) {
	if i < 0 {
		return
	}
	syms[i].rank = noMerge
	if nx := syms[i].next; nx >= 0 {
		if r, res, ok := m.merge(syms[i].sym, syms[nx].sym); ok {
			syms[i].rank, syms[i].res = r, res
		}
	}
}

// apply merges symbol i with its next one.
func (m *bpeModel) apply(syms []bpeSym, i int32) {
	nx := syms[i].next
	syms[i].sym = syms[i].res
	syms[i].next = syms[nx].next
	if syms[nx].next >= 0 {
		syms[syms[nx].next].prev = i
	}
	syms[nx].next = -2 // dead
	m.relink(syms, syms[i].prev)
	m.relink(syms, i)
}

func (s *session) mergeScan(syms []bpeSym) []bpeSym {
	m := s.t.bpe
	for {
		best, bestRank := int32(-1), noMerge
		for i := int32(0); i >= 0; i = syms[i].next {
			if syms[i].rank < bestRank {
				best, bestRank = i, syms[i].rank
			}
		}
		if best < 0 {
			return syms
		}
		m.apply(syms, best)
	}
}

// heapItem is a candidate merge; stale ones are skipped when popped.
type heapItem struct {
	rank, left, sym int32
}

func (s *session) mergeHeap(syms []bpeSym) []bpeSym {
	m := s.t.bpe
	h := s.heap[:0]
	push := func(i int32) {
		if i >= 0 && syms[i].rank != noMerge {
			h = heapPush(h, heapItem{syms[i].rank, i, syms[i].sym}, heapLess)
		}
	}
	for i := range syms {
		push(int32(i))
	}
	for len(h) > 0 {
		var it heapItem
		it, h = heapPop(h, heapLess)
		sy := &syms[it.left]
		// Valid only if the left symbol is alive and unchanged and still has
		// the same merge with its neighbour (llama.cpp's text comparison).
		if sy.next == -2 || sy.sym != it.sym || sy.rank != it.rank {
			continue
		}
		m.apply(syms, it.left)
		push(sy.prev)
		push(it.left)
	}
	s.heap = h
	return syms
}

func heapLess(a, b heapItem) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// heapPush and heapPop keep h a binary heap whose first element is the
// one that pops first (less); both merge loops use them.
func heapPush[T any](h []T, it T, less func(a, b T) bool) []T {
	h = append(h, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop[T any](h []T, less func(a, b T) bool) (T, []T) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			c = r
		}
		if !less(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top, h
}
