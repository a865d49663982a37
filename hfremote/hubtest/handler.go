package hubtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// recorder notes the status and counts the body bytes of an answer.
type recorder struct {
	http.ResponseWriter
	host   string // "hub" or "cdn"
	n      int    // the request's number on that host
	status int
	count  func(int64)
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.count(int64(n))
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// begin counts a request on host ("hub" or "cdn"), waits the latency and
// answers a status fault. It returns the writer that records the answer (to
// pass to a deferred s.record), the request's fault, and whether the answer
// is already given.
func (s *Server) begin(host string, rw http.ResponseWriter, r *http.Request) (w *recorder, f *Fault, done bool) {
	num, sent := &s.hubN, &s.hubBytes
	if host == "cdn" {
		num, sent = &s.cdnN, &s.cdnBytes
	}
	s.inflight.Add(1)
	w = &recorder{ResponseWriter: rw, host: host, n: int(num.Add(1)), count: func(k int64) { sent.Add(k) }}
	s.delay(r)
	f = s.fault(host, w.n)
	return w, f, statusFault(w, f)
}

func (s *Server) record(w *recorder, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.inflight.Add(-1)
	s.log = append(s.log, Request{
		Host: w.host, N: w.n, Method: r.Method, Path: r.URL.RequestURI(), Range: r.Header.Get("Range"),
		Auth: r.Header.Get("Authorization") != "", Status: w.status,
	})
}

func (s *Server) fault(host string, n int) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.On == host && (f.Nth == 0 || f.Nth == n) {
			return &f
		}
	}
	return nil
}

// delay waits Options.Latency, or until the client goes away.
func (s *Server) delay(r *http.Request) {
	if s.opts.Latency <= 0 {
		return
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// statusFault answers a Status or Expire fault; it reports whether it did.
func statusFault(w *recorder, f *Fault) bool {
	switch {
	case f == nil:
		return false
	case f.Kind == Status:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.RateLimitReset > 0 {
			w.Header().Set("RateLimit", fmt.Sprintf(`"resolvers";r=0;t=%d`, f.RateLimitReset))
			w.Header().Set("RateLimit-Policy", `"fixed window";"resolvers";q=3000;w=300`)
		}
		http.Error(w, http.StatusText(f.Status), f.Status)
		return true
	case f.Kind == Expire:
		expired(w)
		return true
	}
	return false
}

// expired answers like S3 for an expired signed URL.
func expired(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>")
}

// reset aborts the connection with a TCP RST.
func reset(w *recorder) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
	w.status = 0
}

// hubError answers an error the way the Hub does: X-Error-Code names what
// is missing, X-Error-Message says it in words.
func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"error\":%q}\n", msg)
}

// specialRef matches the slash-containing refs a client may send unescaped.
var specialRef = regexp.MustCompile(`^(pr/[0-9]+|convert/[^/]+)/`)

// parseResolve splits an escaped request path
// /[datasets/|spaces/]owner/name/resolve/<rev>/<path>.
func parseResolve(escaped string) (repoID, rev, file string, ok bool) {
	p := strings.TrimPrefix(escaped, "/")
	prefix := ""
	for _, t := range []string{"datasets/", "spaces/"} {
		if strings.HasPrefix(p, t) {
			prefix, p = t, p[len(t):]
		}
	}
	segs := strings.SplitN(p, "/", 5)
	if len(segs) != 5 || segs[2] != "resolve" {
		return "", "", "", false
	}
	rev, err := url.PathUnescape(segs[3])
	if err != nil {
		return "", "", "", false
	}
	rest := segs[4]
	if rev == "refs" {
		m := specialRef.FindString(rest)
		if m == "" {
			return "", "", "", false
		}
		rev, rest = "refs/"+strings.TrimSuffix(m, "/"), rest[len(m):]
	}
	if file, err = url.PathUnescape(rest); err != nil || file == "" {
		return "", "", "", false
	}
	return prefix + segs[0] + "/" + segs[1], rev, file, true
}

func (s *Server) serveHub(rw http.ResponseWriter, r *http.Request) {
	w, f, done := s.begin("hub", rw, r)
	defer s.record(w, r)
	if done {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	repoID, rev, file, ok := parseResolve(r.URL.EscapedPath())
	if !ok {
		http.NotFound(w, r)
		return
	}
	if to, moved := s.opts.Moved[repoID]; moved {
		_, tail, _ := strings.Cut(r.URL.EscapedPath(), "/resolve/")
		w.Header().Set("Location", "/"+to+"/resolve/"+tail)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token != "" && len(s.opts.Tokens) > 0 && !slices.Contains(s.opts.Tokens, token) {
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return
	}
	c, b, status, code, msg := s.lookup(repoID, rev, file, token)
	if status != 0 {
		hubError(w, status, code, msg)
		return
	}
	w.Header().Set("X-Repo-Commit", c.id)
	if s.opts.LFS(file, b.c.Size) {
		if f != nil && f.Kind == Reset {
			reset(w)
			return
		}
		sha, err := b.sha()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		s.blobs[sha] = b
		s.mu.Unlock()
		link := s.cdnLink(sha)
		h := w.Header()
		h.Set("Location", link)
		h.Set("X-Linked-Etag", strconv.Quote(sha))
		h.Set("X-Linked-Size", strconv.FormatInt(b.c.Size, 10))
		// As on the Hub, ETag names the LFS pointer, not the content.
		pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha, b.c.Size)
		pointerID, _ := gitHash(Bytes([]byte(pointer)))
		h.Set("ETag", strconv.Quote(pointerID))
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusFound)
		if r.Method == http.MethodGet {
			io.WriteString(w, "Found. Redirecting to "+link)
		}
		return
	}
	git, err := b.gitID()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("ETag", strconv.Quote(git))
	s.serveContent(w, r, b.c, f)
}

// lookup finds the file, or the Hub's error for its absence.
func (s *Server) lookup(repoID, rev, file, token string) (c *commit, b *blob, status int, code, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[repoID]
	if r == nil {
		// Anonymous callers get 401, so that private repos do not leak.
		if token == "" {
			return nil, nil, http.StatusUnauthorized, "RepoNotFound", "Repository not found"
		}
		return nil, nil, http.StatusNotFound, "RepoNotFound", "Repository not found"
	}
	if want, gated := s.opts.Gated[repoID]; gated && token != want {
		if token == "" {
			return nil, nil, http.StatusUnauthorized, "GatedRepo",
				fmt.Sprintf("Access to model %s is restricted. You must have access to it and be authenticated to access it. Please log in.", repoID)
		}
		return nil, nil, http.StatusForbidden, "GatedRepo",
			fmt.Sprintf("Access to model %s is restricted and you are not in the authorized list. Visit %s/%s to ask for access.", repoID, s.hub.URL, repoID)
	}
	c = s.commits[r.refs[rev]]
	if c == nil {
		if byID := s.commits[rev]; byID != nil && byID.repo == repoID {
			c = byID
		}
	}
	if c == nil {
		return nil, nil, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: " + rev
	}
	b = c.files[file]
	if b == nil {
		return nil, nil, http.StatusNotFound, "EntryNotFound", "Entry not found"
	}
	return c, b, 0, "", ""
}

// cdnLink signs a link to the blob, valid for LinkTTL.
func (s *Server) cdnLink(sha string) string {
	exp := strconv.FormatInt(time.Now().Add(s.opts.LinkTTL).Unix(), 10)
	return s.CDNURL() + "/blobs/" + sha + "?Expires=" + exp + "&Signature=" + s.sign(sha, exp)
}

func (s *Server) sign(sha, exp string) string {
	m := hmac.New(sha256.New, s.key)
	io.WriteString(m, sha+"\n"+exp)
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) serveCDN(rw http.ResponseWriter, r *http.Request) {
	in := s.cdnInFlight.Add(1)
	defer s.cdnInFlight.Add(-1)
	for m := s.cdnMaxIn.Load(); in > m && !s.cdnMaxIn.CompareAndSwap(m, in); m = s.cdnMaxIn.Load() {
	}
	if r.Header.Get("Authorization") != "" {
		s.cdnAuth.Add(1)
	}
	w, f, done := s.begin("cdn", rw, r)
	defer s.record(w, r)
	if done {
		return
	}
	sha, ok := strings.CutPrefix(r.URL.Path, "/blobs/")
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("Expires"), 10, 64)
	if !ok || err != nil || !hmac.Equal([]byte(q.Get("Signature")), []byte(s.sign(sha, q.Get("Expires")))) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "<Error><Code>AccessDenied</Code><Message>Access denied</Message></Error>")
		return
	}
	if time.Now().Unix() >= exp {
		expired(w)
		return
	}
	s.mu.Lock()
	b := s.blobs[sha]
	s.mu.Unlock()
	if b == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", strconv.Quote(sha))
	s.serveContent(w, r, b.c, f)
}

// serveContent answers GET or HEAD for c, honouring a single Range (unless
// the fault says to ignore it) and applying body faults.
func (s *Server) serveContent(w *recorder, r *http.Request, c Content, f *Fault) {
	kind := FaultKind(0)
	if f != nil {
		kind = f.Kind
	}
	h := w.Header()
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Type", "application/octet-stream")
	start, length, status := int64(0), c.Size, http.StatusOK
	if rh := r.Header.Get("Range"); rh != "" && kind != IgnoreRange {
		a, b, ok := parseRange(rh, c.Size)
		if !ok {
			h.Set("Content-Range", fmt.Sprintf("bytes */%d", c.Size))
			http.Error(w, "range not satisfiable", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, length, status = a, b-a+1, http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, c.Size))
	}
	send := length
	if kind == ShortBody && status == http.StatusPartialContent {
		send = length / 2
	}
	h.Set("Content-Length", strconv.FormatInt(send, 10))
	if r.Method == http.MethodHead {
		if kind == Reset {
			reset(w)
			return
		}
		w.WriteHeader(status)
		return
	}
	w.WriteHeader(status)
	body := io.NewSectionReader(c.R, start, send)
	if kind != Reset && kind != Stall {
		s.copyBody(w, r, body)
		return
	}
	s.copyBody(w, r, io.LimitReader(body, send/2))
	http.NewResponseController(w).Flush()
	if kind == Reset {
		reset(w)
		return
	}
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// copyBody writes src, at most Options.Bandwidth bytes per second, until
// it ends or the client goes away.
func (s *Server) copyBody(w io.Writer, r *http.Request, src io.Reader) {
	buf := make([]byte, 32<<10)
	start, sent := time.Now(), int64(0)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
			if bw := s.opts.Bandwidth; bw > 0 {
				due := start.Add(time.Duration(float64(sent) / float64(bw) * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					select {
					case <-time.After(d):
					case <-r.Context().Done():
						return
					}
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// parseRange parses a single "bytes=a-b", "bytes=a-" or "bytes=-n" range of
// a size-byte file into first and last offsets.
func parseRange(h string, size int64) (first, last int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 || size == 0 {
			return 0, 0, false
		}
		return max(size-n, 0), size - 1, true
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 || first >= size {
		return 0, 0, false
	}
	last = size - 1
	if b != "" {
		l, err := strconv.ParseInt(b, 10, 64)
		if err != nil || l < first {
			return 0, 0, false
		}
		last = min(l, size-1)
	}
	return first, last, true
}
