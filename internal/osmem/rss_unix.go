//go:build unix && !linux

package osmem

import (
	"runtime"
	"syscall"
)

// PeakRSS returns the process's peak resident set size in bytes (getrusage
// ru_maxrss: bytes on darwin, kilobytes on the BSDs).
func PeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
