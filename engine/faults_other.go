//go:build !unix

package engine

// MajorFaults returns 0: the platform does not count page faults.
func MajorFaults() int64 { return 0 }
