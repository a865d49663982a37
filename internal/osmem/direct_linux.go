package osmem

import (
	"os"

	"golang.org/x/sys/unix"
)

// OpenDirect opens path for reading with O_DIRECT: reads bypass the page
// cache, and their offsets, lengths and buffers must be aligned to the
// page size.
func OpenDirect(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
