package experts

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fallocate is unix.Fallocate; tests replace it to act as a file system
// without hole support.
var fallocate = unix.Fallocate

// punchHole frees [off, off+n) of f, keeping its size.
func punchHole(f *os.File, off, n int64) error {
	err := fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return ErrNoHoles
	}
	if err != nil {
		return fmt.Errorf("punching bytes %d-%d: %w", off, off+n, err)
	}
	return nil
}

// DataRanges returns the ranges of [start, end) of f that hold data (are
// not holes), in order, found with lseek(SEEK_DATA) and lseek(SEEK_HOLE).
// A file system without hole reporting says it is all data (up to the end
// of the file).
func DataRanges(f *os.File, start, end int64) ([][2]int64, error) {
	var out [][2]int64
	fd := int(f.Fd())
	for pos := start; pos < end; {
		d, err := unix.Seek(fd, pos, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // holes from pos to the end of the file
		}
		if err != nil {
			return nil, fmt.Errorf("lseek(SEEK_DATA): %w", err)
		}
		if d >= end {
			break
		}
		h, err := unix.Seek(fd, d, unix.SEEK_HOLE)
		if err != nil {
			return nil, fmt.Errorf("lseek(SEEK_HOLE): %w", err)
		}
		h = min(h, end)
		out = append(out, [2]int64{d, h})
		pos = h
	}
	return out, nil
}
