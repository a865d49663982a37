package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/internal/memguard"
	"github.com/ggufkit/gguf/source"
)

// memRoots is where the memory guard reads the kernel's figures:
// GGUF_MEM_ROOT=DIR reads DIR/proc and DIR/sys/fs/cgroup instead, to
// simulate a device's memory (the tests do).
func memRoots() memguard.Roots {
	if d := os.Getenv("GGUF_MEM_ROOT"); d != "" {
		return memguard.Roots{Proc: filepath.Join(d, "proc"), Cgroup: filepath.Join(d, "sys", "fs", "cgroup")}
	}
	return memguard.System
}

// stateOverhead is what a State takes besides its KV cache and expert
// pools, counted when sizing them: the prompt batch's buffers (4 MiB),
// the q2lut tables (1 MiB), logits and the Go runtime's slack.
const stateOverhead = 32 << 20

// memGuard returns the guard of --mem-reserve, or nil with "off" or where
// memory cannot be read (not Linux).
func (f *modelFlags) memGuard() (*memguard.Guard, error) {
	switch f.memReserve {
	case "off":
		return nil, nil
	case "auto", "":
		return memguard.New(memRoots(), 0), nil
	}
	b, err := humanize.ParseBytes(f.memReserve)
	if err != nil || b == 0 {
		return nil, usageError("--mem-reserve %q: a size such as 128MiB, auto or off", f.memReserve)
	}
	return memguard.New(memRoots(), int64(b)), nil
}

// memFit is what the guard found before the model was loaded: the memory
// the command may take (-1: unknown) and the reading it came from.
type memFit struct {
	g      *memguard.Guard
	budget int64
	st     memguard.Status
}

// String is the reading for messages: "197 MiB available (cgroup limit
// 200 MiB, 3.4 MiB used), keeping 64 MiB free".
func (f memFit) String() string {
	return fmt.Sprintf("%s, keeping %s free", f.st.Reading, humanize.IBytes(uint64(f.st.Reserve)))
}

// fitBeforeOpen reads the memory before anything is loaded (the model's
// own pages would count against it after) and decides what the header
// alone can: a file whose experts come last and which does not fit is
// paged when no pool was asked for (mf.autoPage), and weights to be read
// (--no-mmap) or locked (--mlock) that cannot fit are refused instead of
// being killed while they load.
func fitBeforeOpen(verb, path string, mf *modelFlags, g *memguard.Guard) (memFit, error) {
	fit := memFit{g: g, budget: -1}
	if g == nil {
		warnUnguarded(verb, path, mf)
		return fit, nil
	}
	fit.budget, fit.st = g.Budget()
	if fit.budget < 0 {
		return fit, nil
	}
	src, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		return fit, nil // engine.Open says what is wrong with the file
	}
	size, info := src.Size(), experts.Describe(src.File())
	src.Close()
	pageable := info != nil && info.Last
	if !mf.paged() && pageable && size > fit.budget {
		mf.autoPage = true
	}
	resident := size
	if (mf.paged() || mf.autoPage) && pageable {
		resident = info.NonExpertEnd
	}
	if (mf.noMmap || mf.mlock) && resident > fit.budget {
		how := "--no-mmap"
		if mf.mlock {
			how = "--mlock"
		}
		return fit, usageError("%s: %s would hold %s of weights in memory, and %s: run without %s (the kernel can drop mapped weights), raise the memory limit or lower --mem-reserve",
			verb, how, humanize.IBytes(uint64(resident)), fit, how)
	}
	return fit, nil
}

// fitPools sizes the expert pools of n States of ctx tokens to what the
// memory left holds once the resident weights (counted even when mapped:
// under a cgroup the page cache is charged, and pools that crowd out the
// mapped weights make every token fault them back in), the KV caches and
// the buffers are paid for: the pool asked for when it fits, else as
// many slots as fit (with a note on stderr), and every expert when none
// was asked for and they all fit. A model whose one-token working set or
// KV cache does not fit is refused.
func fitPools(verb string, fit memFit, mf *modelFlags, m *engine.Model, po *engine.PagerOptions, ctx, n int) error {
	if fit.g == nil {
		warnUnguardedPools(verb, m, po, n)
	}
	if fit.budget < 0 {
		return nil
	}
	if ctx <= 0 {
		ctx = m.Config.ContextLength
	}
	kv := mf.kvBytes(m, ctx)
	fixed := int64(n) * (kv + stateOverhead)
	if po != nil {
		fixed += int64(n) * m.StageBytes(po.Stage)
	}
	left := fit.budget - m.ResidentBytes - fixed
	if po == nil {
		if left < 0 && (mf.noMmap || mf.mlock || fixed > fit.budget) {
			return usageError("%s: %s of weights, %d KV caches of %d tokens (%s) and buffers need %s, and %s: lower --ctx or --parallel, or raise the memory limit",
				verb, humanize.IBytes(uint64(m.ResidentBytes)), n, ctx, humanize.IBytes(uint64(kv)),
				humanize.IBytes(uint64(m.ResidentBytes+fixed)), fit)
		}
		return nil
	}
	slot := m.ExpertSlotBytes() * int64(n)
	if slot == 0 {
		return nil // engine.NewState says the model has nothing to page
	}
	fits := int(max(left, 0) / slot)
	want := po.Pool
	switch {
	case want == 0 && po.Budget > 0:
		want = int(po.Budget / m.ExpertSlotBytes())
	case want == 0:
		want = m.Config.Experts
	}
	want = min(want, m.Config.Experts)
	if fits < m.Config.ExpertsUsed {
		return usageError("%s: pools of one token's working set (%d experts per layer, %s) besides %s of weights and %d KV caches of %d tokens (%s) do not fit: %s; lower --ctx, --parallel or --experts, or raise the memory limit",
			verb, m.Config.ExpertsUsed, humanize.IBytes(uint64(int64(m.Config.ExpertsUsed)*slot)), humanize.IBytes(uint64(m.ResidentBytes)),
			n, ctx, humanize.IBytes(uint64(kv)), fit)
	}
	switch {
	case mf.autoPage:
		fmt.Fprintf(stderr, "gguf: %s: the model does not fit (%s): paging its experts into pools of %d slots per layer (%s)\n",
			verb, fit, min(want, fits), humanize.IBytes(uint64(int64(min(want, fits))*slot)))
	case want > fits:
		fmt.Fprintf(stderr, "gguf: %s: pools of %d slots per layer (%s) do not fit (%s): using %d slots (%s)\n",
			verb, want, humanize.IBytes(uint64(int64(want)*slot)), fit, fits, humanize.IBytes(uint64(int64(fits)*slot)))
	default:
		return nil
	}
	po.Pool, po.Budget = min(want, fits), 0
	return nil
}

// memWatch is the guard while run generates: between tokens (at most
// every interval) it reads the memory, and below the reserve it shrinks
// the expert pools to free what is short; with nothing left to shrink it
// stops the generation with a message instead of letting the OOM killer
// end the process.
type memWatch struct {
	g     *memguard.Guard
	s     *engine.State
	slot  int64 // bytes of one pool slot per layer
	every time.Duration
	next  time.Time
	verb  string
}

// newMemWatch returns the watch of s, or nil without a guard.
func newMemWatch(verb string, g *memguard.Guard, m *engine.Model, s *engine.State) *memWatch {
	if g == nil {
		return nil
	}
	w := &memWatch{g: g, s: s, slot: m.ExpertSlotBytes(), every: 200 * time.Millisecond, verb: verb}
	if os.Getenv("GGUF_MEM_ROOT") != "" {
		// A simulated memory changes when its writer says, not with time:
		// read it at every token.
		w.every = 0
	}
	return w
}

// check is called between tokens.
func (w *memWatch) check() error {
	if w == nil {
		return nil
	}
	now := time.Now()
	if now.Before(w.next) {
		return nil
	}
	w.next = now.Add(w.every)
	st := w.g.Check()
	if !st.Low() {
		return nil
	}
	if p := w.s.PagerStats(); p != nil {
		to := memguard.ShrinkTo(st.Short, w.slot, p.Slots, 1)
		if got := w.s.ShrinkPager(to); got < p.Slots {
			memguard.Release()
			fmt.Fprintf(stderr, "gguf: %s: %s: expert pools shrunk from %d to %d slots per layer\n", w.verb, st, p.Slots, got)
			return nil
		}
	}
	return fmt.Errorf("%s: stopped: %s, and nothing is left to shrink: free memory, lower --ctx or the pool, or raise the memory limit", w.verb, st)
}
