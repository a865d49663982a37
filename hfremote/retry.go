package hfremote

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how transient failures (connection resets, stalls, 408,
// 429, 5xx, short bodies, DNS timeouts, refused connections to a host that
// answered before) are retried; failures that cannot succeed later are not.
// The zero value means the defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of tries of one request, including the
	// first; default 8.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles with each
	// further retry, up to MaxDelay, with random jitter so that concurrent
	// readers do not retry in lockstep. Default 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff; default 30s.
	MaxDelay time.Duration
	// MaxWait caps a wait the server asks for with Retry-After or the
	// RateLimit header; a longer demand fails at once with ErrRateLimited
	// rather than hanging silently. Default 5 minutes (the Hub's window).
	MaxWait time.Duration
	// Sleep waits for d or until ctx ends; nil means a timer. Tests replace
	// it to record waits without spending them.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 8
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 5 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	return p
}

// backoff is the wait before retry number n (1 for the first retry): the
// exponential delay, of which a random half is kept ("equal jitter").
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	return d/2 + rand.N(d/2+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// retryable reports whether an HTTP status is worth retrying.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// serverWait is the wait the server asks for: Retry-After (seconds or an
// HTTP date), else the reset time "t" of the RateLimit header the Hub sends
// (draft-ietf-httpapi-ratelimit-headers: `"resolvers";r=0;t=55`), which
// huggingface_hub also honours on 429. ok is false when it asks for nothing.
func serverWait(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if ra := strings.TrimSpace(h.Get("Retry-After")); ra != "" {
		if s, err := strconv.ParseInt(ra, 10, 64); err == nil && s >= 0 {
			return time.Duration(min(s, 1<<31)) * time.Second, true
		}
		if t, err := http.ParseTime(ra); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	for _, v := range h.Values("RateLimit") {
		for item := range strings.SplitSeq(v, ",") {
			for param := range strings.SplitSeq(item, ";") {
				k, val, found := strings.Cut(strings.TrimSpace(param), "=")
				if !found || k != "t" {
					continue
				}
				if s, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err == nil && s >= 0 {
					d, ok = max(d, time.Duration(min(s, 1<<31))*time.Second), true
				}
			}
		}
	}
	return d, ok
}
