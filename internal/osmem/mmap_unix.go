//go:build unix

package osmem

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps the first size bytes of f read-only. The pages are shared with
// the page cache, so weights are never copied and the kernel can drop them
// under memory pressure (the file is their backing store). mapped reports
// a real mapping; false means the file was read into memory instead
// (ReadAll), as it is on filesystems that cannot map. unmap releases
// either.
func Map(f *os.File, size int64) (b []byte, unmap func() error, mapped bool, err error) {
	if size == 0 {
		return nil, func() error { return nil }, false, nil
	}
	if int64(int(size)) != size {
		return nil, nil, false, fmt.Errorf("file of %d bytes is too large to map on this platform", size)
	}
	b, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		// Some filesystems cannot map; reading into memory still works.
		b, unmap, err = ReadAll(f, size)
		return b, unmap, false, err
	}
	return b, func() error { return unix.Munmap(b) }, true, nil
}

// pageInner returns the whole pages inside b: advice applies to pages, and
// the partial pages at b's edges hold bytes of its neighbours.
func pageInner(b []byte) []byte {
	page := uintptr(os.Getpagesize())
	if len(b) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := int((page - start%page) % page)
	hi := len(b) - int((start+uintptr(len(b)))%page)
	if hi-lo <= 0 {
		return nil
	}
	return b[lo:hi]
}

// DropPages drops the whole pages of b, part of a shared read-only file
// mapping, from the process (MADV_DONTNEED; unlocked first when locked): a
// later read faults them in from the file again. Best effort.
func DropPages(b []byte, locked bool) {
	if b = pageInner(b); b == nil {
		return
	}
	if locked {
		_ = unix.Munlock(b)
	}
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
}

// AdviseRandom tells the kernel that b, part of a mapping, is read at
// random places: a fault then reads only its page, not the 128 KB around
// it. The embedding of a model whose head is another tensor is read one
// row per token, so a device that runs a pruned head reads only the rows
// of the tokens it sees. Advice is best effort: errors are ignored.
func AdviseRandom(b []byte) {
	if b = pageInner(b); b != nil {
		_ = unix.Madvise(b, unix.MADV_RANDOM)
	}
}

// Lock locks b in RAM (mlock).
func Lock(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.Mlock(b)
}

// Unlock undoes Lock.
func Unlock(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.Munlock(b)
}
