//go:build linux

package kernels

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used, in ns
// (CLOCK_THREAD_CPUTIME_ID: the scheduler's count, not getrusage's ticks).
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// loopCPU runs f b.N times (b.Loop) on one locked thread and reports,
// besides the wall time, the thread's CPU time per iteration as
// "cpu-ns/op": on a machine shared with other work the wall time counts
// the time the thread waited for a core, its CPU time does not.
func loopCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
	}
}
