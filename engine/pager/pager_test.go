package pager

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLRUByHand follows a 2-slot LRU pool through a short history worked
// out by hand.
func TestLRUByHand(t *testing.T) {
	p, err := NewPool(6, 2, Policy{Kind: LRU})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, call := range [][]int{{0, 1}, {1}, {2}, {0}, {1, 2}} {
		err := p.Run(call, nil, func(g []Placement) error {
			for _, x := range g {
				s := "miss"
				if x.Hit {
					s = "hit"
				}
				got = append(got, s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// {0,1}: 2 misses; {1}: hit; {2}: evicts 0 (used before 1); {0}:
	// evicts 1; {1,2}: 2 is resident, 1 evicts 0.
	want := []string{"miss", "miss", "hit", "miss", "miss", "miss", "hit"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if st := p.Stats(); st.Hits != 2 || st.Misses != 5 || st.Calls != 5 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLFUKeepsFrequent: decayed frequency keeps an expert used every
// other call where LRU lets a run of one-off experts push it out.
func TestLFUKeepsFrequent(t *testing.T) {
	var tr Trace
	tr.Experts = 16
	for i := range 40 {
		tr.Calls = append(tr.Calls, Call{Layer: 0, Experts: []int{0, 1 + i%7}})
	}
	lru, err := Simulate(&tr, 3, Policy{Kind: LRU})
	if err != nil {
		t.Fatal(err)
	}
	lfu, err := Simulate(&tr, 3, Policy{Kind: LFU, Decay: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	opt, err := Simulate(&tr, 3, Policy{Kind: Belady})
	if err != nil {
		t.Fatal(err)
	}
	if !(opt.Total.Misses <= lfu.Total.Misses && lfu.Total.Misses <= lru.Total.Misses) {
		t.Fatalf("misses: belady %d, lfu %d, lru %d", opt.Total.Misses, lfu.Total.Misses, lru.Total.Misses)
	}
	if lru.Total.Misses != 41 { // expert 0 once, then the cycle of 7 never fits the other 2 slots
		t.Fatalf("lru misses %d, want 41", lru.Total.Misses)
	}
}

// TestPrefetchSparesWorkingSet: a prefetch takes free slots and slots of
// experts the last call did not use, never the last call's experts.
func TestPrefetchSparesWorkingSet(t *testing.T) {
	p, _ := NewPool(8, 3, Policy{Kind: LRU})
	run := func(call ...int) {
		if err := p.Run(call, nil, func([]Placement) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	run(0, 1)
	g := p.Prefetch([]int{5, 6}, nil) // one free slot: 5 goes in, 6 is dropped
	if len(g) != 1 || g[0].Expert != 5 || g[0].Evicted != -1 {
		t.Fatalf("prefetch placed %+v", g)
	}
	run(2, 5) // 5 is a prefetch hit; 2 evicts 0 (1 is the more recent)
	if st := p.Stats(); st.PrefetchHits != 1 || st.Prefetches != 1 {
		t.Fatalf("stats %+v", st)
	}
	if p.Resident(0) || !p.Resident(1) {
		t.Fatal("2 should have evicted 0")
	}
	g = p.Prefetch([]int{7}, nil) // slots hold 1, 2, 5: 2 and 5 are the working set, 1 may go
	if len(g) != 1 || g[0].Evicted != 1 {
		t.Fatalf("prefetch placed %+v", g)
	}
	run(2, 5)
	if g := p.Prefetch([]int{3, 4}, nil); len(g) != 1 || g[0].Evicted != 7 {
		t.Fatalf("prefetch placed %+v", g)
	}
	run(0, 2, 5)
	if st := p.Stats(); st.PrefetchWasted != 2 {
		t.Fatalf("wasted %d prefetches, want 2 (7 evicted by 3, 3 by 0)", st.PrefetchWasted)
	}
}

// TestPlaceRefuses: groups larger than the pool, repeated or unknown
// experts are errors, not corrupt state.
func TestPlaceRefuses(t *testing.T) {
	p, _ := NewPool(4, 2, Policy{Kind: LRU})
	for _, g := range [][]int{{0, 1, 2}, {1, 1}, {4}, {-1}} {
		if _, err := p.Place(g, nil); err == nil {
			t.Errorf("Place(%v) succeeded", g)
		}
	}
}

// TestTraceRoundTrip writes a trace and reads it back, and refuses
// malformed ones.
func TestTraceRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewTraceWriter(&b, 8)
	w.Call(0, []int{1, 5})
	w.Call(3, []int{7})
	w.Call(0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTrace(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Experts != 8 || len(tr.Calls) != 3 || !slices.Equal(tr.Calls[0].Experts, []int{1, 5}) || tr.Calls[1].Layer != 3 {
		t.Fatalf("read %+v", tr)
	}
	for _, bad := range []string{
		"", "hello\n", traceMagic + "\nexperts 0\n", traceMagic + "\nexperts 8\n0: 8\n",
		traceMagic + "\nexperts 8\n0: 1 1\n", traceMagic + "\nexperts 8\nx: 1\n", traceMagic + "\nexperts 8\n0 1\n",
	} {
		if _, err := ReadTrace(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadTrace(%q) succeeded", bad)
		}
	}
}

// FuzzReadTrace: no input makes ReadTrace panic, and what it accepts
// simulates.
func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(traceMagic + "\nexperts 4\n0: 1 2\n1: 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadTrace(bytes.NewReader(b))
		if err != nil {
			return
		}
		if _, err := Simulate(tr, 2, Policy{Kind: LFU, Decay: 0.9}); err != nil && !strings.Contains(err.Error(), "does not fit") {
			t.Fatal(err)
		}
	})
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"lru": "lru", "LFU": "lfu:0.95", "lfu:0.8": "lfu:0.8", "opt": "belady"} {
		p, err := ParsePolicy(in)
		if err != nil || p.String() != want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "lfu:0", "lfu:1.5", "lru:1", "fifo"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) succeeded", bad)
		}
	}
	f, err := ParseFlash("200MB/s,0.3ms")
	if err != nil || f.Rate != 200e6 || f.Latency != 300*time.Microsecond {
		t.Fatalf("ParseFlash: %+v %v", f, err)
	}
	if f, err := ParseFlash("1GiB"); err != nil || f.Rate != 1<<30 || f.Latency != 0 {
		t.Fatalf("ParseFlash(1GiB): %+v %v", f, err)
	}
	for _, bad := range []string{"", "fast", "0MB/s", "200MB/s,soon"} {
		if _, err := ParseFlash(bad); err == nil {
			t.Errorf("ParseFlash(%q) succeeded", bad)
		}
	}
}

// TestLoaderOrderAndDrop: with one reader busy, queued reads come out by
// priority, and a prefetch that fell behind the progress is
// dropped and read again on demand.
func TestLoaderOrderAndDrop(t *testing.T) {
	src := bytes.NewReader(bytes.Repeat([]byte("abcdefgh"), 64))
	l := NewLoader(1, &Flash{Rate: 1 << 20})
	defer l.Close()
	bufs := make([]*Buffer, 4)
	for i := range bufs {
		bufs[i] = NewBuffer(64, false)
	}
	if err := l.Load(bufs[0], src, 0, 64, 5, false); err != nil {
		t.Fatal(err)
	}
	l.SetProgress(8)                    // the forward pass is past priority 7...
	l.Load(bufs[1], src, 8, 8, 7, true) // ...so this prefetch is stale
	l.Load(bufs[2], src, 1, 8, 5, false)
	for i, want := range []string{"bcdefgha", "abcdefgh"} {
		b, err := l.Wait(bufs[2-2*i])
		if err != nil {
			t.Fatal(err)
		}
		if string(b[:8]) != want {
			t.Fatalf("buffer %d holds %q", 2-2*i, b[:8])
		}
	}
	b, err := l.Wait(bufs[1])
	if err != nil || string(b) != "abcdefgh" {
		t.Fatalf("dropped prefetch read again: %q %v", b, err)
	}
	if st := l.Stats(); st.Reads != 3 || st.BytesRead != 80 || st.Dropped != 1 {
		t.Fatalf("stats %+v", st)
	}
	short := NewBuffer(8, false)
	l.Load(short, src, 510, 8, 9, false)
	if _, err := l.Wait(short); err == nil {
		t.Fatal("a read past the end succeeded")
	}
	if err := l.Load(short, src, 0, 9, 9, false); err == nil {
		t.Fatal("a read larger than the buffer was queued")
	}
}

// TestDirectSource reads unaligned ranges of a file through direct I/O
// (aligned interior) and the page cache (edge pages) and gets the file's
// bytes, whatever the buffer's own alignment.
func TestDirectSource(t *testing.T) {
	path := t.TempDir() + "/f"
	data := make([]byte, 5*os.Getpagesize()+123)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDirect(path)
	if err != nil {
		t.Skipf("no direct I/O here: %v", err)
	}
	defer ds.Close()
	l := NewLoader(2, nil)
	defer l.Close()
	page := os.Getpagesize()
	for _, c := range [][2]int{{0, 3 * page}, {17, 3*page + 5}, {page - 1, 2}, {100, 10}, {page, len(data) - page}, {3, len(data) - 3}} {
		b := NewBuffer(c[1], true)
		if err := l.Load(b, ds, int64(c[0]), c[1], 0, false); err != nil {
			t.Fatal(err)
		}
		got, err := l.Wait(b)
		if err != nil {
			t.Fatalf("read [%d, +%d): %v", c[0], c[1], err)
		}
		if !bytes.Equal(got, data[c[0]:c[0]+c[1]]) {
			t.Fatalf("read [%d, +%d): wrong bytes", c[0], c[1])
		}
	}
	if err := l.Load(NewBuffer(page, false), ds, 1, page, 0, false); err == nil {
		t.Fatal("a direct read into a buffer without slack was queued")
	}
}

// simulateWhole is the simulator as it was before it streamed: every
// access's next use computed over the whole trace in memory, then one
// replay. The streaming one must count exactly what it counts.
func simulateWhole(t *Trace, slots int, p Policy) Stats {
	seq := map[int][]int{}
	for _, c := range t.Calls {
		seq[c.Layer] = append(seq[c.Layer], c.Experts...)
	}
	nexts := map[int][]int64{}
	for l, s := range seq {
		nx, last := make([]int64, len(s)), make([]int64, t.Experts)
		for e := range last {
			last[e] = never
		}
		for i := len(s) - 1; i >= 0; i-- {
			nx[i], last[s[i]] = last[s[i]], int64(i)
		}
		nexts[l] = nx
	}
	pools, pos := map[int]*Pool{}, map[int]int{}
	var total Stats
	for _, c := range t.Calls {
		pl := pools[c.Layer]
		if pl == nil {
			pl, _ = NewPool(t.Experts, slots, p)
			pools[c.Layer] = pl
		}
		pl.Run(c.Experts, nil, func(g []Placement) error {
			for _, x := range g {
				pl.SetNextUse(x.Expert, nexts[c.Layer][pos[c.Layer]])
				pos[c.Layer]++
			}
			return nil
		})
	}
	for _, pl := range pools {
		total.Add(pl.Stats())
	}
	return total
}

// TestReplayStreams: replaying a trace one segment at a time (checkpoints
// every few accesses, thinned again and again as their budget is passed)
// counts exactly what a whole-trace replay counts, for every policy and
// pool size, from memory and from a file; a pool larger than the experts
// is clamped to them (a huge one allocates nothing); a trace naming more
// layer-experts than the bound is refused at the line that does.
func TestReplayStreams(t *testing.T) {
	defer func(s int, b int64) { checkpointSpacing, maxCheckpointBytes = s, b }(checkpointSpacing, maxCheckpointBytes)
	checkpointSpacing, maxCheckpointBytes = 7, 4<<10

	tr := &Trace{Experts: 12}
	rng := uint64(1)
	for i := range 6000 {
		c := Call{Layer: i % 3}
		if i%500 == 499 {
			c.Layer = 7 // a layer that appears late and seldom
		}
		seen := 0
		for n := 1 + i%5; len(c.Experts) < n; {
			rng = rng*6364136223846793005 + 1442695040888963407
			e := int(rng>>33) % 12 % (3 + i%10)
			if seen&(1<<e) == 0 {
				seen |= 1 << e
				c.Experts = append(c.Experts, e)
			}
		}
		tr.Calls = append(tr.Calls, c)
	}
	var text bytes.Buffer
	w := NewTraceWriter(&text, tr.Experts)
	for _, c := range tr.Calls {
		w.Call(c.Layer, c.Experts)
	}
	w.Flush()
	path := filepath.Join(t.TempDir(), "t.trace")
	os.WriteFile(path, text.Bytes(), 0o644)

	var sims []Sim
	for _, slots := range []int{1, 2, 3, 5, 8, 12, 99999999999} {
		for _, p := range []Policy{{Kind: LRU}, {Kind: LFU, Decay: 0.9}, {Kind: Belady}} {
			sims = append(sims, Sim{slots, p})
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Replay(f, sims)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 6000 || rep.Experts != 12 || len(rep.Results) != len(sims) {
		t.Fatalf("replayed %d calls of %d experts, %d results", rep.Calls, rep.Experts, len(rep.Results))
	}
	for i, sim := range sims {
		want := simulateWhole(tr, min(sim.Slots, tr.Experts), sim.Policy)
		mem, err := Simulate(tr, sim.Slots, sim.Policy)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Results[i]; got.Total != want || mem.Total != want || got.Slots != min(sim.Slots, 12) {
			t.Errorf("pool %d %s: file %+v (%d slots), memory %+v, whole trace %+v", sim.Slots, sim.Policy, got.Total, got.Slots, mem.Total, want)
		}
	}
	if opt, lru := rep.Results[5].Total.Misses, rep.Results[3].Total.Misses; opt >= lru {
		t.Errorf("pool 3: belady %d misses, lru %d: the trace does not tell them apart", opt, lru)
	}

	var many bytes.Buffer
	many.WriteString(traceMagic + "\nexperts 65536\n")
	for l := range 17 {
		fmt.Fprintf(&many, "%d: 1\n", l)
	}
	if _, err := ReadTrace(&many); err == nil || !strings.Contains(err.Error(), "line 19: 17 layers of 65536 experts") {
		t.Errorf("a trace of 17 layers of 65536 experts: %v", err)
	}
}

// TestPoolShrink: a shrunk pool keeps the experts its policy values most
// (empty slots and victims go first), in consistent slots, says where each
// kept slot was, and goes on placing experts.
func TestPoolShrink(t *testing.T) {
	p, err := NewPool(8, 5, Policy{Kind: LRU})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]Placement, 0, 5)
	for _, call := range [][]int{{0, 1}, {2}, {3}, {1}} { // 4 of 5 slots used; 0 is the oldest, 1 the newest
		if err := p.Run(call, buf, func([]Placement) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	keep := p.Shrink(3)
	if p.Slots() != 3 || len(keep) != 3 {
		t.Fatalf("shrunk to %d slots, kept %v", p.Slots(), keep)
	}
	for _, e := range []int{1, 2, 3} {
		if !p.Resident(e) || keep[p.SlotOf(e)] != e { // expert e was in slot e
			t.Fatalf("expert %d: resident %v in slot %d, kept %v", e, p.Resident(e), p.SlotOf(e), keep)
		}
	}
	if p.Resident(0) {
		t.Fatal("the least recently used expert was kept")
	}
	if got := p.Shrink(4); len(got) != 3 || p.Slots() != 3 {
		t.Fatalf("growing by Shrink: %v, %d slots", got, p.Slots())
	}
	out, err := p.Place([]int{5, 6, 1}, nil)
	if err != nil || len(out) != 3 || !out[2].Hit || out[0].Evicted < 0 && out[1].Evicted < 0 {
		t.Fatalf("placing after a shrink: %+v %v", out, err)
	}
	if p.Shrink(0); p.Slots() != 1 {
		t.Fatalf("Shrink(0) left %d slots", p.Slots())
	}
}

// gatedSource is a ReaderAt whose reads block until released, recording
// the offsets read and the most reads ever in flight at once.
type gatedSource struct {
	mu       sync.Mutex
	release  chan struct{}
	started  chan int64
	inFlight int
	most     int
}

func newGatedSource() *gatedSource {
	return &gatedSource{release: make(chan struct{}), started: make(chan int64, 64)}
}

func (g *gatedSource) ReadAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	g.mu.Unlock()
	g.started <- off
	<-g.release
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	clear(p)
	return len(p), nil
}

func (g *gatedSource) next(t *testing.T) int64 {
	t.Helper()
	select {
	case off := <-g.started:
		return off
	case <-time.After(10 * time.Second):
		t.Fatal("no read started")
		return -1
	}
}

// busyLoader returns a loader of one reader, busy with a read of src
// until the test ends, so that what is queued next stays queued.
func busyLoader(t *testing.T) (*Loader, *gatedSource) {
	src := newGatedSource()
	l := NewLoader(1, nil)
	t.Cleanup(l.Close)
	t.Cleanup(func() { close(src.release) })
	l.Load(NewBuffer(8, false), src, 999, 8, 0, false)
	src.next(t) // the one reader is busy
	return l, src
}

// TestLoaderRequestOrder: reads of one priority come out in the order they
// were asked for, so an expert's gate, up and down (queued together) are
// read before the next expert's gate, not all gates first: the first
// expert is complete, and computed, while the others are read.
func TestLoaderRequestOrder(t *testing.T) {
	l, src := busyLoader(t)
	var want []int64
	for e := range 2 {
		for part := range 3 {
			off := int64(100*e + part)
			want = append(want, off)
			l.Load(NewBuffer(8, false), src, off, 8, 5, false)
		}
	}
	var got []int64
	for range want {
		src.release <- struct{}{}
		got = append(got, src.next(t))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read order %v, want %v", got, want)
	}
	src.release <- struct{}{}
}

// TestLoaderPromotesPrefetch: prefetches run one at a time in idle reader
// time, but once the forward pass uses one (Promote) it is what the pass
// waits for, and every reader takes it.
func TestLoaderPromotesPrefetch(t *testing.T) {
	src := newGatedSource()
	l := NewLoader(2, nil)
	defer l.Close()
	defer close(src.release)
	a, b := NewBuffer(8, false), NewBuffer(8, false)
	l.Load(a, src, 0, 8, 5, true)
	l.Load(b, src, 8, 8, 5, true)
	src.next(t)
	select {
	case <-src.started:
		t.Fatal("two prefetches read at once before their layer")
	case <-time.After(50 * time.Millisecond):
	}
	l.SetProgress(5)
	l.Promote(b)
	src.next(t) // the second prefetch, now a demand read, starts while the first is read
	src.mu.Lock()
	most := src.most
	src.mu.Unlock()
	if most != 2 {
		t.Fatalf("%d reads in flight at most, want 2", most)
	}
}

// TestLoaderReadsLayerConcurrently: a layer's misses, queued together, are
// read by every reader at once (the device's queue depth; bench/preadqd
// measures what depth pays), not one after another.
func TestLoaderReadsLayerConcurrently(t *testing.T) {
	src := newGatedSource()
	const readers = 4
	l := NewLoader(readers, nil)
	defer l.Close()
	defer close(src.release)
	var bufs []*Buffer
	for e := range 2 {
		for part := range 3 {
			b := NewBuffer(8, false)
			bufs = append(bufs, b)
			l.Load(b, src, int64(100*e+part), 8, 5, false)
		}
	}
	for range readers {
		src.next(t) // each blocks until released: all four are in flight
	}
	src.mu.Lock()
	most := src.most
	src.mu.Unlock()
	if most != readers {
		t.Fatalf("%d reads in flight at most, want %d", most, readers)
	}
	for range len(bufs) - readers {
		src.release <- struct{}{}
		src.next(t)
	}
	for range readers {
		src.release <- struct{}{}
	}
	for _, b := range bufs {
		if _, err := l.Wait(b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoaderDemandBeforePrefetch: a layer's demand reads go before the
// predictions queued earlier for it (a guess must not hold up a read the
// pass waits for), and a prediction cancelled before it starts is never
// read.
func TestLoaderDemandBeforePrefetch(t *testing.T) {
	l, src := busyLoader(t)
	guess, cancelled, demand := NewBuffer(8, false), NewBuffer(8, false), NewBuffer(8, false)
	l.Load(guess, src, 1, 8, 5, true)
	l.Load(cancelled, src, 2, 8, 5, true)
	l.Load(demand, src, 3, 8, 5, false)
	l.Cancel(cancelled)
	var got []int64
	for range 2 {
		src.release <- struct{}{}
		got = append(got, src.next(t))
	}
	src.release <- struct{}{}
	if want := []int64{3, 1}; !slices.Equal(got, want) {
		t.Fatalf("read order %v, want %v", got, want)
	}
	if _, err := l.Wait(guess); err != nil {
		t.Fatal(err)
	}
	if l.Ready(cancelled) {
		t.Fatal("the cancelled prefetch was read")
	}
	if st := l.Stats(); st.Dropped != 1 || st.Reads != 3 {
		t.Fatalf("%d dropped, %d reads; want 1, 3", st.Dropped, st.Reads)
	}
}
