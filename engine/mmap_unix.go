//go:build unix

package engine

import (
	"fmt"
	"os"
	"unsafe"

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

// adviseRandom tells the kernel that b, part of a mapping, is read at
// random places: a fault then reads only its page, not the 128 KB around
// it. The embedding of a model whose head is another tensor is read one
// row per token, so a device that runs a pruned head reads only the rows
// of the tokens it sees. Advice is best effort: errors are ignored.
func adviseRandom(b []byte) {
	page := uintptr(os.Getpagesize())
	if len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := int((page - start%page) % page)
	hi := len(b) - int((start+uintptr(len(b)))%page)
	if hi-lo <= 0 {
		return
	}
	_ = unix.Madvise(b[lo:hi], unix.MADV_RANDOM)
}

// lockMemory locks b in RAM (mlock).
func lockMemory(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.Mlock(b)
}
