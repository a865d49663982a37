package vocabselect

import "hash/maphash"

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

// pairTable maps a pair of symbol ids (left<<32 | right) to a merge: its
// rank (lower merges first) and the symbol it gives. It is an
// open-addressing table of flat entries built once per vocabulary; the
// merge loops probe it for every adjacent pair of symbols, where Go's map
// cost twice as much per lookup.
type pairTable struct {
	ents  []pairEnt
	shift uint8
}

type pairEnt struct {
	key uint64 // emptyPair when free
	val uint64 // rank<<32 | result symbol
}

// emptyPair marks a free entry: symbol ids are below 1<<31, so no real key
// has all bits set.
const emptyPair = ^uint64(0)

func pairKey(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// newPairTable sizes a table for n pairs at most half full.
func newPairTable(n int) *pairTable {
	bits := uint8(4)
	for 1<<bits < 2*n {
		bits++
	}
	p := &pairTable{ents: make([]pairEnt, 1<<bits), shift: 64 - bits}
	for i := range p.ents {
		p.ents[i].key = emptyPair
	}
	return p
}

func (p *pairTable) slot(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> p.shift }

// add stores a merge unless the pair already has one: where a pair appears
// twice the first rank wins, as with llama.cpp's emplace.
func (p *pairTable) add(l, r, rank, res int32) {
	key := pairKey(l, r)
	mask := uint64(len(p.ents) - 1)
	for i := p.slot(key); ; i = (i + 1) & mask {
		e := &p.ents[i]
		if e.key == key {
			return
		}
		if e.key == emptyPair {
			*e = pairEnt{key: key, val: uint64(uint32(rank))<<32 | uint64(uint32(res))}
			return
		}
	}
}

// get returns the rank and result of merging l and r.
func (p *pairTable) get(l, r int32) (rank, res int32, ok bool) {
	if l < 0 || r < 0 {
		return 0, 0, false
	}
	key := pairKey(l, r)
	mask := uint64(len(p.ents) - 1)
	for i := p.slot(key); ; i = (i + 1) & mask {
		e := p.ents[i]
		if e.key == key {
			return int32(e.val >> 32), int32(uint32(e.val)), true
		}
		if e.key == emptyPair {
			return 0, 0, false
		}
	}
}
