package engine

import "sync"

// task is work split over the pool: run handles items [lo, hi) on worker w.
// Tasks are long-lived structs owned by a State, so dispatching one costs
// no allocation.
type task interface {
	run(lo, hi, w int)
}

// pool is a fixed set of worker goroutines, started once per State: each
// parallel step hands every worker one contiguous range of items.
type pool struct {
	n     int
	start []chan struct{}
	wg    sync.WaitGroup
	t     task
	total int
}

func newPool(n int) *pool {
	p := &pool{n: max(1, n)}
	p.start = make([]chan struct{}, p.n)
	for w := 1; w < p.n; w++ {
		p.start[w] = make(chan struct{}, 1)
		go p.worker(w)
	}
	return p
}

func (p *pool) bounds(w int) (int, int) {
	return p.total * w / p.n, p.total * (w + 1) / p.n
}

func (p *pool) worker(w int) {
	for range p.start[w] {
		lo, hi := p.bounds(w)
		if lo < hi {
			p.t.run(lo, hi, w)
		}
		p.wg.Done()
	}
}

// run executes t over [0, total), on all workers when parallel is set
// (the caller is worker 0) and inline otherwise.
func (p *pool) run(t task, total int, parallel bool) {
	if !parallel || p.n == 1 || total < 2 {
		t.run(0, total, 0)
		return
	}
	p.t, p.total = t, total
	p.wg.Add(p.n - 1)
	for w := 1; w < p.n; w++ {
		p.start[w] <- struct{}{}
	}
	if lo, hi := p.bounds(0); lo < hi {
		t.run(lo, hi, 0)
	}
	p.wg.Wait()
	p.t = nil
}

// close stops the workers.
func (p *pool) close() {
	for w := 1; w < p.n; w++ {
		close(p.start[w])
	}
	p.n = 1
}
