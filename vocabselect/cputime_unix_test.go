//go:build unix

package vocabselect

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, all threads, user and
// system. On a machine shared with other work, bytes per CPU second stay
// steady where bytes per wall-clock second swing with the load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
