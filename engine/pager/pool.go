package pager

import (
	"fmt"
	"math"
	"slices"
)

// Stats counts what a pool did.
type Stats struct {
	// Calls is the number of calls (one token's, or one batch's, use of
	// the layer); Accesses the experts they asked for.
	Calls, Accesses int64
	// Hits found their expert resident, Misses had to load it.
	Hits, Misses int64
	// Prefetches is the experts placed by Prefetch; PrefetchHits the hits
	// on such an expert before it was used; PrefetchWasted those evicted
	// before any use.
	Prefetches, PrefetchHits, PrefetchWasted int64
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Calls += o.Calls
	s.Accesses += o.Accesses
	s.Hits += o.Hits
	s.Misses += o.Misses
	s.Prefetches += o.Prefetches
	s.PrefetchHits += o.PrefetchHits
	s.PrefetchWasted += o.PrefetchWasted
}

// HitRate is Hits / Accesses (0 with no accesses).
func (s Stats) HitRate() float64 {
	if s.Accesses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Accesses)
}

// Placement is where Place or Prefetch put one expert.
type Placement struct {
	Expert, Slot int
	// Hit: the expert was resident; nothing needs to be read.
	Hit bool
	// Prefetched: a hit on an expert that a prefetch placed and nothing
	// had used yet (its bytes may still be on their way).
	Prefetched bool
	// Evicted is the expert whose slot it took, or -1.
	Evicted int
}

// Pool is one layer's slots: which expert each holds and the policy's
// state. Its decisions depend only on the calls made to it. It is not safe
// for concurrent use.
type Pool struct {
	policy  Policy
	slot    []int     // expert in each slot, -1 when empty
	where   []int     // slot of each expert, -1 when absent
	last    []uint64  // per slot: the call that last used (or prefetched) it
	pref    []bool    // per slot: placed by a prefetch, not used since
	score   []float64 // per expert: LFU's decayed frequency
	next    []int64   // per expert: Belady's next use (set by the simulator)
	used    []uint64  // per expert: the call that last used it
	pin     []uint64  // per expert: == pinGen while pinned
	pinGen  uint64
	call    uint64
	stats   Stats
	lastEnd uint64 // the last ended call
}

// NewPool returns an empty pool of slots for a layer of experts experts.
func NewPool(experts, slots int, p Policy) (*Pool, error) {
	if experts <= 0 || slots <= 0 {
		return nil, fmt.Errorf("a pool needs experts and slots (got %d experts, %d slots)", experts, slots)
	}
	if p.Kind == LFU && !(p.Decay > 0 && p.Decay <= 1) {
		return nil, fmt.Errorf("LFU decay %g is not in (0, 1]", p.Decay)
	}
	slots = min(slots, experts)
	pl := &Pool{policy: p, slot: make([]int, slots), where: make([]int, experts),
		last: make([]uint64, slots), pref: make([]bool, slots), used: make([]uint64, experts),
		pin: make([]uint64, experts)}
	for i := range pl.slot {
		pl.slot[i] = -1
	}
	for i := range pl.where {
		pl.where[i] = -1
	}
	switch p.Kind {
	case LFU:
		pl.score = make([]float64, experts)
	case Belady:
		pl.next = make([]int64, experts)
	}
	return pl, nil
}

// Slots is the pool's number of slots.
func (p *Pool) Slots() int { return len(p.slot) }

// Experts is the layer's number of experts.
func (p *Pool) Experts() int { return len(p.where) }

// Stats returns the counts so far.
func (p *Pool) Stats() Stats { return p.stats }

// Resident reports whether expert e is in a slot.
func (p *Pool) Resident(e int) bool { return p.where[e] >= 0 }

// SlotOf is the slot holding expert e, or -1.
func (p *Pool) SlotOf(e int) int { return p.where[e] }

// Begin starts a call: one token's (or one batch's) use of the layer.
// LFU scores decay here, once per call as in the seeds' pager.
func (p *Pool) Begin() {
	p.call++
	p.stats.Calls++
	if p.score != nil {
		d := p.policy.Decay
		for e, s := range p.score {
			// float64() keeps the product rounded on its own: no fused
			// multiply-add, so every architecture decays alike.
			p.score[e] = float64(s * d)
		}
	}
}

// End ends the call begun by Begin: its experts become the working set
// that Prefetch never evicts.
func (p *Pool) End() { p.lastEnd = p.call }

// SetNextUse tells a Belady pool when expert e is used next (a position
// in the layer's sequence of accesses; math.MaxInt64: never).
func (p *Pool) SetNextUse(e int, pos int64) {
	if p.next != nil {
		p.next[e] = pos
	}
}

// Place puts the experts of group (distinct, at most Slots of them) into
// slots for the current call, appending one Placement per expert to out,
// in group order. A missing expert takes an empty slot, else the policy's
// victim among the slots whose expert is not in group.
func (p *Pool) Place(group []int, out []Placement) ([]Placement, error) {
	if len(group) > len(p.slot) {
		return out, fmt.Errorf("a group of %d experts does not fit a pool of %d slots", len(group), len(p.slot))
	}
	p.pinGen++
	for _, e := range group {
		if e < 0 || e >= len(p.where) {
			return out, fmt.Errorf("expert %d is outside the layer's %d experts", e, len(p.where))
		}
		if p.pin[e] == p.pinGen {
			return out, fmt.Errorf("expert %d appears twice in a group", e)
		}
		p.pin[e] = p.pinGen
	}
	for _, e := range group {
		pl := Placement{Expert: e, Slot: p.where[e], Evicted: -1}
		p.stats.Accesses++
		if pl.Slot >= 0 {
			pl.Hit = true
			p.stats.Hits++
			if p.pref[pl.Slot] {
				pl.Prefetched = true
				p.stats.PrefetchHits++
			}
		} else {
			p.stats.Misses++
			pl.Slot = p.victim(false)
			pl.Evicted = p.put(pl.Slot, e)
		}
		p.pref[pl.Slot] = false
		p.last[pl.Slot] = p.call
		p.used[e] = p.call
		if p.score != nil {
			p.score[e]++
		}
		out = append(out, pl)
	}
	return out, nil
}

// Prefetch places predicted experts that are not resident, appending their
// placements to out: each goes into an empty slot or evicts the policy's
// victim among the slots whose expert is neither predicted nor used by the
// last ended call (the working set of the token before). With no such
// slot the prediction is dropped: a prefetch never evicts the working set.
func (p *Pool) Prefetch(pred []int, out []Placement) []Placement {
	p.pinGen++
	for _, e := range pred {
		if e >= 0 && e < len(p.where) {
			p.pin[e] = p.pinGen
		}
	}
	for _, e := range pred {
		if e < 0 || e >= len(p.where) || p.where[e] >= 0 {
			continue
		}
		s := p.victim(true)
		if s < 0 {
			break
		}
		pl := Placement{Expert: e, Slot: s, Evicted: p.put(s, e)}
		p.pref[s] = true
		p.last[s] = p.lastEnd
		p.stats.Prefetches++
		out = append(out, pl)
	}
	return out
}

// put places e in slot s and returns the expert it evicted, or -1.
func (p *Pool) put(s, e int) int {
	old := p.slot[s]
	if old >= 0 {
		p.where[old] = -1
		if p.pref[s] {
			p.stats.PrefetchWasted++
		}
	}
	p.slot[s] = e
	p.where[e] = s
	return old
}

// victim picks the slot to fill: the first empty slot, else the policy's
// choice among unpinned slots (for a prefetch also sparing the last
// call's experts); -1 if there is none.
func (p *Pool) victim(prefetch bool) int {
	best := -1
	for s, e := range p.slot {
		if e < 0 {
			return s
		}
		if p.pin[e] == p.pinGen || (prefetch && p.used[e] == p.lastEnd && p.lastEnd != 0) {
			continue
		}
		if best < 0 || p.worse(s, best) {
			best = s
		}
	}
	return best
}

// worse reports whether slot a is a better victim than slot b (ties go to
// the lower slot, which b always is here).
func (p *Pool) worse(a, b int) bool {
	ea, eb := p.slot[a], p.slot[b]
	switch p.policy.Kind {
	case LFU:
		if p.score[ea] != p.score[eb] {
			return p.score[ea] < p.score[eb]
		}
	case Belady:
		return p.next[ea] > p.next[eb]
	}
	return p.last[a] < p.last[b]
}

// never is Belady's next use of an expert that is not used again.
const never = math.MaxInt64

// Run is one call of the layer for the distinct experts call, in order:
// Begin, then the experts in groups of at most Slots, each placed and
// handed to fn (which must be done with the group's slots when it
// returns: the next group may take them), then End. The runtime and the
// simulator both call it, so they place experts alike.
func (p *Pool) Run(call []int, buf []Placement, fn func([]Placement) error) error {
	p.Begin()
	defer p.End()
	for lo := 0; lo < len(call); lo += len(p.slot) {
		g, err := p.Place(call[lo:min(len(call), lo+len(p.slot))], buf[:0])
		if err != nil {
			return err
		}
		if err := fn(g); err != nil {
			return err
		}
	}
	return nil
}

// Shrink cuts the pool to n slots (at least 1; a pool of n or fewer is
// left as it is) when memory runs short. It keeps the experts the policy
// would give up last and drops empty slots and the policy's victims
// first, and returns for each slot kept, in its new order, the slot it
// was: the caller moves its buffers the same way. Call it between calls
// (after End), never during one.
func (p *Pool) Shrink(n int) []int {
	n = max(1, n)
	order := make([]int, len(p.slot))
	for s := range order {
		order[s] = s
	}
	if n >= len(p.slot) {
		return order
	}
	// The slots sorted from the best victim to the last one: the policy's
	// own comparison, with empty slots first.
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := p.slot[a] < 0, p.slot[b] < 0
		switch {
		case ea && eb:
			return 0
		case ea:
			return -1
		case eb:
			return 1
		case p.worse(a, b):
			return -1
		case p.worse(b, a):
			return 1
		}
		return 0
	})
	keep := order[len(order)-n:]
	slices.Sort(keep) // keep the slots' relative order: the policy's ties go to the lower slot
	for _, s := range order[:len(order)-n] {
		if e := p.slot[s]; e >= 0 {
			p.where[e] = -1
			if p.pref[s] {
				p.stats.PrefetchWasted++
			}
		}
	}
	slot, last, pref := make([]int, n), make([]uint64, n), make([]bool, n)
	for i, s := range keep {
		slot[i], last[i], pref[i] = p.slot[s], p.last[s], p.pref[s]
		if e := slot[i]; e >= 0 {
			p.where[e] = i
		}
	}
	p.slot, p.last, p.pref = slot, last, pref
	return slices.Clone(keep)
}

// Grow adds empty slots to the pool, up to n (never more than the
// layer's experts; a pool of n or more is left as it is), when memory is
// back after a Shrink. The experts it holds stay in their slots; the new
// slots fill as the next calls miss. Call it between calls, never during
// one.
func (p *Pool) Grow(n int) {
	for len(p.slot) < min(n, len(p.where)) {
		p.slot = append(p.slot, -1)
		p.last = append(p.last, 0)
		p.pref = append(p.pref, false)
	}
}
