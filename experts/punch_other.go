//go:build !linux

package experts

import "os"

// punchHole is Linux's fallocate(PUNCH_HOLE) only.
func punchHole(*os.File, int64, int64) error { return ErrNoHoles }

// DataRanges says all of [start, end) holds data where the OS has no
// portable way to find holes here.
func DataRanges(_ *os.File, start, end int64) ([][2]int64, error) {
	if start >= end {
		return nil, nil
	}
	return [][2]int64{{start, end}}, nil
}
