package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
)

const (
	// maxPrefix bounds the copy kept of a header's reads (headers of 12 MB
	// cost ~16 MB of reads): the bytes past the header in them are often
	// tensor data a build or fetch needs, and a whole-file check hashes them
	// instead of fetching them again.
	maxPrefix = 32 << 20
	// maxSkip is the most a sequential reader may jump forward and still be
	// served from the stream already fetching ahead (read and discarded):
	// padding between tensors, or a tensor a comparison does not need.
	maxSkip = 4 << 20
	// wholeGap is the largest hole between ranges, or before the first or
	// after the last, for which a build still counts as reading the whole
	// file: the holes are fetched too (range requests coalesce holes of
	// this size anyway) so that the file's checksum can be verified.
	wholeGap = 64 << 10
)

// remoteFile is a remote file as the toolkit reads it. While the header is
// decoded, each ReadAt is one range request (the decoder sizes them) and the
// bytes are kept. Afterwards it is a plan.RangeStreamer (a build's ranges
// are fetched concurrently, ahead, and checked against the Hub's checksum
// when they cover the whole file), and sequential ReadAt calls (a diff
// hashing tensors) are served from a stream fetching ahead instead of one
// small request each. ReadAt calls are serialized: they share that stream.
type remoteFile struct {
	f   *hfremote.File
	ctx context.Context
	opt hfremote.RangeOptions

	mu       sync.Mutex
	decoding bool
	prefix   []byte // bytes [0, len(prefix)) of the file
	fwd      io.ReadCloser
	fwdPos   int64 // file offset of fwd's next byte
	lastEnd  int64 // end of the last ReadAt
	verified string
}

func newRemoteFile(ctx context.Context, f *hfremote.File, opt hfremote.RangeOptions) *remoteFile {
	return &remoteFile{f: f, ctx: ctx, opt: opt, decoding: true}
}

// headerDone ends the header phase: later reads may fetch ahead.
func (r *remoteFile) headerDone() {
	r.mu.Lock()
	r.decoding = false
	r.mu.Unlock()
}

// ReadAt implements io.ReaderAt.
func (r *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	size := r.f.Size()
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", r.f.Name(), off)
	}
	if off >= size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), size-off))
	k, err := r.read(p[:n], off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return k, err
}

func (r *remoteFile) read(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := off + int64(len(p))
	defer func() { r.lastEnd = end }()
	if end <= int64(len(r.prefix)) {
		return copy(p, r.prefix[off:]), nil
	}
	if r.decoding {
		k, err := r.f.ReadAtContext(r.ctx, p, off)
		if off == int64(len(r.prefix)) && len(r.prefix)+k <= maxPrefix {
			r.prefix = append(r.prefix, p[:k]...)
		}
		return k, err
	}
	if r.fwd != nil && (off < r.fwdPos || off-r.fwdPos > maxSkip) {
		r.fwd.Close()
		r.fwd = nil
	}
	if r.fwd == nil {
		if r.lastEnd == 0 || off < r.lastEnd || off-r.lastEnd > maxSkip {
			// Not a continuation: one request for what is asked.
			return r.f.ReadAtContext(r.ctx, p, off)
		}
		r.fwd = r.f.Ranges(r.ctx, []hfremote.Range{{Off: off, Len: r.f.Size() - off}}, r.opt)
		r.fwdPos = off
	}
	if skip := off - r.fwdPos; skip > 0 {
		k, err := io.CopyN(io.Discard, r.fwd, skip)
		r.fwdPos += k
		if err != nil {
			return 0, r.dropForward(err)
		}
	}
	k, err := io.ReadFull(r.fwd, p)
	r.fwdPos += int64(k)
	if err != nil {
		return k, r.dropForward(err)
	}
	return k, nil
}

func (r *remoteFile) dropForward(err error) error {
	r.fwd.Close()
	r.fwd = nil
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Close stops reading ahead and closes the file.
func (r *remoteFile) Close() error {
	r.mu.Lock()
	if r.fwd != nil {
		r.fwd.Close()
		r.fwd = nil
	}
	r.mu.Unlock()
	return r.f.Close()
}

// Verified returns the checksum algorithm a whole-file read was checked
// with ("sha256"), or "" when no read covered the whole file.
func (r *remoteFile) Verified() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verified
}

// StreamRanges implements plan.RangeStreamer. Bytes already read with the
// header come from memory. When the ranges go through the file in order,
// leaving only small holes (a build copying every tensor), the whole file
// is read instead and checked against the checksum the Hub published: a
// mismatch fails the Read that delivers the last byte, so the build fails
// before its output is committed.
func (r *remoteFile) StreamRanges(ctx context.Context, ranges []plan.Range) io.ReadCloser {
	r.mu.Lock()
	prefix := r.prefix
	r.mu.Unlock()
	hp := int64(len(prefix))
	sr := &segReader{}
	var rest []hfremote.Range // what is not held, in order
	for _, g := range ranges {
		if g.Off < hp {
			k := min(g.End(), hp)
			sr.segs = append(sr.segs, seg{mem: prefix[g.Off:k]})
			g = plan.Range{Off: k, Len: g.End() - k}
		}
		if g.Len > 0 {
			sr.segs = append(sr.segs, seg{n: g.Len})
			rest = append(rest, hfremote.Range{Off: g.Off, Len: g.Len})
		}
	}
	algo, _ := r.f.Checksum()
	if algo == "" || !coversWhole(ranges, hp, r.f.Size()) {
		sr.rc = r.f.Ranges(ctx, rest, r.opt)
		return sr
	}
	// The whole file after the prefix comes in one stream: each fetched
	// segment first skips the hole before it.
	pos, j := hp, 0
	for i := range sr.segs {
		if sr.segs[i].mem == nil {
			sr.segs[i].skip, pos = rest[j].Off-pos, rest[j].Off+rest[j].Len
			j++
		}
	}
	sr.rc, sr.check = r.f.VerifyingReaderFrom(ctx, prefix, r.opt), true
	sr.onVerified = func() {
		r.mu.Lock()
		r.verified = algo
		r.mu.Unlock()
	}
	return sr
}

// cost returns the requests and bytes StreamRanges(ranges) would cost.
func (r *remoteFile) cost(ranges []plan.Range) (requests int, bytes int64, err error) {
	r.mu.Lock()
	hp := int64(len(r.prefix))
	r.mu.Unlock()
	if algo, _ := r.f.Checksum(); algo != "" && coversWhole(ranges, hp, r.f.Size()) {
		from := min(hp, r.f.Size())
		return r.f.RangesCost([]hfremote.Range{{Off: from, Len: r.f.Size() - from}}, r.opt)
	}
	var rest []hfremote.Range
	for _, g := range ranges {
		if g.Off < hp {
			k := min(g.End(), hp)
			g = plan.Range{Off: k, Len: g.End() - k}
		}
		if g.Len > 0 {
			rest = append(rest, hfremote.Range{Off: g.Off, Len: g.Len})
		}
	}
	return r.f.RangesCost(rest, r.opt)
}

// coversWhole reports whether ranges read the file from the end of the
// prefix already held to its end, in order, with holes of at most wholeGap.
func coversWhole(ranges []plan.Range, have, size int64) bool {
	pos := have
	for _, g := range ranges {
		start := max(g.Off, have)
		if g.End() <= start {
			continue // held already (or empty)
		}
		if start < pos || start-pos > wholeGap {
			return false // out of order, overlapping, or a big hole
		}
		pos = g.End()
	}
	return size-pos <= wholeGap
}

// seg is a part of a StreamRanges answer: bytes held in memory, or n bytes
// of the stream after skipping skip.
type seg struct {
	mem     []byte
	skip, n int64
}

// segReader delivers segs in order. With check set, the stream is a
// verifying reader of the rest of the file: once the last segment is
// delivered it is read to its end, where the checksum is compared.
type segReader struct {
	rc         io.ReadCloser
	segs       []seg
	k          int
	done       int64 // bytes of segs[k] delivered
	check      bool
	onVerified func()
	err        error
}

// Read delivers the next bytes of the segments.
func (s *segReader) Read(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && s.err == nil && s.k < len(s.segs) {
		g := &s.segs[s.k]
		var k int
		if g.mem != nil {
			k = copy(p, g.mem[s.done:])
		} else {
			if s.done == 0 && g.skip > 0 {
				if _, err := io.CopyN(io.Discard, s.rc, g.skip); err != nil {
					s.err = unexpected(err)
					break
				}
				g.skip = 0
			}
			k, s.err = io.ReadFull(s.rc, p[:min(int64(len(p)), g.n-s.done)])
			s.err = unexpected(s.err)
		}
		n, p, s.done = n+k, p[k:], s.done+int64(k)
		if s.done == g.len() {
			s.k, s.done = s.k+1, 0
		}
		if s.k == len(s.segs) && s.check && s.err == nil {
			if _, err := io.Copy(io.Discard, s.rc); err != nil {
				s.err = err
			} else if s.onVerified != nil {
				s.onVerified()
			}
		}
	}
	if s.err != nil {
		return n, s.err
	}
	if n == 0 && s.k == len(s.segs) {
		return 0, io.EOF
	}
	return n, nil
}

func (g *seg) len() int64 {
	if g.mem != nil {
		return int64(len(g.mem))
	}
	return g.n
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close stops the fetching.
func (s *segReader) Close() error {
	if s.rc != nil {
		s.rc.Close()
	}
	return nil
}
