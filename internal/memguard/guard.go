package memguard

import (
	"fmt"
	"runtime/debug"

	"github.com/dustin/go-humanize"
)

// Guard keeps a reserve of memory free: below it the caller shrinks what
// it can (the expert pools) and takes no new work.
type Guard struct {
	Roots Roots
	// Reserve is the memory kept free, in bytes.
	Reserve int64
}

// New returns a guard of the memory under roots keeping reserve bytes
// free (0: DefaultReserve), or nil where memory cannot be read (not
// Linux, no /proc): a nil Guard never acts.
func New(roots Roots, reserve int64) *Guard {
	r, err := Read(roots)
	if err != nil {
		return nil
	}
	if reserve <= 0 {
		reserve = DefaultReserve(r)
	}
	return &Guard{Roots: roots, Reserve: reserve}
}

// Status is one check of a Guard.
type Status struct {
	Reading
	Reserve int64
	// Short is how far the available memory is below the reserve (0:
	// not below).
	Short int64
}

// Low reports whether the memory is below the reserve.
func (s Status) Low() bool { return s.Short > 0 }

// String is a one-line account: "40 MiB available (cgroup limit 1.0
// GiB, 980 MiB used), below the 64 MiB reserve".
func (s Status) String() string {
	rel := "above"
	if s.Low() {
		rel = "below"
	}
	return fmt.Sprintf("%s, %s the %s reserve", s.Reading, rel, humanize.IBytes(uint64(s.Reserve)))
}

// Check reads the memory now. A nil Guard, or a failed read, reports
// nothing short.
func (g *Guard) Check() Status {
	if g == nil {
		return Status{}
	}
	r, err := Read(g.Roots)
	if err != nil {
		return Status{Reserve: g.Reserve}
	}
	return Status{Reading: r, Reserve: g.Reserve, Short: max(0, g.Reserve-r.Available())}
}

// Budget is what the process may still allocate while keeping the
// reserve: the available memory less the reserve (0 when below it), or -1
// for a nil Guard (no limit known).
func (g *Guard) Budget() (int64, Status) {
	if g == nil {
		return -1, Status{}
	}
	st := g.Check()
	if st.MemTotal == 0 {
		return -1, st
	}
	return max(0, st.Available()-g.Reserve), st
}

// ShrinkTo returns how many slots per layer pools of cur slots, each slot
// costing slotBytes over every pool, keep to free short bytes: at least
// one slot fewer, never fewer than floor.
func ShrinkTo(short, slotBytes int64, cur, floor int) int {
	drop := 1
	if slotBytes > 0 {
		drop = max(1, int((short+slotBytes-1)/slotBytes))
	}
	return max(floor, cur-drop)
}

// Release hands memory that was just dropped (pool buffers) back to the
// kernel now: the Go runtime would otherwise keep it for a while, and
// the kernel's count is what the OOM killer goes by.
func Release() { debug.FreeOSMemory() }
