package kernels

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Task is work split over a Pool: Run handles items [lo, hi) on worker w.
// Tasks are long-lived structs owned by their caller (a model's State), so
// dispatching one costs no allocation.
type Task interface {
	Run(lo, hi, w int)
}

// spinFor is how long an idle worker polls for the next step before it
// parks. A token's forward pass dispatches a matmul every few tens of
// microseconds; waking a parked goroutine costs about as much (a futex
// wake-up of an OS thread), which made two threads barely faster than one.
// Spinning through the short serial gaps between steps removes that cost,
// as ggml's thread pool does; parking after the window keeps an idle
// State from burning a core.
const spinFor = 500 * time.Microsecond

// rangesPerWorker is how many pieces each participant's share of a step
// is cut into. Any participant may run any piece it claims first, so a
// worker that is parked, or descheduled by a busy machine, delays a step
// by at most the piece it is running instead of by its whole share: the
// caller runs the pieces nobody has claimed.
const rangesPerWorker = 4

// Pool is a fixed set of worker goroutines, started once per State, that
// run the parallel steps of a forward pass with the calling goroutine.
//
// A step is published by bumping step after t and total are set. Its
// items are cut into ranges; claim[r] holds the last step range r was
// claimed for, and a participant runs range r of step s only after moving
// claim[r] from s-1 to s, so each range runs once. Workers try their own
// ranges first, then the others; the caller, after its own, runs whatever
// is left unclaimed and then waits for pending (ranges not yet finished)
// to reach zero. The atomics order the plain fields: t and total are
// written before step is bumped and read only by a participant holding a
// claim of that step, and they are not written again until every range of
// the step has finished.
type Pool struct {
	n       int
	ranges  int
	step    atomic.Uint64
	pending atomic.Int32
	quit    atomic.Bool
	t       Task
	total   int
	grain   int
	claim   []atomic.Uint64
	// asleep[w] is set by a parked worker; bell[w] (buffered, 1) wakes it.
	asleep []atomic.Bool
	bell   []chan struct{}
}

// NewPool starts a pool of n participants: the caller of Run and n-1
// workers.
func NewPool(n int) *Pool {
	p := &Pool{n: max(1, n)}
	p.ranges = p.n * rangesPerWorker
	p.claim = make([]atomic.Uint64, p.ranges)
	p.asleep = make([]atomic.Bool, p.n)
	p.bell = make([]chan struct{}, p.n)
	for w := 1; w < p.n; w++ {
		p.bell[w] = make(chan struct{}, 1)
		go p.worker(w)
	}
	return p
}

// bounds returns range r's items: ranges start at multiples of the grain,
// so that two participants never write the same cache line of an output.
func (p *Pool) bounds(r int) (int, int) {
	units := (p.total + p.grain - 1) / p.grain
	lo := min(units*r/p.ranges*p.grain, p.total)
	hi := min(units*(r+1)/p.ranges*p.grain, p.total)
	return lo, hi
}

// work runs every range of step s that participant w can claim, its own
// ranges first.
func (p *Pool) work(s uint64, w int) {
	for i := 0; i < p.ranges; i++ {
		r := (w*rangesPerWorker + i) % p.ranges
		if !p.claim[r].CompareAndSwap(s-1, s) {
			continue
		}
		if lo, hi := p.bounds(r); lo < hi {
			p.t.Run(lo, hi, w)
		}
		p.pending.Add(-1)
	}
}

func (p *Pool) worker(w int) {
	var seen uint64
	for {
		s, ok := p.await(w, seen)
		if !ok {
			return
		}
		seen = s
		p.work(s, w)
	}
}

// await returns the first step after seen, spinning for spinFor and then
// parking until run rings the bell. It reports false once the pool closes.
func (p *Pool) await(w int, seen uint64) (uint64, bool) {
	deadline := time.Now().Add(spinFor)
	for i := 1; ; i++ {
		if p.quit.Load() {
			return 0, false
		}
		if s := p.step.Load(); s != seen {
			return s, true
		}
		if i%64 != 0 {
			continue
		}
		runtime.Gosched()
		if time.Now().Before(deadline) {
			continue
		}
		// Park. Announce it first, then look once more: a step published
		// between the two either is seen here or finds asleep set and rings.
		p.asleep[w].Store(true)
		if s := p.step.Load(); s != seen || p.quit.Load() {
			if !p.asleep[w].CompareAndSwap(true, false) {
				<-p.bell[w] // run already rang: drain it so the next park blocks
			}
			continue
		}
		<-p.bell[w]
		deadline = time.Now().Add(spinFor)
	}
}

// ring wakes worker w if it is parked.
func (p *Pool) ring(w int) {
	if p.asleep[w].CompareAndSwap(true, false) {
		p.bell[w] <- struct{}{}
	}
}

// Run executes t over [0, total), on all participants when parallel is
// set (the caller is participant 0) and inline otherwise. Ranges are cut at
// multiples of grain items (see bounds).
func (p *Pool) Run(t Task, total, grain int, parallel bool) {
	if !parallel || p.n == 1 || total < 2 {
		t.Run(0, total, 0)
		return
	}
	p.t, p.total, p.grain = t, total, max(1, grain)
	p.pending.Store(int32(p.ranges))
	s := p.step.Add(1)
	for w := 1; w < p.n; w++ {
		p.ring(w)
	}
	p.work(s, 0)
	for i := 1; p.pending.Load() != 0; i++ {
		if i%64 == 0 {
			runtime.Gosched()
		}
	}
	p.t = nil
}

// Close stops the workers; Run then works inline.
func (p *Pool) Close() {
	if p.quit.Swap(true) {
		return
	}
	for w := 1; w < p.n; w++ {
		p.ring(w)
	}
	p.n = 1
}

// Threads returns the number of participants (1 once closed).
func (p *Pool) Threads() int { return p.n }
