package hfremote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// startHub starts a loopback Hub for one test.
func startHub(t testing.TB, opts hubtest.Options) *hubtest.Server {
	t.Helper()
	s, err := hubtest.NewServer("", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// commit adds files to a repo of s and returns the commit id.
func commit(t testing.TB, s *hubtest.Server, repo, rev string, files map[string]hubtest.Content) string {
	t.Helper()
	id, err := s.Commit(repo, rev, files)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waits records the waits the retry policy asked for, spending a
// millisecond on each so tests stay fast.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return sleepCtx(ctx, time.Millisecond)
}

func (w *waits) list() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// testOptions talks to s anonymously with fast retries.
func testOptions(s *hubtest.Server, w *waits) Options {
	o := Options{Endpoint: s.URL(), Anonymous: true, StallTimeout: 5 * time.Second}
	o.Retry = RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}
	if w != nil {
		o.Retry.Sleep = w.sleep
	}
	return o
}

// want returns bytes [off, off+n) of content.
func want(t testing.TB, c hubtest.Content, off, n int64) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := c.R.ReadAt(b, off); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

func sha256Hex(t testing.TB, c hubtest.Content) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(c.R, 0, c.Size)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func open(t testing.TB, spec string, o Options) *File {
	t.Helper()
	f, err := Open(context.Background(), spec, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readAt(t testing.TB, f *File, off, n int64) []byte {
	t.Helper()
	b := make([]byte, n)
	k, err := f.ReadAt(b, off)
	if err != nil {
		t.Fatalf("ReadAt(%d, %d): %v", off, n, err)
	}
	if int64(k) != n {
		t.Fatalf("ReadAt(%d, %d) read %d", off, n, k)
	}
	return b
}

func readAll(t testing.TB, r io.ReadCloser) []byte {
	t.Helper()
	defer r.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cdnRequests returns the CDN requests s saw.
func cdnRequests(s *hubtest.Server) []hubtest.Request {
	var out []hubtest.Request
	for _, r := range s.Requests() {
		if r.Host == "cdn" {
			out = append(out, r)
		}
	}
	return out
}
