package osmem

import (
	"os"

	"golang.org/x/sys/unix"
)

// OpenDirect opens path for reading with F_NOCACHE, Apple's uncached
// reads (no alignment rules, but callers align as for O_DIRECT, so one
// read path serves both).
func OpenDirect(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_NOCACHE, 1); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
