package hfremote

import (
	"fmt"
	"sync/atomic"

	"github.com/dustin/go-humanize"
)

// Stats counts the cost of remote reads. It is safe for concurrent use. A
// File keeps its own Stats; Options.Stats, when set, also receives every
// count, to total a run over many files (the CLI's --stats).
type Stats struct {
	requests, hubRequests, bytes, wasted, retries, reresolves atomic.Int64
}

// StatsSnapshot is a copy of the counters at one moment.
type StatsSnapshot struct {
	// Requests is every HTTP request sent, to any host, retries included.
	Requests int64
	// HubRequests is the part of Requests sent to the Hub itself (resolves,
	// and ranges of files the Hub serves without a CDN): the Hub rate-limits
	// these ("resolvers", about 3,000 per 5 minutes for anonymous users).
	HubRequests int64
	// Bytes is the body bytes received, including discarded ones.
	Bytes int64
	// WastedBytes is the part of Bytes that was read and thrown away: gaps
	// between coalesced ranges, the prefix of a whole-file answer to a range
	// request, bytes of failed attempts.
	WastedBytes int64
	// Retries is the requests repeated after a transient failure.
	Retries int64
	// ReResolves is the resolves after the first: expired CDN links.
	ReResolves int64
}

// Snapshot returns the current counts.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Requests:    s.requests.Load(),
		HubRequests: s.hubRequests.Load(),
		Bytes:       s.bytes.Load(),
		WastedBytes: s.wasted.Load(),
		Retries:     s.retries.Load(),
		ReResolves:  s.reresolves.Load(),
	}
}

// String formats the counts in one line for --stats.
func (s StatsSnapshot) String() string {
	return fmt.Sprintf("%d requests (%d to the Hub), %s received (%s discarded), %d retries, %d re-resolves",
		s.Requests, s.HubRequests, humanize.IBytes(uint64(s.Bytes)), humanize.IBytes(uint64(s.WastedBytes)),
		s.Retries, s.ReResolves)
}

// counters adds to a file's own Stats and to the shared one, if any.
type counters struct{ own, shared *Stats }

func (c counters) each(fn func(*Stats)) {
	fn(c.own)
	if c.shared != nil {
		fn(c.shared)
	}
}

func (c counters) request(hub bool) {
	c.each(func(s *Stats) {
		s.requests.Add(1)
		if hub {
			s.hubRequests.Add(1)
		}
	})
}

func (c counters) received(n int64) { c.each(func(s *Stats) { s.bytes.Add(n) }) }
func (c counters) wasted(n int64)   { c.each(func(s *Stats) { s.wasted.Add(n) }) }
func (c counters) retry()           { c.each(func(s *Stats) { s.retries.Add(1) }) }
func (c counters) reresolve()       { c.each(func(s *Stats) { s.reresolves.Add(1) }) }
