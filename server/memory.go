package server

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/internal/memguard"
)

// memState is what the memory guard last found and did.
type memState struct {
	last    atomic.Pointer[memguard.Status]
	pool    atomic.Int64 // the slots' pools' size per layer (0: not paged)
	stop    atomic.Bool  // low with nothing left to shrink: running generations stop
	max     int64        // the pools' size at start: what they grow back to
	refused atomic.Int64 // requests refused for memory
	shrinks atomic.Int64
	grows   atomic.Int64
}

// growMargin is the hysteresis of the pools' growth, as a share of the
// reserve: pools grow back only while what is available stays above the
// reserve by the new slots' bytes and this much more, so that growing
// does not bring memory straight back below the reserve (and the pools
// do not shrink and grow in turn).
const growMargin = 2

// errMemory is the 503 of a request refused, or a generation stopped,
// because memory is below the guard's reserve.
func errMemory(st memguard.Status) *apiError {
	return &apiError{Code: http.StatusServiceUnavailable, Type: "unavailable_error",
		Message: "memory is low: " + st.String() + "; retry later"}
}

// checkMemory reads the guard. Below the reserve it sets the pools' new
// size, freeing what is short, and shrinks the free slots' pools now
// (a busy slot shrinks its own between tokens); with the pools already at
// one token's working set it tells running generations to stop.
func (s *Server) checkMemory() memguard.Status {
	st := s.cfg.Guard.Check()
	s.mem.last.Store(&st)
	if !st.Low() {
		s.mem.stop.Store(false)
		s.growPools(st)
		return st
	}
	cur := int(s.mem.pool.Load())
	floor := s.cfg.Model.Config.ExpertsUsed
	if cur == 0 || cur <= floor {
		s.mem.stop.Store(true)
		return st
	}
	to := max(floor, memguard.ShrinkTo(st.Short, s.cfg.Model.ExpertSlotBytes()*int64(len(s.slots)), cur, floor))
	s.mem.pool.Store(int64(to))
	s.mem.shrinks.Add(1)
	s.mu.Lock()
	for _, sl := range s.free {
		sl.pool = sl.s.ShrinkPager(to)
	}
	s.mu.Unlock()
	memguard.Release()
	s.cfg.Logf("%s: expert pools shrunk from %d to %d slots per layer", st, cur, to)
	return st
}

// growPools grows the pools back towards their size at start when what
// is available is above the reserve by the new slots' bytes and the
// margin (1/growMargin of the reserve): free slots at once, busy ones
// between tokens.
func (s *Server) growPools(st memguard.Status) {
	s.mu.Lock() // one growth at a time: requests and the watcher check memory
	defer s.mu.Unlock()
	cur, top := int(s.mem.pool.Load()), int(s.mem.max)
	per := s.cfg.Model.ExpertSlotBytes() * int64(len(s.slots))
	if cur == 0 || cur >= top || st.MemTotal == 0 || per <= 0 {
		return
	}
	room := st.Available() - st.Reserve - st.Reserve/growMargin
	if room < per {
		return
	}
	to := min(top, cur+int(room/per))
	s.mem.pool.Store(int64(to))
	s.mem.grows.Add(1)
	for _, sl := range s.free {
		sl.pool = sl.s.GrowPager(to)
	}
	s.cfg.Logf("%s: expert pools grown from %d to %d slots per layer", st, cur, to)
}

// resizeSlot brings a slot's pools to the guard's size; the slot's own
// goroutine calls it, between tokens.
func (s *Server) resizeSlot(sl *slot) {
	switch to := int(s.mem.pool.Load()); {
	case to < sl.pool:
		sl.pool = sl.s.ShrinkPager(to)
		memguard.Release()
	case to > sl.pool:
		sl.pool = sl.s.GrowPager(to)
	}
}

// memoryStop is the error a running generation stops with when memory is
// low and nothing is left to shrink, or nil.
func (s *Server) memoryStop() error {
	if !s.mem.stop.Load() {
		return nil
	}
	if st := s.mem.last.Load(); st != nil {
		return errMemory(*st)
	}
	return nil
}

// watchMemory checks the memory every GuardEvery until ctx ends, so a
// long generation sees memory fall while no request comes.
func (s *Server) watchMemory(ctx context.Context) {
	t := time.NewTicker(s.cfg.GuardEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.checkMemory()
		}
	}
}

// memoryMetrics appends the guard's lines to /metrics.
func (s *Server) memoryMetrics(put func(name, kind, help string, v float64)) {
	if s.cfg.Guard == nil {
		return
	}
	st := s.mem.last.Load()
	if st == nil {
		c := s.checkMemory()
		st = &c
	}
	low := 0.0
	if st.Low() {
		low = 1
	}
	put("gguf:memory_available_bytes", "gauge", "Memory the process may still take (MemAvailable, or the cgroup limit less its usage)", float64(st.Available()))
	put("gguf:memory_reserve_bytes", "gauge", "Memory the guard keeps free", float64(st.Reserve))
	put("gguf:memory_low", "gauge", "1 while the available memory is below the reserve: new generations get 503", low)
	put("gguf:memory_refused_total", "counter", "Requests refused with 503 because memory was low", float64(s.mem.refused.Load()))
	put("gguf:memory_pool_shrinks_total", "counter", "Times the guard shrank the expert pools", float64(s.mem.shrinks.Load()))
	put("gguf:memory_pool_grows_total", "counter", "Times the guard grew the expert pools back", float64(s.mem.grows.Load()))
	if p := s.mem.pool.Load(); p > 0 {
		put("gguf:pager_pool_slots", "gauge", "Slots per layer of each expert pool", float64(p))
	}
}

// memoryHealth is /health's account of the memory: nil when fine.
func (s *Server) memoryHealth() *apiError {
	if s.cfg.Guard == nil {
		return nil
	}
	if st := s.checkMemory(); st.Low() {
		e := errMemory(st)
		if p := s.mem.pool.Load(); p > 0 {
			e.Message += fmt.Sprintf(" (expert pools at %d slots per layer, %s)", p,
				humanize.IBytes(uint64(p*s.cfg.Model.ExpertSlotBytes()*int64(len(s.slots)))))
		}
		return e
	}
	return nil
}
