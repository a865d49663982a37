package kernels

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countTask counts how often each item runs; slow makes worker 1 sleep
// in some steps, as a descheduled thread would.
type countTask struct {
	hits []atomic.Int32
	slow bool
	step int
}

func (c *countTask) Run(lo, hi, w int) {
	if c.slow && w == 1 && c.step%3 == 0 {
		time.Sleep(200 * time.Microsecond)
	}
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// TestPoolRunsEveryItemOnce runs thousands of steps of varying sizes and
// grains on pools of 1 to 4 participants, with and without a slow worker and with
// pauses long enough for workers to park, and checks that every item ran
// exactly once per step and that close stops the workers.
func TestPoolRunsEveryItemOnce(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, n := range []int{1, 2, 3, 4} {
		for _, slow := range []bool{false, true} {
			p := NewPool(n)
			c := &countTask{hits: make([]atomic.Int32, 1000), slow: slow}
			for step := 0; step < 2000; step++ {
				total := (step*37)%1000 + 1
				c.step = step
				for i := range c.hits[:total] {
					c.hits[i].Store(0)
				}
				p.Run(c, total, []int{1, 3, 16, 64}[step%4], true)
				for i := range c.hits[:total] {
					if got := c.hits[i].Load(); got != 1 {
						t.Fatalf("n=%d slow=%v step %d: item %d of %d ran %d times", n, slow, step, i, total, got)
					}
				}
				if step%500 == 499 {
					time.Sleep(2 * spinFor) // let the workers park
				}
			}
			p.Close()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after closing every pool, %d before", g, before)
	}
}
