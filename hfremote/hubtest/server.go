package hubtest

import (
	"cmp"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server. The zero value serves the directory with no
// gated repos, no faults and no added latency.
type Options struct {
	// HubAddr and CDNAddr are the listening addresses; default
	// "127.0.0.1:0" and "127.0.0.2:0" (see the package doc for the
	// fallback when 127.0.0.2 cannot be bound).
	HubAddr, CDNAddr string
	// Gated maps a repo id ("owner/name", "datasets/owner/name") to the
	// one token whose user has accepted its terms.
	Gated map[string]string
	// Tokens, when not empty, are the only valid tokens: a request with
	// another gets 401 "Invalid credentials in Authorization header".
	Tokens []string
	// Moved maps an old repo id to its new one: the Hub answers 307 to the
	// new name, as for renamed repos.
	Moved map[string]string
	// Faults script failures; see Fault.
	Faults []Fault
	// Latency is added before every answer of both hosts.
	Latency time.Duration
	// Bandwidth, when positive, limits each response body to that many
	// bytes per second, like a CDN edge's per-connection throughput.
	Bandwidth int64
	// LinkTTL is the validity of CDN links; default one hour, as the Hub's.
	LinkTTL time.Duration
	// LFS tells which files are stored in LFS (redirected to the CDN);
	// default: .gguf, .bin and .safetensors files, and files of 10 MiB or more.
	LFS func(path string, size int64) bool
}

// FaultKind is a kind of injected failure.
type FaultKind int

// The fault kinds.
const (
	// Reset sends the headers and half the body, then resets the
	// connection (TCP RST).
	Reset FaultKind = iota + 1
	// Status answers Fault.Status (e.g. 429, 500, 503) with Fault.RetryAfter
	// and a RateLimit header when Fault.RateLimitReset is set.
	Status
	// ShortBody sends a 206 whose Content-Range promises the range asked
	// but whose body (and Content-Length) holds only half of it.
	ShortBody
	// IgnoreRange answers a range request with 200 and the whole file.
	IgnoreRange
	// Expire answers 403 "Request has expired" as S3 does for an expired
	// signed link (on the CDN).
	Expire
	// Stall sends the headers and half the body, then sends nothing more
	// until the client gives up.
	Stall
)

// Fault is one scripted failure.
type Fault struct {
	// On is "hub" or "cdn".
	On string
	// Nth is the 1-based number of the request on that host that fails;
	// 0 means every request.
	Nth int
	// Kind is what happens.
	Kind FaultKind
	// Status is the HTTP status of a Status fault.
	Status int
	// RetryAfter is the Retry-After header of a Status fault ("" for none).
	RetryAfter string
	// RateLimitReset, when positive, adds the Hub's RateLimit header
	// `"resolvers";r=0;t=<RateLimitReset>` to a Status fault.
	RateLimitReset int
}

// Request is one request the server saw, for tests.
type Request struct {
	Host   string // "hub" or "cdn"
	N      int    // its number on that host, from 1
	Method string
	Path   string // escaped path and query
	Range  string // the Range header
	Auth   bool   // whether it carried an Authorization header
	Status int    // the status answered (0 for a reset connection)
}

// Stats are the server's counters.
type Stats struct {
	// HubRequests and CDNRequests count the requests each host received.
	HubRequests, CDNRequests int64
	// CDNAuthorization counts CDN requests that carried Authorization; a
	// well-behaved client keeps it at 0.
	CDNAuthorization int64
	// MaxCDNInFlight is the most CDN requests served at once.
	MaxCDNInFlight int64
	// HubBytes and CDNBytes are the body bytes written to connections
	// (bytes the client had no use for included, up to the moment it
	// closed the connection).
	HubBytes, CDNBytes int64
}

// Server is a running loopback Hub and CDN.
type Server struct {
	opts     Options
	hub, cdn *httptest.Server
	cdnHost  string
	key      []byte

	mu      sync.Mutex
	repos   map[string]*repo
	commits map[string]*commit
	blobs   map[string]*blob // by sha256, once a resolve has published it
	faults  []Fault
	log     []Request
	nCommit int
	files   []*os.File

	hubN, cdnN atomic.Int64
	// inflight counts requests begun and not yet recorded, so Requests
	// can wait for the log of an answer the client has already read.
	inflight              atomic.Int64
	cdnAuth               atomic.Int64
	cdnInFlight, cdnMaxIn atomic.Int64
	hubBytes, cdnBytes    atomic.Int64
}

type repo struct {
	id   string
	refs map[string]string // branch or ref name -> commit id
}

type commit struct {
	id    string
	repo  string
	files map[string]*blob
}

// blob is a file's content and its hashes, computed on first use (a
// generated 1 GiB file is hashed only if a client asks for it).
type blob struct {
	c                Content
	shaOnce, gitOnce sync.Once
	sha256, git      string
	shaErr, gitErr   error
}

// sha is the content's sha256, the X-Linked-Etag of an LFS file.
func (b *blob) sha() (string, error) {
	b.shaOnce.Do(func() {
		if b.c.SHA256 != "" {
			b.sha256 = b.c.SHA256
			return
		}
		b.sha256, b.shaErr = hashContent(sha256.New(), "", b.c)
	})
	return b.sha256, b.shaErr
}

// gitID is the git blob id, the ETag of a file the Hub serves itself.
func (b *blob) gitID() (string, error) {
	b.gitOnce.Do(func() {
		b.git, b.gitErr = gitHash(b.c)
	})
	return b.git, b.gitErr
}

// gitHash is git's object id of a blob: the sha1 of "blob <size>\0"
// followed by the content.
func gitHash(c Content) (string, error) {
	return hashContent(sha1.New(), fmt.Sprintf("blob %d\x00", c.Size), c)
}

func hashContent(h hash.Hash, prefix string, c Content) (string, error) {
	io.WriteString(h, prefix)
	if _, err := io.Copy(h, io.NewSectionReader(c.R, 0, c.Size)); err != nil {
		return "", err
	}
	return hexSum(h), nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// NewServer starts a Hub serving root (see the package doc for the layout;
// "" starts an empty Hub to fill with Commit) and its CDN.
func NewServer(root string, opts Options) (*Server, error) {
	if opts.LinkTTL <= 0 {
		opts.LinkTTL = time.Hour
	}
	if opts.LFS == nil {
		opts.LFS = defaultLFS
	}
	s := &Server{
		opts:    opts,
		repos:   map[string]*repo{},
		commits: map[string]*commit{},
		blobs:   map[string]*blob{},
		faults:  slices.Clone(opts.Faults),
		key:     make([]byte, 32),
	}
	if _, err := rand.Read(s.key); err != nil {
		return nil, err
	}
	if root != "" {
		if err := s.load(root); err != nil {
			s.closeFiles()
			return nil, err
		}
	}
	hubL, err := net.Listen("tcp", cmp.Or(opts.HubAddr, "127.0.0.1:0"))
	if err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("hubtest: hub listener: %w", err)
	}
	cdnL, cdnHost, err := listenCDN(opts.CDNAddr)
	if err != nil {
		hubL.Close()
		s.closeFiles()
		return nil, err
	}
	s.cdnHost = cdnHost
	s.hub = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHub))
	s.hub.Listener.Close()
	s.hub.Listener = hubL
	s.cdn = httptest.NewUnstartedServer(http.HandlerFunc(s.serveCDN))
	s.cdn.Listener.Close()
	s.cdn.Listener = cdnL
	s.hub.Start()
	s.cdn.Start()
	return s, nil
}

// listenCDN listens on 127.0.0.2 (or addr), falling back to 127.0.0.1 with
// links naming "localhost", a different host name from the Hub's.
func listenCDN(addr string) (net.Listener, string, error) {
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, "", fmt.Errorf("hubtest: CDN listener: %w", err)
		}
		return l, l.Addr().String(), nil
	}
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		return l, l.Addr().String(), nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("hubtest: CDN listener: %w", err)
	}
	return l, "localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func defaultLFS(p string, size int64) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".gguf", ".bin", ".safetensors":
		return true
	}
	return size >= 10<<20
}

// URL is the Hub's endpoint, e.g. http://127.0.0.1:41234 (what HF_ENDPOINT
// would be set to).
func (s *Server) URL() string { return s.hub.URL }

// CDNURL is the CDN's base URL, on another host.
func (s *Server) CDNURL() string { return "http://" + s.cdnHost }

// Close stops both servers, closing client connections.
func (s *Server) Close() {
	s.hub.CloseClientConnections()
	s.cdn.CloseClientConnections()
	s.hub.Close()
	s.cdn.Close()
	s.closeFiles()
}

func (s *Server) closeFiles() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.Close()
	}
	s.files = nil
}

// SetFaults replaces the scripted faults; Nth keeps counting from the
// server's start.
func (s *Server) SetFaults(f []Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = slices.Clone(f)
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		HubRequests:      s.hubN.Load(),
		CDNRequests:      s.cdnN.Load(),
		CDNAuthorization: s.cdnAuth.Load(),
		MaxCDNInFlight:   s.cdnMaxIn.Load(),
		HubBytes:         s.hubBytes.Load(),
		CDNBytes:         s.cdnBytes.Load(),
	}
}

// Requests returns the requests seen so far, in the order they ended.
//
// A client can read the whole body of an answer before its handler has
// returned and logged it, so Requests first waits (up to a second) for the
// handlers in flight to finish: a test that reads the log right after a
// read sees that read's request.
func (s *Server) Requests() []Request {
	for deadline := time.Now().Add(time.Second); s.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Commit adds files to the branch (or ref) revision of repo ("owner/name",
// "datasets/owner/name"), creating either if needed, as one new commit
// whose id it returns. Files not named keep their content from the branch's
// previous commit, which stays reachable by its id.
func (s *Server) Commit(repoID, revision string, files map[string]Content) (string, error) {
	if err := checkRepoID(repoID); err != nil {
		return "", err
	}
	if revision == "" {
		return "", errors.New("hubtest: empty revision")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[repoID]
	if r == nil {
		r = &repo{id: repoID, refs: map[string]string{}}
		s.repos[repoID] = r
	}
	tree := map[string]*blob{}
	h := sha1.New()
	if parent := s.commits[r.refs[revision]]; parent != nil {
		for p, b := range parent.files {
			tree[p] = b
		}
		fmt.Fprintf(h, "parent %s\n", parent.id)
	}
	s.nCommit++
	fmt.Fprintf(h, "%s\n%s\n%d\n", repoID, revision, s.nCommit)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		c := files[p]
		if p == "" || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
			return "", fmt.Errorf("hubtest: bad path %q", p)
		}
		if c.R == nil || c.Size < 0 {
			return "", fmt.Errorf("hubtest: %s: no content", p)
		}
		tree[p] = &blob{c: c}
		fmt.Fprintf(h, "%s %d\n", p, c.Size)
	}
	id := hexSum(h)
	s.commits[id] = &commit{id: id, repo: repoID, files: tree}
	r.refs[revision] = id
	return id, nil
}

// checkRepoID accepts "owner/name" and "datasets/owner/name" (or spaces/).
func checkRepoID(id string) error {
	parts := strings.Split(id, "/")
	if len(parts) == 3 && (parts[0] == "datasets" || parts[0] == "spaces") {
		parts = parts[1:]
	}
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return fmt.Errorf("hubtest: bad repo id %q (want owner/name or datasets/owner/name)", id)
	}
	return nil
}

// load reads the directory tree of the package doc's layout.
func (s *Server) load(root string) error {
	for _, prefix := range []string{"", "datasets", "spaces"} {
		base := filepath.Join(root, prefix)
		owners, err := os.ReadDir(base)
		if err != nil {
			if prefix != "" && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("hubtest: %w", err)
		}
		for _, o := range owners {
			if !o.IsDir() || (prefix == "" && (o.Name() == "datasets" || o.Name() == "spaces")) {
				continue
			}
			names, err := os.ReadDir(filepath.Join(base, o.Name()))
			if err != nil {
				return fmt.Errorf("hubtest: %w", err)
			}
			for _, n := range names {
				if !n.IsDir() {
					continue
				}
				id := path.Join(prefix, o.Name(), n.Name())
				if err := s.loadRepo(id, filepath.Join(base, o.Name(), n.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Server) loadRepo(id, dir string) error {
	revs, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("hubtest: %w", err)
	}
	for _, rd := range revs {
		if !rd.IsDir() {
			continue
		}
		rev, err := url.PathUnescape(rd.Name())
		if err != nil {
			return fmt.Errorf("hubtest: revision folder %q: %w", rd.Name(), err)
		}
		files := map[string]Content{}
		top := filepath.Join(dir, rd.Name())
		err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			s.files = append(s.files, f)
			st, err := f.Stat()
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = Content{R: f, Size: st.Size()}
			return nil
		})
		if err != nil {
			return fmt.Errorf("hubtest: %w", err)
		}
		if _, err := s.Commit(id, rev, files); err != nil {
			return err
		}
	}
	return nil
}
