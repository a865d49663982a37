package hfremote

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"
)

// Range is Len bytes of a file starting at Off.
type Range struct{ Off, Len int64 }

// RangeOptions tune File.Ranges; zero fields take the values of the Options
// given to Open.
type RangeOptions struct {
	// Concurrency is the most requests in flight (and fetched chunks
	// waiting to be read).
	Concurrency int
	// ChunkSize is the largest request; longer ranges are split.
	ChunkSize int64
	// MaxGap is the largest hole between two consecutive ranges that is
	// read through (and discarded) so that both come in one request.
	MaxGap int64
}

// request is one planned range request and the parts of it the caller
// asked for (the rest are gaps read through to save a request).
type request struct {
	off, len int64
	keep     []span // relative to off, in delivery order
}

type span struct{ off, len int64 }

// plan turns ranges into requests: each at most chunk bytes, a range that
// follows the previous one within gap bytes joining its request. Ranges are
// delivered in the order given, so only forward neighbours are joined.
func plan(ranges []Range, size, chunk, gap int64) ([]request, error) {
	var reqs []request
	for i, r := range ranges {
		if r.Off < 0 || r.Len < 0 || r.Off > size || r.Len > size-r.Off {
			return nil, fmt.Errorf("range %d (%d bytes at offset %d) is outside the %d-byte file", i, r.Len, r.Off, size)
		}
		off, n := r.Off, r.Len
		for n > 0 {
			if k := len(reqs); k > 0 {
				q := &reqs[k-1]
				end := q.off + q.len
				if off >= end && off-end <= gap && off < q.off+chunk {
					take := min(n, q.off+chunk-off)
					q.keep = append(q.keep, span{off - q.off, take})
					q.len = off + take - q.off
					off, n = off+take, n-take
					continue
				}
			}
			take := min(n, chunk)
			reqs = append(reqs, request{off: off, len: take, keep: []span{{0, take}}})
			off, n = off+take, n-take
		}
	}
	return reqs, nil
}

// Ranges returns the bytes of ranges, concatenated in the order given,
// fetched ahead by up to Concurrency range requests at once. Ranges longer
// than ChunkSize are split; consecutive ranges less than MaxGap apart share
// a request (the gap's bytes are discarded and counted as wasted).
//
// Memory: at most Concurrency x ChunkSize bytes are held, since a request
// starts only when fewer than Concurrency fetched-or-in-flight chunks are
// waiting to be read (with the defaults, 4 x 8 MiB = 32 MiB).
//
// The first failure (after retries) stops all requests and is returned by
// Read. Close stops fetching and waits for requests in flight to end; it
// must be called.
func (f *File) Ranges(ctx context.Context, ranges []Range, opt RangeOptions) io.ReadCloser {
	conc := positiveOr(opt.Concurrency, f.c.conc)
	chunk := positiveOr(opt.ChunkSize, f.c.chunk)
	gap := opt.MaxGap
	if gap <= 0 {
		gap = f.c.gap
	}
	r := &rangeReader{done: make(chan struct{})}
	reqs, err := plan(ranges, f.size, chunk, gap)
	if err != nil {
		r.err = &Error{Source: f.name, Err: ErrBadSpec, Msg: err.Error()}
		r.cancel = func(error) {}
		close(r.done)
		return r
	}
	r.reqs = reqs
	r.slots = make([]slot, len(reqs))
	for i := range r.slots {
		r.slots[i].ready = make(chan struct{})
	}
	r.window = make(chan struct{}, conc)
	r.free = make(chan []byte, conc)
	ctx, r.cancel = context.WithCancelCause(ctx)
	g, gctx := errgroup.WithContext(ctx)
	go r.dispatch(f, g, gctx)
	return r
}

// RangesCost returns the requests Ranges would send for ranges and the
// bytes they would receive (holes read through included), without sending
// any: what a dry run reports before a build.
func (f *File) RangesCost(ranges []Range, opt RangeOptions) (requests int, bytes int64, err error) {
	gap := opt.MaxGap
	if gap <= 0 {
		gap = f.c.gap
	}
	reqs, err := plan(ranges, f.size, positiveOr(opt.ChunkSize, f.c.chunk), gap)
	if err != nil {
		return 0, 0, err
	}
	for _, q := range reqs {
		bytes += q.len
	}
	return len(reqs), bytes, nil
}

// rangeReader delivers the chunks of a Ranges call in order.
type rangeReader struct {
	reqs   []request
	slots  []slot
	window chan struct{} // one token per chunk in flight or waiting to be read
	free   chan []byte   // buffers of chunks already read, for reuse
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when every request has ended
	werr   error         // the first failure, valid after done

	cur, piece int   // the request and span being read
	pos        int64 // bytes of that span already read
	err        error
}

type slot struct {
	ready chan struct{} // closed when buf and err are set
	buf   []byte
	err   error
}

// errReaderClosed stops the requests of a reader closed before its end.
var errReaderClosed = errors.New("range reader closed")

func (r *rangeReader) dispatch(f *File, g *errgroup.Group, ctx context.Context) {
	defer close(r.done)
	for i := range r.reqs {
		select {
		case r.window <- struct{}{}:
		case <-ctx.Done():
			// Requests not started will never be: make sure Read sees why,
			// even when none of those that ran failed.
			if r.werr = g.Wait(); r.werr == nil {
				r.werr = context.Cause(ctx)
			}
			return
		}
		g.Go(func() error {
			q, s := r.reqs[i], &r.slots[i]
			var buf []byte
			select {
			case buf = <-r.free:
			default:
			}
			if int64(cap(buf)) < q.len {
				buf = make([]byte, q.len)
			}
			s.buf = buf[:q.len]
			_, s.err = f.fetch(ctx, s.buf, q.off)
			if s.err == nil {
				kept := int64(0)
				for _, sp := range q.keep {
					kept += sp.len
				}
				f.cnt.wasted(q.len - kept)
			}
			close(s.ready)
			return s.err
		})
	}
	r.werr = g.Wait()
}

// Read copies the next bytes. It blocks only when it has copied nothing yet.
func (r *rangeReader) Read(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if r.err != nil {
			return n, r.err
		}
		if r.cur == len(r.reqs) {
			return n, io.EOF
		}
		s := &r.slots[r.cur]
		if !r.wait(s, n == 0) {
			return n, nil
		}
		if r.err != nil {
			continue
		}
		sp := r.reqs[r.cur].keep[r.piece]
		k := copy(p, s.buf[sp.off+r.pos:sp.off+sp.len])
		n, p, r.pos = n+k, p[k:], r.pos+int64(k)
		if r.pos < sp.len {
			continue
		}
		r.piece, r.pos = r.piece+1, 0
		if r.piece == len(r.reqs[r.cur].keep) {
			// Hand the buffer to a later request: there are never more
			// than Concurrency of them, so the pool never overflows.
			select {
			case r.free <- s.buf:
			default:
			}
			s.buf = nil
			<-r.window
			r.cur, r.piece = r.cur+1, 0
		}
	}
	if n == 0 && r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// wait waits (or, when block is false, only checks) for slot s. It reports
// whether the reader can go on: the slot is ready, or r.err is now set.
func (r *rangeReader) wait(s *slot, block bool) bool {
	if !block {
		select {
		case <-s.ready:
		default:
			return false
		}
	} else {
		select {
		case <-s.ready:
		case <-r.done:
		}
	}
	select {
	case <-s.ready:
		if s.err == nil {
			return true
		}
	default:
	}
	// The slot failed or will never be filled: report the first failure.
	<-r.done
	r.err = r.werr
	if r.err == nil {
		r.err = s.err
	}
	return true
}

// Close stops the requests in flight and waits for them to end.
func (r *rangeReader) Close() error {
	r.cancel(errReaderClosed)
	<-r.done
	for i := r.cur; i < len(r.slots); i++ {
		r.slots[i].buf = nil
	}
	if r.err == nil {
		r.err = errReaderClosed
	}
	return nil
}
