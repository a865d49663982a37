package hfremote

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
)

// Options configure Open. The zero value is usable: token and endpoint come
// from the environment, everything else has defaults.
type Options struct {
	// Token authenticates to the Hub; "" means TokenFromEnv() unless
	// Anonymous is set. It is sent only to the Hub's own host.
	Token string
	// Anonymous sends no token even if the environment has one.
	Anonymous bool
	// Endpoint is the Hub's base URL; "" means HF_ENDPOINT or DefaultEndpoint.
	Endpoint string
	// HTTPClient sends the requests; nil means a client with enough idle
	// connections per host for Concurrency. Its redirect policy is replaced:
	// this package follows redirects itself, so that a token never goes to
	// another host and the CDN location can be kept.
	HTTPClient *http.Client
	// Concurrency is the default number of requests File.Ranges keeps in
	// flight; default 4.
	Concurrency int
	// ChunkSize is the default largest request of File.Ranges; default 8 MiB.
	ChunkSize int64
	// MaxGap is the default largest hole between two ranges that
	// File.Ranges reads through (and discards) to save a request; default
	// 64 KiB.
	MaxGap int64
	// Retry says how transient failures are retried.
	Retry RetryPolicy
	// UserAgent is sent with every request; default "ggufkit-hfremote".
	UserAgent string
	// Stats, if set, receives every count of every file opened with these
	// options (and their siblings), in addition to each file's own Stats.
	Stats *Stats
	// StallTimeout aborts and retries a request that receives no byte for
	// this long (headers included); default 60s.
	StallTimeout time.Duration
	// LinkTTL is how long a resolved CDN link is used before resolving
	// again, unless the link states an earlier expiry; default 55 minutes
	// (the Hub's signed links last about an hour).
	LinkTTL time.Duration
	// RangeIgnoredLimit is the most a read may cost when the server ignores
	// Range and sends the whole file from its start: a read that ends
	// beyond it fails with ErrRangeIgnored instead. Default 16 MiB, enough
	// for a GGUF header.
	RangeIgnoredLimit int64
}

// client is what the files opened with one Options share.
type client struct {
	http       *http.Client
	ownHTTP    bool
	token      string
	endpoint   string
	hub        *url.URL // the endpoint, parsed: the only host that gets the token
	userAgent  string
	retry      RetryPolicy
	stall      time.Duration
	linkTTL    time.Duration
	rangeLimit int64
	conc       int
	chunk, gap int64
	shared     *Stats
	// answered holds the hosts that have sent an HTTP answer: a host that
	// answered before and now refuses connections may be restarting, so it
	// is retried; one that never answered is not.
	answered sync.Map
}

func newClient(o Options) (*client, error) {
	c := &client{
		token:      o.Token,
		endpoint:   strings.TrimRight(o.Endpoint, "/"),
		userAgent:  cmp.Or(o.UserAgent, "ggufkit-hfremote"),
		retry:      o.Retry.withDefaults(),
		stall:      positiveOr(o.StallTimeout, 60*time.Second),
		linkTTL:    positiveOr(o.LinkTTL, 55*time.Minute),
		rangeLimit: positiveOr(o.RangeIgnoredLimit, 16<<20),
		conc:       positiveOr(o.Concurrency, 4),
		chunk:      positiveOr(o.ChunkSize, 8<<20),
		gap:        positiveOr(o.MaxGap, 64<<10),
		shared:     o.Stats,
	}
	if c.endpoint == "" {
		c.endpoint = EndpointFromEnv()
	}
	u, err := url.Parse(c.endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%w: Hub endpoint %q is not an http(s) URL", ErrBadSpec, c.endpoint)
	}
	c.hub = u
	if c.token == "" && !o.Anonymous {
		c.token = TokenFromEnv()
	}
	if o.Anonymous {
		c.token = ""
	}
	hc := o.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// The default keeps 2 idle connections per host: with more
		// requests in flight every further one would pay a new handshake.
		tr.MaxIdleConnsPerHost = max(c.conc*2, 16)
		hc, c.ownHTTP = &http.Client{Transport: tr}, true
	}
	cp := *hc
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &cp
	return c, nil
}

// positiveOr returns v, or def when v is not positive.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// isHub reports whether u is on the Hub's host (same scheme and host), the
// only place the token may go.
func (c *client) isHub(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, c.hub.Scheme) && strings.EqualFold(u.Host, c.hub.Host)
}

// File is a remote file opened by Open: an io.ReaderAt over HTTP range
// requests, pinned to the commit resolved at Open. It is safe for concurrent
// use.
type File struct {
	c    *client
	ctx  context.Context
	loc  Location
	name string

	size    int64
	etag    string // the entity tag, unquoted: X-Linked-Etag, else ETag
	sha256  string // X-Linked-Etag when it is a sha256 (LFS files)
	gitSHA1 string // the git blob id of a file the Hub serves itself (not LFS)
	commit  string // X-Repo-Commit

	stats  Stats
	cnt    counters
	closed atomic.Bool

	mu   sync.Mutex // guards link and serializes re-resolves
	link link
}

// link is where range requests go, as of one resolve.
type link struct {
	url string
	exp time.Time // resolve again after this
	gen int       // counts resolves, so concurrent readers re-resolve once
}

// Open resolves spec (hf://..., a Hub resolve/blob URL, or any http(s) URL)
// with one request and returns the file, pinned to the commit the Hub
// reported. ctx bounds Open and is kept for ReadAt, which has no context
// parameter: cancelling it ends every later ReadAt (use ReadAtContext or
// Ranges for per-call contexts).
func Open(ctx context.Context, spec string, opts Options) (*File, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	var loc Location
	switch {
	case strings.HasPrefix(strings.ToLower(spec), "hf://"):
		loc, err = ParseHF(spec)
		loc.Endpoint = c.endpoint
	case IsRemote(spec):
		loc, err = parseURL(spec, c.endpoint)
	default:
		err = fmt.Errorf("%w %q: want hf://owner/repo/file or an http(s) URL", ErrBadSpec, spec)
	}
	if err != nil {
		return nil, err
	}
	return c.open(ctx, loc, spec)
}

func (c *client) open(ctx context.Context, loc Location, name string) (*File, error) {
	f := &File{c: c, ctx: ctx, loc: loc, name: name}
	f.cnt = counters{own: &f.stats, shared: c.shared}
	r, err := f.resolve(ctx, loc.Revision)
	if err != nil {
		return nil, err
	}
	if r.loc.IsHub() {
		f.loc = r.loc // the canonical repo name, if the Hub redirected a renamed one
	}
	f.size, f.etag, f.sha256, f.gitSHA1, f.commit = r.size, r.etag, r.sha256, r.gitSHA1, r.commit
	f.link = r.link
	return f, nil
}

// OpenSibling opens another file of the same repo at the same pinned commit
// (for split files such as x-00002-of-00003.gguf). name is relative to this
// file's folder, or to the repo root when it starts with "/"; for a plain
// URL it is a relative URL reference. The sibling shares this file's client
// and shared Stats.
func (f *File) OpenSibling(ctx context.Context, name string) (*File, error) {
	loc, err := f.loc.sibling(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	if loc.IsHub() && f.commit != "" {
		loc.Revision = f.commit
	}
	return f.c.open(ctx, loc, loc.String())
}

// Sibling is OpenSibling with the context given to Open.
func (f *File) Sibling(name string) (*File, error) { return f.OpenSibling(f.ctx, name) }

// Size is the file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Name is the source as given to Open (for siblings, hf://... at the
// pinned commit).
func (f *File) Name() string { return f.name }

// Location is the resolved location (for a renamed repo, the new name).
func (f *File) Location() Location { return f.loc }

// Commit is the commit every request is pinned to, from X-Repo-Commit; ""
// for plain URLs and servers that do not report one.
func (f *File) Commit() string { return f.commit }

// ETag is the file's entity tag without quotes: X-Linked-Etag when the Hub
// gave one (the sha256 of an LFS file), else ETag; "" when absent.
func (f *File) ETag() string { return f.etag }

// SHA256 is the file's sha256 in hex as the Hub published it (X-Linked-Etag
// of an LFS file), or "" when the Hub gave none.
func (f *File) SHA256() string { return f.sha256 }

// Stats returns this file's counters.
func (f *File) Stats() StatsSnapshot { return f.stats.Snapshot() }

// Close ends the file's use; later reads fail. It closes idle connections
// of the package's own HTTP client (shared with siblings, which reconnect
// when needed).
func (f *File) Close() error {
	f.closed.Store(true)
	if f.c.ownHTTP {
		f.c.http.CloseIdleConnections()
	}
	return nil
}

// ReadAt reads len(p) bytes at off with one range request (more only on
// retries), using the context given to Open. It implements io.ReaderAt: a
// read past the end returns the bytes that exist and io.EOF.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	return f.ReadAtContext(f.ctx, p, off)
}

// ReadAtContext is ReadAt with its own context.
func (f *File) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", f.name, off)
	}
	if off >= f.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.size-off))
	got, err := f.fetch(ctx, p[:n], off)
	if err != nil {
		return got, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// transient marks a failure worth retrying.
type transient struct {
	err    error
	status int           // the HTTP status, 0 for transport failures
	wait   time.Duration // what the server asked for, if asked
	ask    bool
}

func (t *transient) Error() string { return t.err.Error() }
func (t *transient) Unwrap() error { return t.err }

// errStalled cancels a request that received nothing for StallTimeout.
var errStalled = errors.New("no data received for too long")

// errLinkExpired is a 403 from a host other than the Hub (a signed CDN link
// that expired) or a redirect where bytes were expected: the cure is to
// resolve again.
var errLinkExpired = errors.New("the download link was refused or moved")

// withRetry runs op until it succeeds, fails with a non-transient error, or
// MaxAttempts is reached, waiting between tries.
func (f *File) withRetry(ctx context.Context, what string, op func() error) error {
	p := f.c.retry
	for attempt := 1; ; attempt++ {
		err := op()
		var t *transient
		if err == nil || !errors.As(err, &t) {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if attempt >= p.MaxAttempts {
			e := &Error{Source: f.name, Status: t.status, Err: t.err, Msg: fmt.Sprintf("%s: giving up after %d attempts: %v", what, attempt, t.err)}
			if t.status != 0 {
				e.Err = ErrHTTP
			}
			if t.status == http.StatusTooManyRequests {
				e.Err = ErrRateLimited
				e.Msg += " (rate limited: set HF_TOKEN for a higher limit, or wait)"
			}
			return e
		}
		wait := p.backoff(attempt)
		if t.ask {
			if t.wait > p.MaxWait {
				return &Error{Source: f.name, Err: ErrRateLimited,
					Msg: fmt.Sprintf("%s: the server asks to wait %v before retrying (more than %v): %v", what, t.wait, p.MaxWait, t.err)}
			}
			wait = t.wait
		}
		f.cnt.retry()
		if err := p.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// send sends req, adding the headers every request carries and the token
// when (and only when) the request goes to the Hub's host.
func (f *File) send(req *http.Request) (resp *http.Response, withToken bool, err error) {
	hub := f.c.isHub(req.URL)
	req.Header.Set("User-Agent", f.c.userAgent)
	// Ask for the bytes as stored: sizes and ranges refer to them, and Go
	// would otherwise ask for gzip on requests without Range.
	req.Header.Set("Accept-Encoding", "identity")
	if hub && f.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.c.token)
		withToken = true
	}
	f.cnt.request(hub)
	resp, err = f.c.http.Do(req)
	if err == nil {
		f.c.answered.Store(req.URL.Host, true)
	}
	return resp, withToken, err
}

// guard derives a request context that is cancelled when no byte arrives
// for StallTimeout; touch restarts the clock.
func (f *File) guard(ctx context.Context) (rctx context.Context, touch func(), stop func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(f.c.stall, func() { cancel(errStalled) })
	return rctx, func() { t.Reset(f.c.stall) }, func() { t.Stop(); cancel(nil) }
}

// transportFailure classifies an error of sending a request to host or
// reading a body: the caller's cancellation ends everything, what cannot
// succeed later fails at once (see permanentTransport), the rest (resets,
// timeouts, stalls, unexpected EOF) is retried.
func (f *File) transportFailure(ctx, rctx context.Context, host string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if context.Cause(rctx) == errStalled {
		err = fmt.Errorf("%w (%v)", errStalled, f.c.stall)
	}
	_, answered := f.c.answered.Load(host)
	if msg, ok := permanentTransport(err, host, answered); ok {
		return &Error{Source: f.name, Err: err, Msg: msg}
	}
	return &transient{err: err}
}

// permanentTransport says whether a transport error to host cannot be cured
// by waiting, and if so explains it in one line: a name that does not exist
// (a DNS answer, not a DNS timeout), a refused connection to a host that has
// never answered (nothing listens there; a host that did answer may be
// restarting), a plain-HTTP (or other non-TLS) server spoken to as https,
// and a certificate that does not verify.
func permanentTransport(err error, host string, answered bool) (string, bool) {
	var dns *net.DNSError
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("host %q not found (DNS: %s)", dns.Name, dns.Err), true
	case errors.Is(err, syscall.ECONNREFUSED) && !answered:
		return fmt.Sprintf("connection to %s refused: no server listens there", host), true
	case errors.Is(err, http.ErrSchemeMismatch):
		return fmt.Sprintf("%s answered an https request in plain HTTP: use an http:// URL (or HF_ENDPOINT) for it", host), true
	case errors.As(err, &rh):
		return fmt.Sprintf("%s does not speak TLS: check the URL's scheme and port", host), true
	case errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn):
		return err.Error(), true
	}
	return "", false
}

// statusFailure turns an error status into a transient failure (408, 429,
// 5xx, with the wait the server asks for) or a permanent *Error.
func (f *File) statusFailure(resp *http.Response, withToken bool) error {
	if retryable(resp.StatusCode) {
		t := &transient{err: fmt.Errorf("HTTP %s from %s", resp.Status, resp.Request.URL.Host), status: resp.StatusCode}
		t.wait, t.ask = serverWait(resp.Header, time.Now())
		return t
	}
	return f.statusError(resp, f.c.isHub(resp.Request.URL), withToken)
}

// resolution is what one resolve learns.
type resolution struct {
	loc                           Location
	link                          link
	size                          int64
	etag, sha256, gitSHA1, commit string
}

var (
	hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// maxHops bounds the redirects followed in one resolve.
const maxHops = 8

// resolve finds where the bytes of the file at revision rev are and what
// they are. For a Hub file it sends HEAD to the resolve URL, as
// huggingface_hub does, following only redirects within the Hub (renamed
// repos) and stopping at the redirect to the CDN, whose headers describe the
// file. For a plain URL it sends GET "Range: bytes=0-0" (signed URLs often
// refuse HEAD), following redirects without credentials, and learns the size
// from Content-Range.
func (f *File) resolve(ctx context.Context, rev string) (resolution, error) {
	var r resolution
	err := f.withRetry(ctx, "resolving", func() error {
		r = resolution{loc: f.loc}
		target := f.loc.URL
		if f.loc.IsHub() {
			target = f.loc.ResolveURL(rev)
		}
		for hop := 0; hop <= maxHops; hop++ {
			next, done, err := f.resolveHop(ctx, target, &r)
			if err != nil || done {
				return err
			}
			target = next
		}
		return &Error{Source: f.name, Err: ErrHTTP, Msg: fmt.Sprintf("more than %d redirects", maxHops)}
	})
	return r, err
}

// resolveHop sends one resolve request to target. It fills r and reports
// done, or returns the next URL to try.
func (f *File) resolveHop(ctx context.Context, target string, r *resolution) (next string, done bool, err error) {
	rctx, _, stop := f.guard(ctx)
	defer stop()
	method := http.MethodHead
	if !r.loc.IsHub() {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(rctx, method, target, nil)
	if err != nil {
		return "", false, &Error{Source: f.name, Err: ErrBadSpec, Msg: err.Error()}
	}
	if method == http.MethodGet {
		req.Header.Set("Range", "bytes=0-0")
	}
	resp, withToken, err := f.send(req)
	if err != nil {
		return "", false, f.transportFailure(ctx, rctx, req.URL.Host, err)
	}
	defer resp.Body.Close()
	h := resp.Header
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && h.Get("Location") != "":
		to, err := resp.Location()
		if err != nil {
			return "", false, &Error{Source: f.name, Err: ErrHTTP, Msg: "bad redirect: " + err.Error()}
		}
		if r.loc.IsHub() && h.Get("X-Linked-Size") != "" {
			// The redirect to the bytes (the CDN): its headers describe
			// the file.
			if err := f.hubMeta(h, -1, r); err != nil {
				return "", false, err
			}
			r.link = f.newLink(to.String())
			return "", true, nil
		}
		if r.loc.IsHub() && f.c.isHub(to) {
			// A redirect within the Hub: a renamed repo. Follow it and
			// adopt the new name so later resolves go straight there.
			if nl, err := parseURL(to.String(), f.c.endpoint); err == nil && nl.IsHub() {
				r.loc.RepoType, r.loc.Repo = nl.RepoType, nl.Repo
			}
		}
		return to.String(), false, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if err := f.describeDirect(resp, r); err != nil {
			return "", false, err
		}
		return "", true, nil
	case resp.StatusCode == http.StatusForbidden && !r.loc.IsHub():
		return "", false, &Error{Source: f.name, Status: resp.StatusCode, Err: ErrForbidden,
			Msg: fmt.Sprintf("access denied (403) by %s (an expired or invalid signed URL?)", resp.Request.URL.Host)}
	}
	return "", false, f.statusFailure(resp, withToken)
}

// describeDirect fills r from a 2xx resolve answer: a file the Hub serves
// itself (not LFS), or the final hop of a plain URL.
func (f *File) describeDirect(resp *http.Response, r *resolution) error {
	h := resp.Header
	u := resp.Request.URL.String()
	if r.loc.IsHub() {
		if err := f.hubMeta(h, resp.ContentLength, r); err != nil {
			return err
		}
		if r.commit != "" {
			u = r.loc.ResolveURL(r.commit)
		}
		r.link = f.newLink(u)
		return nil
	}
	r.etag = strongETag(h.Get("ETag"))
	switch resp.StatusCode {
	case http.StatusPartialContent:
		_, _, total, err := parseContentRange(h.Get("Content-Range"))
		if err != nil || total < 0 {
			return &Error{Source: f.name, Err: ErrHTTP, Msg: fmt.Sprintf("cannot learn the size: Content-Range %q", h.Get("Content-Range"))}
		}
		r.size = total
		// Read the one byte so the connection can be reused.
		n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 2))
		f.cnt.received(n)
		f.cnt.wasted(n)
	default:
		// The server ignores Range; closing the body unread stops the
		// transfer. Reads will see the same and apply RangeIgnoredLimit.
		if resp.ContentLength < 0 {
			return &Error{Source: f.name, Err: ErrRangeIgnored, Msg: fmt.Sprintf("%s ignores Range and gives no size", resp.Request.URL.Host)}
		}
		r.size = resp.ContentLength
	}
	r.link = f.newLink(u)
	return nil
}

// hubMeta reads what the Hub says of a file, as huggingface_hub does:
// X-Linked-Size (else the answer's own length, -1 for none), X-Linked-Etag
// (else ETag), X-Repo-Commit. A 64-hex-digit tag is the sha256 of an LFS
// file; a 40-digit ETag without X-Linked-Etag is the git blob id of a file
// the Hub stores in git.
func (f *File) hubMeta(h http.Header, length int64, r *resolution) error {
	r.size = length
	if ls := h.Get("X-Linked-Size"); ls != "" {
		n, err := strconv.ParseInt(ls, 10, 64)
		if err != nil {
			return &Error{Source: f.name, Err: ErrHTTP, Msg: fmt.Sprintf("the Hub sent a bad X-Linked-Size %q", ls)}
		}
		r.size = n
	}
	if r.size < 0 {
		return &Error{Source: f.name, Err: ErrHTTP, Msg: "the Hub did not say the file's size"}
	}
	linked := unquoteETag(h.Get("X-Linked-Etag"))
	r.etag = cmp.Or(linked, unquoteETag(h.Get("ETag")))
	switch {
	case hex64.MatchString(r.etag):
		r.sha256 = r.etag
	case linked == "" && hex40.MatchString(r.etag):
		r.gitSHA1 = r.etag
	}
	r.commit = h.Get("X-Repo-Commit")
	return nil
}

// strongETag returns a strong entity tag without quotes, "" for a weak or
// absent one (weak tags do not promise identical bytes).
func strongETag(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "W/") {
		return ""
	}
	return unquoteETag(s)
}

// unquoteETag strips the weak marker and quotes of an entity tag.
func unquoteETag(s string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "W/"), `"`)
}

// newLink makes a link to u, valid for LinkTTL or until the expiry the URL
// itself states (CloudFront's Expires, S3's X-Amz-Date + X-Amz-Expires),
// less a margin so a request does not start just before it expires.
func (f *File) newLink(u string) link {
	now := time.Now()
	exp := now.Add(f.c.linkTTL)
	if pu, err := url.Parse(u); err == nil {
		q := pu.Query()
		var stated time.Time
		if s, err := strconv.ParseInt(q.Get("Expires"), 10, 64); err == nil {
			stated = time.Unix(s, 0)
		} else if d, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date")); err == nil {
			if s, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64); err == nil {
				stated = d.Add(time.Duration(s) * time.Second)
			}
		}
		if !stated.IsZero() {
			margin := min(30*time.Second, max(stated.Sub(now), 0)/4)
			if s := stated.Add(-margin); s.Before(exp) {
				exp = s
			}
		}
	}
	return link{url: u, exp: exp}
}

// currentLink returns the link to use, resolving again first if it expired.
func (f *File) currentLink(ctx context.Context) (link, error) {
	f.mu.Lock()
	l := f.link
	f.mu.Unlock()
	if time.Now().Before(l.exp) {
		return l, nil
	}
	return f.reresolve(ctx, l.gen)
}

// reresolve resolves the file again at the pinned commit, unless another
// reader already did since it got link generation gen.
func (f *File) reresolve(ctx context.Context, gen int) (link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.link.gen != gen {
		return f.link, nil
	}
	rev := cmp.Or(f.commit, f.loc.Revision)
	r, err := f.resolve(ctx, rev)
	if err != nil {
		return link{}, err
	}
	f.cnt.reresolve()
	if r.size != f.size || (f.sha256 != "" && r.sha256 != f.sha256) || (f.commit != "" && r.commit != "" && r.commit != f.commit) {
		return link{}, &Error{Source: f.name, Err: ErrChanged,
			Msg: fmt.Sprintf("resolving again gave a different file (size %d, sha256 %q, commit %q; was %d, %q, %q)",
				r.size, r.sha256, r.commit, f.size, f.sha256, f.commit)}
	}
	r.link.gen = gen + 1
	f.link = r.link
	return f.link, nil
}

// maxReResolves bounds the re-resolves within one read, in case the CDN
// refuses even fresh links.
const maxReResolves = 3

// fetch fills p with the bytes at off (p lies within the file). Each try
// asks only for the bytes not yet received, so a reset mid-body costs the
// rest of the range, not all of it. It returns how many bytes of p are valid.
func (f *File) fetch(ctx context.Context, p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, &Error{Source: f.name, Err: io.ErrClosedPipe, Msg: "read after Close"}
	}
	got, refused := 0, 0
	err := f.withRetry(ctx, fmt.Sprintf("reading %s at offset %d", humanize.IBytes(uint64(len(p))), off), func() error {
		for got < len(p) {
			l, err := f.currentLink(ctx)
			if err != nil {
				return err
			}
			n, err := f.rangeOnce(ctx, l.url, p[got:], off+int64(got))
			got += n
			if errors.Is(err, errLinkExpired) {
				if refused++; refused > maxReResolves {
					return &Error{Source: f.name, Err: ErrForbidden,
						Msg: fmt.Sprintf("the download server refuses or redirects even freshly resolved links (%d times)", refused)}
				}
				if _, err := f.reresolve(ctx, l.gen); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return got, err
}

// rangeOnce sends one range request for p at off and reads what comes. It
// returns the number of valid bytes placed at the start of p: all of them,
// a prefix when the server sent a shorter range than asked (the caller asks
// for the rest), or a prefix and a transient error when the body broke off.
func (f *File) rangeOnce(ctx context.Context, u string, p []byte, off int64) (int, error) {
	rctx, touch, stop := f.guard(ctx)
	defer stop()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, &Error{Source: f.name, Err: ErrBadSpec, Msg: err.Error()}
	}
	end := off + int64(len(p)) - 1
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, end))
	resp, withToken, err := f.send(req)
	if err != nil {
		return 0, f.transportFailure(ctx, rctx, req.URL.Host, err)
	}
	defer resp.Body.Close()
	body := &meter{r: resp.Body, touch: touch, cnt: f.cnt}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, last, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		switch {
		case err != nil:
			return 0, &Error{Source: f.name, Err: ErrHTTP, Msg: fmt.Sprintf("206 with a bad Content-Range %q", resp.Header.Get("Content-Range"))}
		case total >= 0 && total != f.size:
			return 0, &Error{Source: f.name, Err: ErrChanged, Msg: fmt.Sprintf("the server's file has %d bytes, not the %d resolved", total, f.size)}
		case start != off || last > end || last < start:
			return 0, &Error{Source: f.name, Err: ErrHTTP,
				Msg: fmt.Sprintf("asked for bytes %d-%d, the server sent %q", off, end, resp.Header.Get("Content-Range"))}
		}
		if et := strongETag(resp.Header.Get("ETag")); !f.loc.IsHub() && f.etag != "" && et != "" && et != f.etag {
			// Plain URLs have no commit to pin; the entity tag stands in.
			return 0, &Error{Source: f.name, Err: ErrChanged, Msg: fmt.Sprintf("the file changed on the server (ETag %q, was %q)", et, f.etag)}
		}
		want := int(last - start + 1)
		k, err := io.ReadFull(body, p[:want])
		if err != nil {
			return k, f.shortBody(ctx, rctx, req.URL.Host, err, k, want)
		}
		// Look for the end of the body, so the connection is reused, and
		// refuse a body longer than its Content-Range.
		if extra, _ := body.Read(make([]byte, 1)); extra > 0 {
			f.cnt.wasted(int64(want + extra))
			return 0, &transient{err: fmt.Errorf("the body is longer than its Content-Range %q", resp.Header.Get("Content-Range"))}
		}
		return want, nil
	case http.StatusOK:
		return f.wholeFileAnswer(ctx, rctx, resp, body, p, off)
	case http.StatusForbidden:
		if !f.c.isHub(resp.Request.URL) {
			return 0, errLinkExpired
		}
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		// The link no longer leads to the bytes: find where they are now.
		return 0, errLinkExpired
	}
	return 0, f.statusFailure(resp, withToken)
}

// shortBody is the failure of a body that ended (or broke) after k of want
// bytes: never accepted, retried for the rest.
func (f *File) shortBody(ctx, rctx context.Context, host string, err error, k, want int) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &transient{err: fmt.Errorf("short body: %d of %d bytes", k, want)}
	}
	return f.transportFailure(ctx, rctx, host, err)
}

// wholeFileAnswer handles a 200 to a range request: the server ignored
// Range and is sending the whole file. Its first off+len(p) bytes serve the
// read when that costs at most RangeIgnoredLimit (or the file is that
// small); the body is then closed, which stops the transfer. Otherwise it is
// closed unread and the read fails with ErrRangeIgnored.
func (f *File) wholeFileAnswer(ctx, rctx context.Context, resp *http.Response, body *meter, p []byte, off int64) (int, error) {
	if resp.ContentLength >= 0 && resp.ContentLength != f.size {
		return 0, &Error{Source: f.name, Err: ErrChanged, Msg: fmt.Sprintf("the server's file has %d bytes, not the %d resolved", resp.ContentLength, f.size)}
	}
	need := off + int64(len(p))
	if need > f.c.rangeLimit && f.size > f.c.rangeLimit {
		return 0, &Error{Source: f.name, Status: resp.StatusCode, Err: ErrRangeIgnored,
			Msg: fmt.Sprintf("%s ignored the Range header and started sending the whole %s file; refusing to download %s to read %s at offset %d (limit %s)",
				resp.Request.URL.Host, humanize.IBytes(uint64(f.size)), humanize.IBytes(uint64(need)),
				humanize.IBytes(uint64(len(p))), off, humanize.IBytes(uint64(f.c.rangeLimit)))}
	}
	skipped, err := io.CopyN(io.Discard, body, off)
	f.cnt.wasted(skipped)
	if err != nil {
		return 0, f.shortBody(ctx, rctx, resp.Request.URL.Host, err, 0, len(p))
	}
	k, err := io.ReadFull(body, p)
	if err != nil {
		return k, f.shortBody(ctx, rctx, resp.Request.URL.Host, err, k, len(p))
	}
	return k, nil
}

// meter counts the bytes of a body and restarts the stall clock on each.
type meter struct {
	r     io.Reader
	touch func()
	cnt   counters
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if n > 0 {
		m.touch()
		m.cnt.received(int64(n))
	}
	return n, err
}

// parseContentRange parses "bytes first-last/total" (total may be "*",
// returned as -1).
func parseContentRange(s string) (first, last, total int64, err error) {
	bad := fmt.Errorf("bad Content-Range %q", s)
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, 0, bad
	}
	if first, err = strconv.ParseInt(a, 10, 64); err != nil || first < 0 {
		return 0, 0, 0, bad
	}
	if last, err = strconv.ParseInt(b, 10, 64); err != nil || last < first {
		return 0, 0, 0, bad
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil || total <= last {
			return 0, 0, 0, bad
		}
	}
	return first, last, total, nil
}
