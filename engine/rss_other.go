//go:build !unix

package engine

// PeakRSS is not measured on this platform.
func PeakRSS() int64 { return 0 }
