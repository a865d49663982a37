package vocabselect

// The merge loop shared by byte-level BPE and SentencePiece. Both start a
// word as a list of symbols and repeatedly merge the adjacent pair with the
// best rank, leftmost among equals, until no pair merges: llama.cpp's
// priority queue of bigrams over a linked list of symbols. Here every symbol
// is an integer id and a pair's merge comes from a pairTable, so the loop
// compares integers where llama.cpp builds and looks up strings.

// mergeSym is one symbol of a word being merged.
type mergeSym struct {
	sym   int32 // symbol id, -1 when its text is in no merge
	start int32 // byte offset of its text in the word
	rank  int32 // rank of merging with the next symbol, noMerge if none
	res   int32 // the symbol that merge gives
	prev  int32
	next  int32 // -1 for the last symbol, deadSym once merged into its left
}

const (
	noMerge = int32(1<<31 - 1)
	deadSym = int32(-2)
)

// smallWord is the number of symbols up to which a linear scan for the best
// pair beats a heap.
const smallWord = 16

// merger runs the merge loop of one session over one vocabulary's pairs.
type merger struct {
	pairs *pairTable
	heap  []heapItem
}

// link sets prev, next and the rank of every pair of syms, whose sym and
// start are set.
func (m *merger) link(syms []mergeSym) {
	n := len(syms)
	for i := range syms {
		sy := &syms[i]
		sy.prev, sy.next, sy.rank = int32(i-1), int32(i+1), noMerge
		if i+1 < n {
			sy.rank, sy.res = m.pairs.get(sy.sym, syms[i+1].sym)
		}
	}
	if n > 0 {
		syms[n-1].next = -1
	}
}

// merge runs the merge loop over linked syms, with a heap (long words) or a
// linear scan (short ones): both give the same merges.
func (m *merger) merge(syms []mergeSym, useHeap bool) {
	switch {
	case len(syms) < 2:
	case useHeap:
		m.mergeHeap(syms)
	default:
		m.mergeScan(syms)
	}
}

// relink recomputes the merge of symbol i with its next one.
func (m *merger) relink(syms []mergeSym, i int32) {
	if i < 0 {
		return
	}
	sy := &syms[i]
	sy.rank = noMerge
	if nx := sy.next; nx >= 0 {
		sy.rank, sy.res = m.pairs.get(sy.sym, syms[nx].sym)
	}
}

// apply merges symbol i with its next one.
func (m *merger) apply(syms []mergeSym, i int32) {
	sy := &syms[i]
	nx := sy.next
	sy.sym = sy.res
	sy.next = syms[nx].next
	if sy.next >= 0 {
		syms[sy.next].prev = i
	}
	syms[nx].next = deadSym
	m.relink(syms, sy.prev)
	m.relink(syms, i)
}

func (m *merger) mergeScan(syms []mergeSym) {
	for {
		best, bestRank := int32(-1), noMerge
		for i := int32(0); i >= 0; i = syms[i].next {
			if syms[i].rank < bestRank {
				best, bestRank = i, syms[i].rank
			}
		}
		if best < 0 {
			return
		}
		m.apply(syms, best)
	}
}

// heapItem is a candidate merge; stale ones are skipped when popped. Its
// key is rank<<32 | left, so that one comparison orders by rank, then
// leftmost.
type heapItem struct {
	key uint64
	sym int32
}

func (it heapItem) rank() int32 { return int32(it.key >> 32) }
func (it heapItem) left() int32 { return int32(uint32(it.key)) }

func (m *merger) mergeHeap(syms []mergeSym) {
	h := m.heap[:0]
	push := func(i int32) {
		if i >= 0 && syms[i].rank != noMerge {
			h = heapPush(h, heapItem{uint64(syms[i].rank)<<32 | uint64(i), syms[i].sym})
		}
	}
	for i := range syms {
		push(int32(i))
	}
	for len(h) > 0 {
		var it heapItem
		it, h = heapPop(h)
		left := it.left()
		sy := &syms[left]
		// Valid only if the left symbol is alive and unchanged and still has
		// a merge of the same rank with its neighbour. Where ranks are not
		// unique (SentencePiece scores), a stale item of the same rank and
		// left symbol stands for the current pair, whose item has the same
		// place in the heap: the merge applied is the current one either way.
		if sy.next == deadSym || sy.sym != it.sym || sy.rank != it.rank() {
			continue
		}
		m.apply(syms, left)
		push(sy.prev)
		push(left)
	}
	m.heap = h
}

// heapLess orders candidate merges: lower rank first, then leftmost.
func heapLess(a, b heapItem) bool { return a.key < b.key }

// heapPush and heapPop keep h a binary heap whose first element pops first.
func heapPush(h []heapItem, it heapItem) []heapItem {
	h = append(h, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !heapLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []heapItem) (heapItem, []heapItem) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	siftDown(h, 0)
	return top, h
}

// siftDown moves h[i] down to its place below.
func siftDown(h []heapItem, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && heapLess(h[r], h[l]) {
			c = r
		}
		if !heapLess(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// symEnd returns where the text of alive symbol i ends in a word of n bytes.
func symEnd(syms []mergeSym, i int32, n int) int {
	if nx := syms[i].next; nx >= 0 {
		return int(syms[nx].start)
	}
	return n
}
