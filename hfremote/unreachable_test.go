package hfremote

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// bannerServer accepts connections on loopback and writes banner to each,
// as a server of another protocol does.
func bannerServer(t *testing.T, banner string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				// Read until the client hangs up: closing with its
				// hello unread would reset the connection instead.
				defer c.Close()
				io.WriteString(c, banner)
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return l.Addr().String()
}

// dialFailing is an HTTP client whose every dial fails with err, the way
// the resolver reports a name lookup.
func dialFailing(err error) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(context.Context, string, string) (net.Conn, error) { return nil, err }
	return &http.Client{Transport: tr}
}

// openCounting opens spec with o, counting attempts in a shared Stats and
// recording the retry waits (spent as a millisecond each).
func openCounting(t *testing.T, spec string, o Options) (StatsSnapshot, int, error) {
	t.Helper()
	w := &waits{}
	var st Stats
	o.Stats, o.Retry.Sleep = &st, w.sleep
	f, err := Open(context.Background(), spec, o)
	if err == nil {
		f.Close()
	}
	return st.Snapshot(), len(w.list()), err
}

// The ones that cannot succeed later fail on the first attempt, with a
// one-line message naming the host; the ones that can are retried.
func TestUnreachableServersFailAtOnce(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": hubtest.PatternContent(1, 1000)})
	hubHost := strings.TrimPrefix(s.URL(), "http://")
	closed := closedAddr(t)
	notTLS := bannerServer(t, "SSH-2.0-OpenSSH_9.6\r\n")
	fast := RetryPolicy{MaxAttempts: 5}
	cases := []struct {
		name, spec string
		o          Options
		is         func(error) bool
		msg        string
		attempts   int64
	}{
		{
			name: "connection refused", spec: "https://" + closed + "/m.gguf",
			o:   Options{Retry: fast},
			is:  func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
			msg: "connection to " + closed + " refused", attempts: 1,
		},
		{
			name: "Hub endpoint refused", spec: "hf://org/repo/m.gguf",
			o:   Options{Endpoint: "http://" + closed, Anonymous: true, Retry: fast},
			is:  func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
			msg: "connection to " + closed + " refused", attempts: 1,
		},
		{
			name: "plain-HTTP Hub spoken to as HTTPS", spec: "hf://org/repo/m.gguf",
			o:   Options{Endpoint: "https://" + hubHost, Anonymous: true, Retry: fast},
			is:  func(err error) bool { return errors.Is(err, http.ErrSchemeMismatch) },
			msg: hubHost + " answered an https request in plain HTTP", attempts: 1,
		},
		{
			name: "non-TLS server spoken to as HTTPS", spec: "https://" + notTLS + "/m.gguf",
			o:   Options{Retry: fast},
			is:  func(err error) bool { var rh tls.RecordHeaderError; return errors.As(err, &rh) },
			msg: notTLS + " does not speak TLS", attempts: 1,
		},
		{
			name: "name not found", spec: "https://no-such-host.invalid/m.gguf",
			o: Options{Retry: fast, HTTPClient: dialFailing(&net.DNSError{
				Err: "no such host", Name: "no-such-host.invalid", IsNotFound: true})},
			is: func(err error) bool {
				var d *net.DNSError
				return errors.As(err, &d) && d.IsNotFound
			},
			msg: `host "no-such-host.invalid" not found`, attempts: 1,
		},
		{
			// A resolver that timed out may answer next time.
			name: "DNS timeout", spec: "https://slow-dns.example/m.gguf",
			o: Options{Retry: fast, HTTPClient: dialFailing(&net.DNSError{
				Err: "i/o timeout", Name: "slow-dns.example", IsTimeout: true})},
			is:  func(err error) bool { var d *net.DNSError; return errors.As(err, &d) },
			msg: "giving up after 5 attempts", attempts: 5,
		},
	}
	for _, tc := range cases {
		st, nwaits, err := openCounting(t, tc.spec, tc.o)
		switch {
		case err == nil:
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		case !tc.is(err):
			t.Errorf("%s: %v does not wrap the transport error", tc.name, err)
		case !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: %q is not one line saying %q", tc.name, err, tc.msg)
		}
		var e *Error
		if !errors.As(err, &e) || e.Source != tc.spec {
			t.Errorf("%s: %v does not name the source", tc.name, err)
		}
		if st.Requests != tc.attempts || st.Retries != tc.attempts-1 || int64(nwaits) != tc.attempts-1 {
			t.Errorf("%s: %d requests, %d retries, %d waits; want %d attempts", tc.name, st.Requests, st.Retries, nwaits, tc.attempts)
		}
	}
}

// A server that has answered before and then refuses connections may be
// restarting: that is retried, and succeeds once it is back.
func TestRefusedAfterAnAnswerIsRetried(t *testing.T) {
	c := hubtest.PatternContent(3, 4096)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "m.gguf", time.Time{}, io.NewSectionReader(c.R, 0, c.Size))
	})}
	t.Cleanup(func() { srv.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	go srv.Serve(l)

	w := &waits{}
	restarted := false
	o := Options{Retry: RetryPolicy{MaxAttempts: 4}}
	o.Retry.Sleep = func(ctx context.Context, d time.Duration) error {
		if !restarted { // the server comes back during the first wait
			restarted = true
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			go srv.Serve(l)
		}
		return w.sleep(ctx, d)
	}
	f := open(t, "http://"+addr+"/m.gguf", o)
	// Down: no listener, no kept connection.
	l.Close()
	f.c.http.CloseIdleConnections()
	if !bytes.Equal(readAt(t, f, 0, c.Size), want(t, c, 0, c.Size)) {
		t.Fatal("bytes differ")
	}
	if st := f.Stats(); st.Retries != 1 || len(w.list()) != 1 {
		t.Fatalf("stats %+v, waits %v: want the refused read retried once", st, w.list())
	}
}
