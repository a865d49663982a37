package hfremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

func TestPlan(t *testing.T) {
	const size, chunk, gap = 1000, 100, 10
	for _, tc := range []struct {
		in   []Range
		want string
	}{
		// Adjacent and nearly adjacent ranges share a request.
		{[]Range{{0, 10}, {10, 10}, {25, 5}}, "[{0 30 [{0 10} {10 10} {25 5}]}]"},
		// A gap wider than 10 starts a new request.
		{[]Range{{0, 10}, {21, 5}}, "[{0 10 [{0 10}]} {21 5 [{0 5}]}]"},
		// A long range is split into chunks; the next range joins the last one.
		{[]Range{{0, 250}, {255, 10}}, "[{0 100 [{0 100}]} {100 100 [{0 100}]} {200 65 [{0 50} {55 10}]}]"},
		// A range that would overflow the chunk is cut at the chunk's end.
		{[]Range{{0, 95}, {96, 20}}, "[{0 100 [{0 95} {96 4}]} {100 16 [{0 16}]}]"},
		// Backwards or overlapping ranges are fetched again, in the given order.
		{[]Range{{50, 10}, {0, 10}, {5, 10}}, "[{50 10 [{0 10}]} {0 10 [{0 10}]} {5 10 [{0 10}]}]"},
		// Empty ranges cost nothing; the end of the file is allowed.
		{[]Range{{0, 0}, {1000, 0}, {990, 10}}, "[{990 10 [{0 10}]}]"},
	} {
		got, err := plan(tc.in, size, chunk, gap)
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("plan(%v) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range [][]Range{{{-1, 5}}, {{0, -1}}, {{995, 10}}, {{1001, 0}}, {{1 << 62, 1 << 62}}} {
		if _, err := plan(bad, size, chunk, gap); err == nil {
			t.Errorf("plan(%v) accepted a range outside the file", bad)
		}
	}
}

func TestRangesOrderCoalescingAndBytes(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	c := hubtest.PatternContent(21, 8<<20)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c})
	f := open(t, "hf://org/repo/m.gguf", testOptions(s, nil))

	ranges := []Range{
		{6 << 20, 1 << 20},          // out of offset order: delivered first anyway
		{0, 1000},                   // then these three share one request:
		{1000 + 100, 500},           //   100-byte gap
		{1000 + 100 + 500 + 64, 10}, //   64-byte gap
		{3 << 20, 3 << 20},          // split into a 2 MiB and a 1 MiB request
		{0, 10},                     // backwards: fetched again
	}
	var exp bytes.Buffer
	for _, r := range ranges {
		exp.Write(want(t, c, r.Off, r.Len))
	}
	before := len(cdnRequests(s))
	got := readAll(t, f.Ranges(context.Background(), ranges, RangeOptions{Concurrency: 2, ChunkSize: 2 << 20, MaxGap: 4096}))
	if !bytes.Equal(got, exp.Bytes()) {
		t.Fatal("bytes differ from the ranges' concatenation")
	}
	var seen []string
	for _, r := range cdnRequests(s)[before:] {
		seen = append(seen, r.Range)
	}
	wantRanges := map[string]bool{
		"bytes=6291456-7340031": true, "bytes=0-1673": true, "bytes=3145728-5242879": true,
		"bytes=5242880-6291455": true, "bytes=0-9": true,
	}
	if len(seen) != len(wantRanges) {
		t.Fatalf("requests %q, want %d: %v", seen, len(wantRanges), wantRanges)
	}
	for _, r := range seen {
		if !wantRanges[r] {
			t.Fatalf("unexpected request %q among %q", r, seen)
		}
	}
	if st := f.Stats(); st.WastedBytes != 164 {
		t.Fatalf("stats %+v: want the 164 gap bytes counted as discarded", st)
	}
}

func TestRangesConcurrencyIsBounded(t *testing.T) {
	const conc = 3
	// Latency keeps requests in flight long enough to overlap.
	s := startHub(t, hubtest.Options{Latency: 100 * time.Millisecond})
	c := hubtest.PatternContent(22, 4<<20)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c})
	f := open(t, "hf://org/repo/m.gguf", testOptions(s, nil))
	opt := RangeOptions{Concurrency: conc, ChunkSize: 256 << 10}

	// Unread, the reader fetches ahead no more than conc chunks: the memory
	// bound. Wait until they are in, then check that no more follow.
	r := f.Ranges(context.Background(), []Range{{0, c.Size}}, opt)
	for deadline := time.Now().Add(30 * time.Second); s.Stats().CDNRequests < conc; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests started", s.Stats().CDNRequests)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := s.Stats().CDNRequests; n != conc {
		t.Fatalf("%d requests with nothing read, want %d (concurrency x chunk bounds memory)", n, conc)
	}
	if got := readAll(t, r); !bytes.Equal(got, want(t, c, 0, c.Size)) {
		t.Fatal("bytes differ")
	}
	st := s.Stats()
	if st.MaxCDNInFlight > conc || st.MaxCDNInFlight < 2 || st.CDNRequests != 16 {
		t.Fatalf("server stats %+v: want 16 requests, at most %d (and more than 1) at once", st, conc)
	}
}

func TestRangesStopOnErrorAndClose(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	c := hubtest.PatternContent(23, 2<<20)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c})
	o := testOptions(s, nil)
	o.Retry.MaxAttempts = 2
	f := open(t, "hf://org/repo/m.gguf", o)

	// A permanent failure of one chunk ends the stream with that error,
	// after the bytes before it.
	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.Status, Status: http.StatusNotFound}})
	r := f.Ranges(context.Background(), []Range{{0, c.Size}}, RangeOptions{ChunkSize: 1 << 20})
	_, err := io.Copy(io.Discard, r)
	r.Close()
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want the chunk's ErrNotFound", err)
	}
	// A range outside the file is reported by the first Read.
	r = f.Ranges(context.Background(), []Range{{c.Size - 1, 2}}, RangeOptions{})
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("got %v", err)
	}
	r.Close()
	// Closing early stops the fetching and returns.
	s.SetFaults(nil)
	r = f.Ranges(context.Background(), []Range{{0, c.Size}}, RangeOptions{ChunkSize: 64 << 10, Concurrency: 2})
	if _, err := io.ReadFull(r, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after Close succeeded")
	}
	// A cancelled context ends the stream.
	ctx, cancel := context.WithCancel(context.Background())
	r = f.Ranges(ctx, []Range{{0, c.Size}}, RangeOptions{ChunkSize: 64 << 10})
	cancel()
	if _, err := io.Copy(io.Discard, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	r.Close()
}
