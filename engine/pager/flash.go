package pager

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
)

// Flash is a model of a device's flash storage for benchmarks: reads share
// one device of Rate bytes per second (one read after another, whatever
// the number of readers) and each read also waits Latency, overlapped
// across readers as a device's queue overlaps them. The seeds measured
// eMMC at 150-280 MB/s (§14.1).
type Flash struct {
	Rate    float64 // bytes per second
	Latency time.Duration

	mu   sync.Mutex
	busy time.Time // when the device is free
}

// ParseFlash reads "RATE[,LATENCY]", e.g. "200MB/s,0.3ms" (RATE in bytes
// per second with an SI or IEC suffix, "/s" optional).
func ParseFlash(s string) (*Flash, error) {
	rate, lat, hasLat := strings.Cut(s, ",")
	rate = strings.TrimSuffix(strings.TrimSpace(rate), "/s")
	r, err := humanize.ParseBytes(rate)
	if err != nil || r == 0 {
		return nil, fmt.Errorf("flash %q: RATE must be a size per second such as 200MB/s", s)
	}
	f := &Flash{Rate: float64(r)}
	if hasLat {
		if f.Latency, err = time.ParseDuration(strings.TrimSpace(lat)); err != nil || f.Latency < 0 {
			return nil, fmt.Errorf("flash %q: LATENCY must be a duration such as 0.3ms", s)
		}
	}
	return f, nil
}

// String is the model as ParseFlash reads it.
func (f *Flash) String() string {
	return fmt.Sprintf("%s/s,%s", humanize.Bytes(uint64(f.Rate)), f.Latency)
}

// Read blocks for as long as the device takes to deliver n bytes.
func (f *Flash) Read(n int) {
	f.mu.Lock()
	now := time.Now()
	start := f.busy
	if start.Before(now) {
		start = now
	}
	f.busy = start.Add(time.Duration(float64(n) / f.Rate * float64(time.Second)))
	until := f.busy.Add(f.Latency)
	f.mu.Unlock()
	time.Sleep(time.Until(until))
}
