package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// HeaderWindow is the size of the first read of a header from an
// io.ReaderAt: most headers (all but those holding a large tokenizer) fit, so
// a remote file's header usually costs one request. Later reads are sized
// from the decoder's estimate of what remains (see windowSource.take).
const HeaderWindow = 1 << 20

// windowSource reads a header from an io.ReaderAt in few, large reads.
type windowSource struct {
	r    io.ReaderAt
	size int64
	buf  []byte // bytes [base, base+len(buf)) of the file
	base int64
	off  int // consumed bytes of buf
}

func (s *windowSource) pos() int64          { return s.base + int64(s.off) }
func (s *windowSource) remaining() int64    { return s.size - s.pos() }
func (s *windowSource) avail(n int64) int64 { return max(0, min(n, s.remaining())) }

func (s *windowSource) take(n, hint int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("gguf: negative read of %d bytes", n)
	}
	if int64(len(s.buf)-s.off) >= n {
		b := s.buf[s.off : s.off+int(n)]
		s.off += int(n)
		return b, nil
	}
	if n > s.remaining() {
		return nil, io.ErrUnexpectedEOF
	}
	// The first read is one window. A later one reads up to the estimated
	// end of the header (est) plus a fifth of it plus one more window. When
	// the estimate is right (or low by what was never announced) the header
	// then costs at most 1.2 x its size + 1 MiB, within the 1.25 x + 1 MiB a
	// remote read may spend, and the margin usually covers an item not met
	// yet (the merges after the tokens), so headers up to ~12 MB take at
	// most 3 reads. No policy can bound both: an array that nothing before
	// it announces is known only when reached, and reading far beyond the
	// estimate would waste that much on every header without one.
	have := int64(len(s.buf) - s.off)
	start := s.base + int64(len(s.buf))
	end := max(n, HeaderWindow)
	if start > 0 {
		est := s.pos() + n + min(max(hint, 0), s.size)
		end = est + est/5 + HeaderWindow
	}
	end = min(end, s.size)
	want := end - start
	nb := make([]byte, have+want)
	copy(nb, s.buf[s.off:])
	k, err := s.r.ReadAt(nb[have:], start)
	if int64(k) < want {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("gguf: reading header bytes [%d, %d): %w", start, start+want, err)
	}
	s.base = s.pos()
	s.buf, s.off = nb, 0
	return s.take(n, hint)
}

// streamSource reads a header from a plain io.Reader (a pipe, stdin). It
// grows its buffer only as data arrives, so a hostile length cannot make it
// allocate more than the stream really holds.
type streamSource struct {
	r   io.Reader
	buf []byte
	off int
	n   int64 // bytes consumed before buf[off]
	err error
}

func (s *streamSource) pos() int64       { return s.n + int64(s.off) }
func (s *streamSource) remaining() int64 { return -1 }

func (s *streamSource) take(n, _ int64) ([]byte, error) {
	for int64(len(s.buf)-s.off) < n {
		if s.err != nil {
			if errors.Is(s.err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, s.err
		}
		if s.off > 0 {
			s.n += int64(s.off)
			s.buf = append(s.buf[:0], s.buf[s.off:]...)
			s.off = 0
		}
		// Read in bounded steps: allocation follows the data, not the claim.
		step := int(min(max(n-int64(len(s.buf)), 64<<10), 16<<20))
		if cap(s.buf)-len(s.buf) < step {
			nb := make([]byte, len(s.buf), len(s.buf)+max(step, len(s.buf)))
			copy(nb, s.buf)
			s.buf = nb
		}
		k, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+k]
		if err != nil {
			s.err = err
		}
	}
	b := s.buf[s.off : s.off+int(n)]
	s.off += int(n)
	return b, nil
}

func (s *streamSource) avail(n int64) int64 {
	// take may move the buffered bytes to the front: restore the position,
	// not the index.
	at := s.pos()
	_, err := s.take(n, 0)
	s.off = int(at - s.n)
	if err == nil {
		return n
	}
	return min(n, int64(len(s.buf)-s.off))
}

// rest returns a reader of everything after the bytes consumed so far.
func (s *streamSource) rest() io.Reader {
	left := s.buf[s.off:]
	if s.err != nil {
		if errors.Is(s.err, io.EOF) {
			return bytes.NewReader(left)
		}
		return io.MultiReader(bytes.NewReader(left), errReader{s.err})
	}
	return io.MultiReader(bytes.NewReader(left), s.r)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
