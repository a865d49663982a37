package vocabselect

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// wordCache maps words (pre-tokenized BPE words, SentencePiece words,
// WordPiece words) to their token ids. Keys and ids live in two arenas and
// the open-addressing table holds only offsets and a hash, so that adding a
// word allocates nothing once the arenas have grown, the garbage collector
// has no pointers to follow, and a lookup is one hash, a short linear probe
// over a flat array and one comparison. A map[string][]int32 made every
// entry two heap objects and cost several times more per lookup on
// multi-MB texts.
type wordCache struct {
	seed  maphash.Seed
	slots []cacheSlot // a power of two long; keyLen == 0 marks a free slot
	keys  []byte
	ids   []int32
	n     int
}

type cacheSlot struct {
	hash   uint32 // high half of the word's hash, checked before the bytes
	keyOff uint32
	idOff  uint32
	keyLen uint16
	idLen  uint16
}

// Bounds of one word cache. Words past maxCachedWord bytes (long runs of
// CJK text, say) rarely repeat and are merged every time; when the table
// holds maxCacheWords words or the arenas pass maxCacheArena bytes it is
// emptied and refills with the words in use.
const (
	minCacheSlots = 1 << 10
	maxCacheWords = 1 << 17
	maxCacheArena = 16 << 20
	maxCachedWord = 1 << 10
)

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed(), slots: make([]cacheSlot, minCacheSlots)}
}

// get returns the ids of word, or false. The slice aliases the arena: it is
// valid until the next put.
func (c *wordCache) get(word string) ([]int32, bool) {
	if len(word) == 0 || len(word) > maxCachedWord {
		return nil, false
	}
	h := maphash.String(c.seed, word)
	mask := uint64(len(c.slots) - 1)
	hi := uint32(h >> 32)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.keyLen == 0 {
			return nil, false
		}
		if s.hash == hi && int(s.keyLen) == len(word) && string(c.keys[s.keyOff:s.keyOff+uint32(s.keyLen)]) == word {
			return c.ids[s.idOff : s.idOff+uint32(s.idLen)], true
		}
	}
}

// put records the ids of a word that get did not find.
func (c *wordCache) put(word string, ids []int32) {
	if len(word) == 0 || len(word) > maxCachedWord || len(ids) > 1<<16-1 {
		return
	}
	if c.n >= maxCacheWords || len(c.keys)+len(word) > maxCacheArena || len(c.ids)+len(ids) > maxCacheArena/4 {
		c.reset()
	}
	if 2*(c.n+1) > len(c.slots) {
		c.grow()
	}
	h := maphash.String(c.seed, word)
	mask := uint64(len(c.slots) - 1)
	i := h & mask
	for c.slots[i].keyLen != 0 {
		i = (i + 1) & mask
	}
	c.slots[i] = cacheSlot{
		hash:   uint32(h >> 32),
		keyOff: uint32(len(c.keys)), keyLen: uint16(len(word)),
		idOff: uint32(len(c.ids)), idLen: uint16(len(ids)),
	}
	c.keys = append(c.keys, word...)
	c.ids = append(c.ids, ids...)
	c.n++
}

// grow doubles the table, reinserting every word by its hash.
func (c *wordCache) grow() {
	old := c.slots
	c.slots = make([]cacheSlot, 2*len(old))
	mask := uint64(len(c.slots) - 1)
	for _, s := range old {
		if s.keyLen == 0 {
			continue
		}
		h := maphash.String(c.seed, string(c.keys[s.keyOff:s.keyOff+uint32(s.keyLen)]))
		i := h & mask
		for c.slots[i].keyLen != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = s
	}
}

// reset empties the cache, keeping its memory.
func (c *wordCache) reset() {
	clear(c.slots)
	c.keys, c.ids, c.n = c.keys[:0], c.ids[:0], 0
}

// pairTable maps a pair of symbol ids to a merge: its rank (lower merges
// first) and the symbol it gives. The pairs are stored by left symbol, each
// row sorted by right symbol (compressed sparse rows): the lookups of a text
// come in runs with the same left symbol (the bytes that start a character,
// a frequent character), which then read one cache line, where one hash
// table of a large vocabulary spans megabytes and sent most lookups to
// memory. Rows longer than a cache line (a leading space, a common letter,
// the first byte of a script) are found through a hash table instead of a
// binary search, whose chain of dependent loads cost more than a probe.
type pairTable struct {
	off   []int32 // row of left symbol l: right[off[l]:off[l+1]]
	right []int32
	val   []uint64 // rank<<32 | result
	big   []pairEnt
	shift uint8
}

// pairEnt is one pair of a long row in pairTable.big.
type pairEnt struct {
	key uint64 // left<<32 | right, emptyPair when free
	val uint64
}

// emptyPair marks a free entry: no symbol id has all bits set.
const emptyPair = ^uint64(0)

// shortRow is the longest row scanned in place: 16 ids fill a cache line.
const shortRow = 16

// pairBuilder collects merges for a pairTable.
type pairBuilder []pairMerge

type pairMerge struct{ l, r, rank, res int32 }

func (b *pairBuilder) add(l, r, rank, res int32) {
	*b = append(*b, pairMerge{l, r, rank, res})
}

// build makes the table over symbol ids below nsym. Where a pair was added
// twice the first one wins, as with llama.cpp's emplace.
func (b pairBuilder) build(nsym int) *pairTable {
	slices.SortStableFunc(b, func(x, y pairMerge) int {
		return cmp.Or(cmp.Compare(x.l, y.l), cmp.Compare(x.r, y.r))
	})
	p := &pairTable{off: make([]int32, nsym+1)}
	for i, m := range b {
		if i > 0 && m.l == b[i-1].l && m.r == b[i-1].r {
			continue
		}
		p.off[m.l+1]++
		p.right = append(p.right, m.r)
		p.val = append(p.val, uint64(uint32(m.rank))<<32|uint64(uint32(m.res)))
	}
	long := 0
	for l := 1; l <= nsym; l++ {
		if p.off[l] > shortRow {
			long += int(p.off[l])
		}
		p.off[l] += p.off[l-1]
	}
	bits := uint8(4)
	for 1<<bits < 2*long {
		bits++
	}
	p.big, p.shift = make([]pairEnt, 1<<bits), 64-bits
	for i := range p.big {
		p.big[i].key = emptyPair
	}
	mask := uint64(len(p.big) - 1)
	for l := 0; l < nsym; l++ {
		lo, hi := p.off[l], p.off[l+1]
		if hi-lo <= shortRow {
			continue
		}
		for k := lo; k < hi; k++ {
			key := uint64(l)<<32 | uint64(p.right[k])
			i := p.slot(key)
			for p.big[i].key != emptyPair {
				i = (i + 1) & mask
			}
			p.big[i] = pairEnt{key, p.val[k]}
		}
	}
	return p
}

func (p *pairTable) slot(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> p.shift }

// get returns the rank and result of merging l and r, noMerge if they do
// not merge.
func (p *pairTable) get(l, r int32) (rank, res int32) {
	if l < 0 || r < 0 || int(l) >= len(p.off)-1 {
		return noMerge, 0
	}
	lo, hi := int(p.off[l]), int(p.off[l+1])
	if hi-lo <= shortRow {
		for k := lo; k < hi; k++ {
			if p.right[k] == r {
				v := p.val[k]
				return int32(v >> 32), int32(uint32(v))
			}
		}
		return noMerge, 0
	}
	key := uint64(l)<<32 | uint64(r)
	mask := uint64(len(p.big) - 1)
	for i := p.slot(key); ; i = (i + 1) & mask {
		e := &p.big[i]
		if e.key == key {
			return int32(e.val >> 32), int32(uint32(e.val))
		}
		if e.key == emptyPair {
			return noMerge, 0
		}
	}
}
