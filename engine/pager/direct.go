package pager

import (
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/ggufkit/gguf/internal/osmem"
)

// DirectSource reads a file without filling the page cache: the
// page-aligned interior of each read with direct I/O (O_DIRECT on Linux,
// F_NOCACHE on Apple systems), the partial pages at its two edges through
// the page cache. Expert tensors do not start or end on page boundaries,
// and direct I/O refuses unaligned offsets and lengths; reading the shared
// edge pages with a plain read once is the seeds' fix (§21.8). On a
// device whose RAM is all taken by the model, cached expert pages would
// push out the mapped non-expert weights (E140: half the speed).
type DirectSource struct {
	Cached, Direct *os.File
	// Page is the alignment direct I/O needs (the page size).
	Page int64
}

// OpenDirect opens path for DirectSource reads.
func OpenDirect(path string) (*DirectSource, error) {
	c, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := osmem.OpenDirect(path)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("direct I/O on %s: %w", path, err)
	}
	return &DirectSource{Cached: c, Direct: d, Page: int64(os.Getpagesize())}, nil
}

// Close closes both files.
func (s *DirectSource) Close() error {
	err := s.Direct.Close()
	if cerr := s.Cached.Close(); err == nil {
		err = cerr
	}
	return err
}

// interior returns the page-aligned part [a0, a1) of [off, off+n), empty
// (a0 == a1) when there is none.
func (s *DirectSource) interior(off int64, n int) (a0, a1 int64) {
	a0 = (off + s.Page - 1) / s.Page * s.Page
	a1 = (off + int64(n)) / s.Page * s.Page
	if a1 <= a0 {
		return off, off
	}
	return a0, a1
}

// ReadAt reads len(p) bytes at off; p's interior (see interior) must be
// page-aligned in memory, as Loader.Load arranges.
func (s *DirectSource) ReadAt(p []byte, off int64) (int, error) {
	a0, a1 := s.interior(off, len(p))
	if a0 == a1 {
		return s.Cached.ReadAt(p, off)
	}
	head, mid, tail := p[:a0-off], p[a0-off:a1-off], p[a1-off:]
	if n, err := s.Cached.ReadAt(head, off); n < len(head) {
		return n, err
	}
	if n, err := s.Direct.ReadAt(mid, a0); n < len(mid) {
		return len(head) + n, err
	}
	if n, err := s.Cached.ReadAt(tail, a1); n < len(tail) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return len(head) + len(mid) + n, err
	}
	return len(p), nil
}

// align returns where in b a read of n bytes at off must start for its
// interior to be page-aligned in memory (b has n + Page bytes).
func (s *DirectSource) align(b []byte, off int64, n int) int {
	a0, a1 := s.interior(off, n)
	if a0 == a1 {
		return 0
	}
	addr := int64(uintptr(unsafe.Pointer(&b[0]))) + (a0 - off)
	return int((s.Page - addr%s.Page) % s.Page)
}
