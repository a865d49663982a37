package hubtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
)

// Content is a file's bytes: Size bytes readable from R.
type Content struct {
	// R holds the bytes; it is read with ReadAt only, concurrently.
	R io.ReaderAt
	// Size is the file's length.
	Size int64
	// SHA256 is the content's sha256 in hex, if the caller knows it; the
	// server computes it (once, on first use) otherwise.
	SHA256 string
}

// Bytes is content held in memory.
func Bytes(b []byte) Content { return Content{R: bytes.NewReader(b), Size: int64(len(b))} }

// patternPeriod is prime, so a read misplaced by any power of two lands on
// different bytes.
const patternPeriod = 1<<20 + 7

// patternShift rotates the table from one period to the next, so that
// bytes read a whole period away from where they belong differ too.
const patternShift = 7919

// Pattern is an io.ReaderAt of unbounded deterministic pseudo-random bytes
// that are computed, not stored: a multi-GB test file costs 1 MiB of memory,
// and reading it is a memory copy. The byte at offset o is
// table[(o + (o/period)*shift) mod period] for a prime period.
type Pattern struct{ table []byte }

// NewPattern returns the pattern of the given seed.
func NewPattern(seed uint64) *Pattern {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	t := make([]byte, patternPeriod)
	for i := 0; i < len(t); i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(t[i:], w[:])
	}
	return &Pattern{table: t}
}

// ReadAt fills b with the pattern's bytes at off; it never fails for
// off >= 0.
func (p *Pattern) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) {
		o := off + int64(n)
		inPeriod := o % patternPeriod
		idx := (inPeriod + (o/patternPeriod)*patternShift) % patternPeriod
		// Copy up to the end of the period or the end of the table,
		// whichever comes first.
		run := min(patternPeriod-inPeriod, patternPeriod-idx, int64(len(b)-n))
		n += copy(b[n:n+int(run)], p.table[idx:])
	}
	return n, nil
}

// PatternContent is size bytes of the pattern of seed.
func PatternContent(seed uint64, size int64) Content {
	return Content{R: NewPattern(seed), Size: size}
}
