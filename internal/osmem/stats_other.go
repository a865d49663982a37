//go:build !unix

package osmem

// PeakRSS is not measured on this platform: 0.
func PeakRSS() int64 { return 0 }

// MajorFaults returns 0: the platform does not count page faults.
func MajorFaults() int64 { return 0 }
