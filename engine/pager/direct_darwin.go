package pager

import (
	"os"

	"golang.org/x/sys/unix"
)

// openDirect opens path with F_NOCACHE, Apple's uncached reads (no
// alignment rules, but the same interface).
func openDirect(path string) (*os.File, error) {
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
