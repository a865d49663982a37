package pager

import (
	"os"

	"golang.org/x/sys/unix"
)

// openDirect opens path with O_DIRECT.
func openDirect(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
