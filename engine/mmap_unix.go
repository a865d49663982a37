//go:build unix

package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the whole file read-only. The pages are shared with the page
// cache, so weights are never copied and the kernel can drop them under
// memory pressure (the file is their backing store).
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to map on this platform", size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		// Some filesystems cannot map; reading into memory still works.
		return readAll(f, size)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
