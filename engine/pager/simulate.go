package pager

import (
	"fmt"
	"io"
	"slices"
)

// Result is a simulation's counts, per layer and in total.
type Result struct {
	Policy Policy
	// Slots is the pool size simulated: the one asked for, at most the
	// layer's experts (as the runtime clamps it).
	Slots int
	Total Stats
	// Layers holds each layer's counts, by layer number.
	Layers map[int]Stats
}

// Sim is one simulation: a pool size (slots per layer) and a policy.
type Sim struct {
	Slots  int
	Policy Policy
}

// Simulate replays t through pools of slots slots per layer under policy
// p, exactly as the runtime's pager places experts (Pool.Run). A pool
// smaller than a call's experts handles the call in groups, as the
// runtime does for a batch; a pool larger than the layer's experts is
// clamped to them, as the runtime does.
func Simulate(t *Trace, slots int, p Policy) (*Result, error) {
	rs, _, err := replay(memSource{t}, []Sim{{slots, p}})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// Replayed is what Replay read and found.
type Replayed struct {
	// Experts is the trace's experts per layer, Calls its calls.
	Experts int
	Calls   int64
	// Results are the simulations' counts, in the order asked.
	Results []*Result
}

// Replay replays the trace read from r through every simulation at once,
// as Simulate does, without holding the trace: it holds the pools, and
// for Belady at most maxCheckpointBytes of checkpoints and the segment of
// the trace between two of them (see checkpoints).
// Belady reads the trace twice, so r must then be seekable (a file, not a
// pipe); the other policies read it once.
func Replay(r io.ReadSeeker, sims []Sim) (*Replayed, error) {
	tr, err := NewTraceReader(r)
	if err != nil {
		return nil, err
	}
	src := &readerSource{r: r, first: tr}
	rs, calls, err := replay(src, sims)
	if err != nil {
		return nil, err
	}
	return &Replayed{Experts: tr.Experts(), Calls: calls, Results: rs}, nil
}

// A callSource is a trace that can be read from its start more than once
// (Belady's replay reads it twice).
type callSource interface {
	experts() int
	each(fn func(Call) error) error
}

// memSource is a trace in memory.
type memSource struct{ t *Trace }

func (m memSource) experts() int { return m.t.Experts }

func (m memSource) each(fn func(Call) error) error {
	for _, c := range m.t.Calls {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// readerSource is a trace read from a file, once per pass.
type readerSource struct {
	r     io.ReadSeeker
	first *TraceReader // the reader of the first pass, header read
}

func (s *readerSource) experts() int { return s.first.Experts() }

func (s *readerSource) each(fn func(Call) error) error {
	tr := s.first
	if tr == nil {
		if _, err := s.r.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("the belady policy reads the trace twice, which needs a file, not a pipe: %w", err)
		}
		var err error
		if tr, err = NewTraceReader(s.r); err != nil {
			return err
		}
	}
	s.first = nil
	for tr.Next() {
		if err := fn(tr.Call()); err != nil {
			return err
		}
	}
	return tr.Err()
}

// simState is one simulation in progress.
type simState struct {
	experts, slots int
	policy         Policy
	pools          map[int]*Pool
	buf            []Placement
}

// call replays one call of layer l; next, when set, holds each expert's
// next use (Belady's knowledge of the future), in the call's order.
func (s *simState) call(l int, experts []int, next []int64) error {
	pl, ok := s.pools[l]
	if !ok {
		var err error
		if pl, err = NewPool(s.experts, s.slots, s.policy); err != nil {
			return err
		}
		s.pools[l] = pl
	}
	k := 0
	return pl.Run(experts, s.buf, func(g []Placement) error {
		if next != nil {
			for _, x := range g {
				pl.SetNextUse(x.Expert, next[k])
				k++
			}
		}
		return nil
	})
}

// replay runs sims over the calls of src and returns their results and
// the number of calls. With a Belady simulation among them a first pass
// records checkpoints of the future, and the second replays the trace a
// segment (the calls between two checkpoints) at a time, each access's
// next use found by a backward pass over its segment from the checkpoint
// that ends it.
func replay(src callSource, sims []Sim) ([]*Result, int64, error) {
	experts := src.experts()
	states := make([]*simState, len(sims))
	belady := false
	for i, sim := range sims {
		if sim.Slots <= 0 {
			return nil, 0, fmt.Errorf("a pool needs at least one slot")
		}
		slots := min(sim.Slots, experts)
		states[i] = &simState{experts: experts, slots: slots, policy: sim.Policy, pools: map[int]*Pool{},
			buf: make([]Placement, 0, slots)}
		belady = belady || sim.Policy.Kind == Belady
	}
	seg := &segment{states: states, pos: map[int]int64{}}
	if belady {
		cp := newCheckpoints(experts)
		if err := src.each(cp.add); err != nil {
			return nil, 0, err
		}
		seg.cp, seg.last = cp, map[int][]int64{}
	}
	if err := src.each(seg.add); err != nil {
		return nil, 0, err
	}
	if err := seg.flush(); err != nil {
		return nil, 0, err
	}
	rs := make([]*Result, len(states))
	for i, s := range states {
		r := &Result{Policy: s.policy, Slots: s.slots, Layers: map[int]Stats{}}
		for l, pl := range s.pools {
			r.Layers[l] = pl.Stats()
			r.Total.Add(pl.Stats())
		}
		rs[i] = r
	}
	return rs, seg.calls, nil
}

// Checkpoints bound what Belady needs to know about the future. Its next
// use of every access is a number per access, as many as the trace has
// (3.7 GB for a 10 M-call trace held whole); instead, at a checkpoint
// every so many accesses the first pass records each layer's experts'
// next use after that point, which is all a backward pass over the
// segment before it needs to give that segment's accesses theirs.
// Checkpoints start checkpointSpacing accesses apart; when they hold more
// than maxCheckpointBytes every other one is dropped and the spacing
// doubles, so memory stays bounded whatever the trace's length (a longer
// segment is what a longer trace costs: 16 bytes per access of one).
// (Variables so that a test can make them small.)
var (
	checkpointSpacing  = 1 << 16
	maxCheckpointBytes = int64(32 << 20)
)

// checkpoints is the first pass's record of the future.
type checkpoints struct {
	experts int
	// at is the number of calls before each checkpoint; next its
	// per-layer next use of each expert (a position in the layer's
	// accesses, never if none).
	at   []int64
	next []map[int][]int64
	// unresolved is, per layer and expert, the first checkpoint whose
	// next use of it is not known yet (the expert has not been used
	// since).
	unresolved map[int][]int32
	pos        map[int]int64 // per layer: accesses so far
	calls      int64
	spacing    int   // accesses between checkpoints
	since      int   // accesses since the last one
	bytes      int64 // held by next
}

func newCheckpoints(experts int) *checkpoints {
	return &checkpoints{experts: experts, unresolved: map[int][]int32{}, pos: map[int]int64{}, spacing: checkpointSpacing}
}

// add records one call of the first pass.
func (c *checkpoints) add(call Call) error {
	l := call.Layer
	u := c.unresolved[l]
	if u == nil {
		u = make([]int32, c.experts)
		c.unresolved[l] = u
	}
	for _, e := range call.Experts {
		p := c.pos[l]
		c.pos[l]++
		for j := int(u[e]); j < len(c.at); j++ {
			c.entry(j, l)[e] = p
		}
		u[e] = int32(len(c.at))
	}
	c.calls++
	if c.since += len(call.Experts); c.since >= c.spacing {
		c.at = append(c.at, c.calls)
		c.next = append(c.next, map[int][]int64{})
		c.since = 0
		if c.bytes > maxCheckpointBytes {
			c.thin()
		}
	}
	return nil
}

// entry is checkpoint j's next uses of layer l's experts.
func (c *checkpoints) entry(j, l int) []int64 {
	nx := c.next[j][l]
	if nx == nil {
		nx = make([]int64, c.experts)
		for e := range nx {
			nx[e] = never
		}
		c.next[j][l] = nx
		c.bytes += int64(8 * c.experts)
	}
	return nx
}

// thin drops every other checkpoint (the odd ones) and doubles the
// spacing of those to come.
func (c *checkpoints) thin() {
	var at []int64
	var next []map[int][]int64
	c.bytes = 0
	for j := 0; j < len(c.at); j += 2 {
		at, next = append(at, c.at[j]), append(next, c.next[j])
		for _, nx := range c.next[j] {
			c.bytes += int64(8 * len(nx))
		}
	}
	c.at, c.next = at, next
	for _, u := range c.unresolved {
		for e := range u {
			u[e] = (u[e] + 1) / 2 // the first kept checkpoint at or after it
		}
	}
	c.spacing *= 2
}

// segment is the second pass: calls buffered up to the next checkpoint
// (one call at a time without Belady), then replayed into every
// simulation.
type segment struct {
	states []*simState
	cp     *checkpoints    // nil: no Belady simulation
	k      int             // the checkpoint that ends the segment
	last   map[int][]int64 // per layer: the backward pass's next uses
	pos    map[int]int64   // per layer: accesses before the segment
	calls  int64           // calls read
	layer  []int           // per buffered call: its layer
	n      []int           // per buffered call: its experts
	ex     []int           // the buffered calls' experts
	next   []int64         // their next uses
	count  map[int]int64   // per layer: accesses in the segment
}

// add buffers one call of the second pass and replays the segment at its
// end.
func (s *segment) add(c Call) error {
	s.calls++
	s.layer, s.n, s.ex = append(s.layer, c.Layer), append(s.n, len(c.Experts)), append(s.ex, c.Experts...)
	if s.cp == nil || s.k < len(s.cp.at) && s.calls == s.cp.at[s.k] {
		return s.flush()
	}
	return nil
}

// flush replays the buffered calls into every simulation and empties the
// buffer.
func (s *segment) flush() error {
	var next []int64
	if s.cp != nil {
		next = s.nextUses()
		s.k++
	}
	a := 0
	for i, l := range s.layer {
		ex := s.ex[a : a+s.n[i]]
		var nx []int64
		if next != nil {
			nx = next[a : a+s.n[i]]
		}
		for _, st := range s.states {
			if err := st.call(l, ex, nx); err != nil {
				return fmt.Errorf("call %d (layer %d): %w", s.calls-int64(len(s.layer)-i)+1, l, err)
			}
		}
		a += s.n[i]
	}
	s.layer, s.n, s.ex = s.layer[:0], s.n[:0], s.ex[:0]
	return nil
}

// nextUses gives each buffered access the position of the next access of
// its layer's expert: a backward pass over the segment starting from the
// checkpoint that ends it (never used again when there is none).
func (s *segment) nextUses() []int64 {
	if s.count == nil {
		s.count = map[int]int64{}
	}
	clear(s.count)
	for i, l := range s.layer {
		s.count[l] += int64(s.n[i])
	}
	for l := range s.count {
		last := s.last[l]
		if last == nil {
			last = make([]int64, s.cp.experts)
			s.last[l] = last
		}
		var from []int64
		if s.k < len(s.cp.next) {
			from = s.cp.next[s.k][l]
		}
		if from != nil {
			copy(last, from)
		} else {
			for e := range last {
				last[e] = never
			}
		}
	}
	s.next = slices.Grow(s.next[:0], len(s.ex))[:len(s.ex)]
	end := map[int]int64{}
	for l, n := range s.count {
		end[l] = s.pos[l] + n
	}
	a := len(s.ex)
	for i := len(s.layer) - 1; i >= 0; i-- {
		l, last := s.layer[i], s.last[s.layer[i]]
		// Within a call the accesses are in call order: walk them backward.
		for k := s.n[i] - 1; k >= 0; k-- {
			a--
			end[l]--
			e := s.ex[a]
			s.next[a], last[e] = last[e], end[l]
		}
	}
	for l, n := range s.count {
		s.pos[l] += n
	}
	return s.next
}

// LayerNumbers returns the layer numbers of r in order.
func (r *Result) LayerNumbers() []int {
	var ls []int
	for l := range r.Layers {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return ls
}
