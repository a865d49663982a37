package pager

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ggufkit/gguf/internal/osmem"
)

// Buffer is one part of one slot (an expert's gate, up or down bytes),
// preallocated once, with the state of the read that fills it.
type Buffer struct {
	raw   []byte // data plus a page of slack for direct reads
	data  []byte // where the last read went (within raw, for a direct read)
	size  int    // the most a read may fill
	gen   uint64 // the loader's number of the latest Load (or Cancel); a queued read of an older gen is void
	state bufState
	src   io.ReaderAt
	off   int64
	n     int
	prio  int64
	err   error
}

type bufState int

const (
	bufEmpty   bufState = iota
	bufQueued           // a read is in the queue
	bufReading          // a reader is filling it
	bufReady            // holds the bytes
	bufDropped          // a stale prefetch was dropped before it was read
)

// NewBuffer returns a buffer of n bytes (8-byte aligned, as the kernels
// read float32 and float64 fields in place), with slack for direct reads
// when direct is set.
func NewBuffer(n int, direct bool) *Buffer {
	size := n
	if direct {
		size += os.Getpagesize()
	}
	raw := osmem.AlignedBytes(size)
	return &Buffer{raw: raw, data: raw[:n], size: n}
}

// Bytes is the buffer's size: the most one read may fill.
func (b *Buffer) Bytes() int { return b.size }

// LoadStats counts what the readers did.
type LoadStats struct {
	Reads     int64
	BytesRead int64
	// Dropped is the prefetches dropped unread because the forward pass
	// had gone past their layer; Waits the times the forward pass had to
	// wait for a read, Wait the time it waited.
	Dropped int64
	Waits   int64
	Wait    time.Duration
}

// Loader is K reader goroutines that fill buffers from files, most urgent
// read first: by priority (the runtime passes token x layers + layer),
// demand reads before prefetches of the same priority, then in order of
// request (the runtime asks for one expert's gate, up and down
// before the next expert's, so the first expert is complete, and computed,
// while the others are still read). A prefetch whose priority is below the
// forward pass's progress (SetProgress) is dropped unread: its layer has
// been passed; one the forward pass uses becomes a demand read (Promote).
type Loader struct {
	mu       sync.Mutex
	jobs     sync.Cond // readers wait for work
	done     sync.Cond // Wait waits for reads
	queue    jobQueue
	seq      uint64
	gens     uint64 // the loads so far: Buffer.gen's numbers
	progress int64
	closed   bool
	// prefetching counts prefetch reads in flight (at most one).
	prefetching int
	flash       *Flash
	stats       LoadStats
	wg          sync.WaitGroup
	free        []*job // spent jobs, reused: queueing a read allocates nothing
}

type job struct {
	b        *Buffer
	gen      uint64
	prio     int64
	seq      uint64
	prefetch bool
}

// NewLoader starts readers goroutines; flash, when not nil, throttles
// them to a simulated device.
func NewLoader(readers int, flash *Flash) *Loader {
	l := &Loader{flash: flash}
	l.jobs.L, l.done.L = &l.mu, &l.mu
	for range max(1, readers) {
		l.wg.Add(1)
		go l.reader()
	}
	return l
}

// Close stops the readers after the reads in flight.
func (l *Loader) Close() {
	l.mu.Lock()
	l.closed = true
	l.jobs.Broadcast()
	l.done.Broadcast()
	l.mu.Unlock()
	l.wg.Wait()
}

// Stats returns the counts so far.
func (l *Loader) Stats() LoadStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// SetProgress records how far the forward pass is (in the priorities'
// unit): queued prefetches below it are stale.
func (l *Loader) SetProgress(p int64) {
	l.mu.Lock()
	l.progress = p
	l.mu.Unlock()
}

// Promote makes a queued prefetch into b a demand read: the forward pass
// has reached its layer and uses it. Every reader takes it then, not one
// prefetch at a time, or the pass would wait for its predicted experts to
// come in one by one. The layer's other prefetches, guesses it does not
// use, stay behind its demand reads until they are dropped as stale.
func (l *Loader) Promote(b *Buffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := l.queuedPrefetch(b); i >= 0 {
		l.queue[i].prefetch = false
		heap.Fix(&l.queue, i) // demand reads go before prefetches
		l.jobs.Broadcast()
	}
}

// queuedPrefetch returns the index in the queue of b's current read if it
// is a queued prefetch, else -1.
func (l *Loader) queuedPrefetch(b *Buffer) int {
	if b.state != bufQueued {
		return -1
	}
	for i, j := range l.queue {
		if j.b == b && j.gen == b.gen && j.prefetch {
			return i
		}
	}
	return -1
}

// Cancel drops a queued prefetch into b unread: the forward pass reached
// its layer and did not use it. A read under way is left to finish.
func (l *Loader) Cancel(b *Buffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queuedPrefetch(b) >= 0 {
		b.gen = l.nextGen() // voids the queued job
		b.state = bufDropped
		l.stats.Dropped++
		l.done.Broadcast()
	}
}

// Ready reports whether b holds its bytes (or its read failed), so that
// Wait returns at once.
func (l *Loader) Ready(b *Buffer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return b.state == bufReady || b.err != nil
}

// Load queues a read of n bytes at off of src into b, replacing whatever
// b held. If a reader is filling b with an older load, Load waits for it
// first, so two reads never write one buffer.
func (l *Loader) Load(b *Buffer, src io.ReaderAt, off int64, n int, prio int64, prefetch bool) error {
	if n > b.size {
		return fmt.Errorf("a read of %d bytes does not fit a %d-byte slot", n, b.size)
	}
	if n == 0 {
		return fmt.Errorf("an empty read")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for b.state == bufReading {
		l.done.Wait()
	}
	b.gen = l.nextGen()
	b.src, b.off, b.n, b.prio, b.err = src, off, n, prio, nil
	if ds, ok := src.(*DirectSource); ok {
		if n+int(ds.Page) > len(b.raw) {
			return fmt.Errorf("a direct read of %d bytes needs a buffer made for direct reads", n)
		}
		start := ds.align(b.raw, off, n)
		b.data = b.raw[start : start+n]
	}
	l.queueLocked(b, prefetch)
	return nil
}

func (l *Loader) queueLocked(b *Buffer, prefetch bool) {
	b.state = bufQueued
	l.seq++
	var j *job
	if n := len(l.free); n > 0 {
		j, l.free = l.free[n-1], l.free[:n-1]
	} else {
		j = new(job)
	}
	*j = job{b: b, gen: b.gen, prio: b.prio, seq: l.seq, prefetch: prefetch}
	heap.Push(&l.queue, j)
	l.jobs.Signal()
}

// nextGen numbers a load (l.mu held).
func (l *Loader) nextGen() uint64 {
	l.gens++
	return l.gens
}

// Gen identifies the latest load into b, among all of l's loads (a
// buffer swapped between slots, as staging does, never shows another
// buffer's number): the bytes Wait returns are those of the load Gen
// names when it is called after Wait (a paged expert's slot is repacked
// once per read, statePager.matrix).
func (l *Loader) Gen(b *Buffer) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return b.gen
}

// Wait returns b's bytes once they are read. A dropped prefetch is read
// now, at the forward pass's priority.
func (l *Loader) Wait(b *Buffer) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b.state == bufEmpty {
		return nil, errors.New("pager: waiting for a slot that was never loaded")
	}
	if b.state != bufReady && b.err == nil {
		t := time.Now()
		for b.state != bufReady && b.err == nil && !l.closed {
			if b.state == bufDropped {
				// dropped before or while we waited: read it now, as a
				// demand read at the forward pass's priority
				b.prio = l.progress
				l.queueLocked(b, false)
			}
			l.done.Wait()
		}
		l.stats.Waits++
		l.stats.Wait += time.Since(t)
	}
	if b.err != nil {
		return nil, b.err
	}
	if b.state != bufReady {
		return nil, errors.New("pager: closed")
	}
	return b.data[:b.n], nil
}

func (l *Loader) reader() {
	defer l.wg.Done()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		// Prefetches use idle reader time only: one at a time, so a
		// device that reads one request after another is never busy with
		// guesses when the forward pass asks for what it needs.
		for !l.closed && (len(l.queue) == 0 || l.queue[0].prefetch && l.prefetching > 0) {
			l.jobs.Wait()
		}
		if l.closed {
			return
		}
		jp := heap.Pop(&l.queue).(*job)
		j := *jp
		l.free = append(l.free, jp)
		b := j.b
		if j.gen != b.gen || b.state != bufQueued {
			continue // superseded by a later Load
		}
		if j.prefetch && j.prio < l.progress {
			b.state = bufDropped
			l.stats.Dropped++
			l.done.Broadcast()
			continue
		}
		b.state = bufReading
		src, off, dst := b.src, b.off, b.data[:b.n]
		if j.prefetch {
			l.prefetching++
		}
		l.mu.Unlock()
		err := l.read(src, off, dst)
		l.mu.Lock()
		if j.prefetch {
			l.prefetching--
			l.jobs.Broadcast()
		}
		if err != nil {
			b.err = err
			b.state = bufEmpty
		} else {
			b.state = bufReady
			l.stats.Reads++
			l.stats.BytesRead += int64(len(dst))
		}
		l.done.Broadcast()
	}
}

// read fills dst from src at off, through the simulated flash if any.
func (l *Loader) read(src io.ReaderAt, off int64, dst []byte) error {
	if l.flash != nil {
		l.flash.Read(len(dst))
	}
	n, err := src.ReadAt(dst, off)
	if n == len(dst) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("pager: reading %d bytes at offset %d: %w", len(dst), off, err)
}

type jobQueue []*job

func (q jobQueue) Len() int { return len(q) }
func (q jobQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	if a.prefetch != b.prefetch {
		return !a.prefetch // a layer's demand reads before its predictions
	}
	return a.seq < b.seq
}
func (q jobQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *jobQueue) Push(x any)   { *q = append(*q, x.(*job)) }
func (q *jobQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
