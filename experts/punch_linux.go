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

// HoleBytes returns how many bytes of [start, end) of f are holes, found
// with lseek(SEEK_HOLE) and lseek(SEEK_DATA). A file system without hole
// reporting says there are none.
func HoleBytes(f *os.File, start, end int64) (int64, error) {
	var holes int64
	fd := int(f.Fd())
	for pos := start; pos < end; {
		h, err := unix.Seek(fd, pos, unix.SEEK_HOLE)
		if errors.Is(err, unix.ENXIO) || (err == nil && h >= end) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("lseek(SEEK_HOLE): %w", err)
		}
		d, err := unix.Seek(fd, h, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			d = end // a hole up to the end of the file
		} else if err != nil {
			return 0, fmt.Errorf("lseek(SEEK_DATA): %w", err)
		}
		d = min(d, end)
		holes += d - h
		pos = d
	}
	return holes, nil
}
