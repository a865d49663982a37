package vocabselect

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// wordCache maps words (pre-tokenized BPE words, SentencePiece words,
// WordPiece chunks) to their token ids. Each entry is stored once, key and
// ids together, in one byte arena, and the open-addressing table holds only
// a hash and an offset per word: adding a word allocates nothing once the
// arena has grown, the garbage collector has nothing to follow, and a hit
// reads one slot and one entry. The caches of multi-MB texts outgrow the CPU
// caches, so what a lookup costs is the cache lines it touches: a
// map[string][]int32 touched four (map slot, key, slice header, ids) and
// made every entry two heap objects.
type wordCache struct {
	seed  uint64
	slots []uint64 // hash>>32 <<32 | entry offset+1; 0 marks a free slot
	data  []byte   // entries: key length, id count (2 bytes each), key, ids (4 bytes each)
	n     int
	// short is a direct-mapped cache in front of the table for words of up
	// to 8 bytes with one or two tokens, the bulk of a text's words ("the",
	// " of", ","): their bytes are the key itself, so a hit costs no hash
	// of the bytes, no probe and no comparison of strings.
	short [shortWords]shortWord
}

const (
	shortBits  = 12
	shortWords = 1 << shortBits
)

type shortWord struct {
	key uint64 // the word's bytes, last byte lowest
	n   uint8  // the word's length, 0 for a free entry
	nid uint8
	ids [2]int32
}

// shortEntry packs a word of up to 8 bytes and returns its entry.
func (c *wordCache) shortEntry(word string) (*shortWord, uint64) {
	var k uint64
	for i := 0; i < len(word); i++ {
		k = k<<8 | uint64(word[i])
	}
	h := (k ^ c.seed) * 0x9E3779B97F4A7C15
	return &c.short[h>>(64-shortBits)], k
}

// remember puts a word of up to 8 bytes with one or two ids in c.short.
func (c *wordCache) remember(word string, ids []int32) {
	if len(word) == 0 || len(word) > 8 || len(ids) == 0 || len(ids) > 2 {
		return
	}
	e, k := c.shortEntry(word)
	*e = shortWord{key: k, n: uint8(len(word)), nid: uint8(len(ids))}
	copy(e.ids[:], ids)
}

// Bounds of one word cache. Words past maxCachedWord bytes (long runs of
// CJK text, a SentencePiece line of Chinese) rarely repeat and are merged
// every time: caching them cost 15% more instructions on a Chinese text
// read once. When the table holds maxCacheWords words or the arena passes
// maxCacheArena bytes it is emptied and refills with the words in use.
const (
	minCacheSlots = 1 << 10
	maxCacheWords = 1 << 17
	maxCacheArena = 32 << 20
	maxCachedWord = 1 << 10
)

func newWordCache() *wordCache {
	// A random seed, so that no fixed set of words collides in every run.
	return &wordCache{seed: 0xcbf29ce484222325 ^ rand.Uint64(), slots: make([]uint64, minCacheSlots)}
}

// entryKey returns the word of the entry at off.
func (c *wordCache) entryKey(off int) []byte {
	e := c.data[off:]
	return e[4 : 4+int(binary.LittleEndian.Uint16(e))]
}

// hash hashes a word: FNV-1a from a per-cache seed, then mixed so that the
// low bits (the slot) and the high bits (kept in the slot) both depend on
// every byte. Words are a few bytes long, where this inlined loop costs a
// fraction of a call to maphash.
func (c *wordCache) hash(word string) uint64 { return fnvHash(c.seed, word) }

// fnvHash is wordCache.hash for a word as a string or as bytes.
func fnvHash[T string | []byte](seed uint64, word T) uint64 {
	h := seed
	for i := 0; i < len(word); i++ {
		h = (h ^ uint64(word[i])) * 0x100000001b3
	}
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// appendIDs appends the ids of word to out and reports whether the cache
// had them.
func (c *wordCache) appendIDs(out []int32, word string) ([]int32, bool) {
	if len(word) == 0 || len(word) > maxCachedWord {
		return out, false
	}
	if len(word) <= 8 {
		if e, k := c.shortEntry(word); e.key == k && int(e.n) == len(word) {
			if e.nid == 1 {
				return append(out, e.ids[0]), true
			}
			return append(out, e.ids[0], e.ids[1]), true
		}
	}
	h := c.hash(word)
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := c.slots[i]
		if sl == 0 {
			return out, false
		}
		if sl>>32 != h>>32 {
			continue
		}
		e := c.data[uint32(sl)-1:]
		head := binary.LittleEndian.Uint32(e)
		kl, il := int(head&0xFFFF), int(head>>16)
		e = e[4:]
		if kl != len(word) || string(e[:kl]) != word {
			continue
		}
		e = e[kl : kl+4*il]
		n := len(out)
		for len(e) >= 4 {
			out = append(out, int32(binary.LittleEndian.Uint32(e)))
			e = e[4:]
		}
		c.remember(word, out[n:])
		return out, true
	}
}

// put records the ids of a word that appendIDs did not find.
func (c *wordCache) put(word string, ids []int32) {
	if len(word) == 0 || len(word) > maxCachedWord || len(ids) > 1<<16-1 {
		return
	}
	size := 4 + len(word) + 4*len(ids)
	if c.n >= maxCacheWords || len(c.data)+size > maxCacheArena {
		c.reset()
	}
	if 2*(c.n+1) > len(c.slots) {
		c.grow()
	}
	off := len(c.data)
	c.data = binary.LittleEndian.AppendUint16(c.data, uint16(len(word)))
	c.data = binary.LittleEndian.AppendUint16(c.data, uint16(len(ids)))
	c.data = append(c.data, word...)
	for _, id := range ids {
		c.data = binary.LittleEndian.AppendUint32(c.data, uint32(id))
	}
	c.insert(c.hash(word), off)
	c.n++
	c.remember(word, ids)
}

// insert puts the entry at off into the table under hash h.
func (c *wordCache) insert(h uint64, off int) {
	mask := uint64(len(c.slots) - 1)
	i := h & mask
	for c.slots[i] != 0 {
		i = (i + 1) & mask
	}
	c.slots[i] = h>>32<<32 | uint64(off+1)
}

// grow doubles the table, reinserting every entry.
func (c *wordCache) grow() {
	old := c.slots
	c.slots = make([]uint64, 2*len(old))
	for _, sl := range old {
		if sl != 0 {
			off := int(uint32(sl)) - 1
			c.insert(fnvHash(c.seed, c.entryKey(off)), off)
		}
	}
}

// reset empties the cache, keeping its memory.
func (c *wordCache) reset() {
	clear(c.slots)
	clear(c.short[:])
	c.data, c.n = c.data[:0], 0
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
// twice the lower rank wins: llama.cpp emplaces BPE merges in rank order,
// so the first one stays. The merges are bucketed by left symbol and only
// the rows are sorted, which is several times faster at load than sorting
// all of them.
func (b pairBuilder) build(nsym int) *pairTable {
	start := make([]int32, nsym+1)
	for _, m := range b {
		start[m.l+1]++
	}
	for l := 1; l <= nsym; l++ {
		start[l] += start[l-1]
	}
	rows := make([]pairMerge, len(b))
	next := slices.Clone(start[:nsym])
	for _, m := range b {
		rows[next[m.l]] = m
		next[m.l]++
	}
	p := &pairTable{off: make([]int32, nsym+1)}
	p.right = make([]int32, 0, len(b))
	p.val = make([]uint64, 0, len(b))
	// Each row is sorted by right symbol, then rank, then the order the
	// merges were added, as integers: right, rank and place in the row
	// packed in one key where they fit, which sorts several times faster
	// than a comparison function.
	maxRank, maxRow := int32(0), int32(0)
	for _, m := range b {
		maxRank = max(maxRank, m.rank)
	}
	for l := 0; l < nsym; l++ {
		maxRow = max(maxRow, start[l+1]-start[l])
	}
	rankBits, idxBits := bits.Len32(uint32(maxRank)), bits.Len32(uint32(maxRow))
	packed := bits.Len32(uint32(nsym))+rankBits+idxBits <= 64
	var keys []uint64
	order := make([]int32, 0, maxRow)
	for l := 0; l < nsym; l++ {
		row := rows[start[l]:start[l+1]]
		order = order[:0]
		if packed {
			keys = keys[:0]
			for i, m := range row {
				keys = append(keys, uint64(m.r)<<(rankBits+idxBits)|uint64(m.rank)<<idxBits|uint64(i))
			}
			slices.Sort(keys)
			for _, k := range keys {
				order = append(order, int32(k&(1<<idxBits-1)))
			}
		} else {
			for i := range row {
				order = append(order, int32(i))
			}
			slices.SortStableFunc(order, func(x, y int32) int {
				return cmp.Or(cmp.Compare(row[x].r, row[y].r), cmp.Compare(row[x].rank, row[y].rank))
			})
		}
		prev := int32(-1)
		for _, i := range order {
			m := row[i]
			if m.r == prev {
				continue
			}
			prev = m.r
			p.off[l+1]++
			p.right = append(p.right, m.r)
			p.val = append(p.val, uint64(uint32(m.rank))<<32|uint64(uint32(m.res)))
		}
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
