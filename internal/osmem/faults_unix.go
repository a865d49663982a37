//go:build unix

package osmem

import "syscall"

// MajorFaults returns the process's major page faults so far (getrusage
// ru_majflt): page-ins from storage, the cost of a mapping that does not
// fit in RAM.
func MajorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Majflt)
}
