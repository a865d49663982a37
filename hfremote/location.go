package hfremote

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultEndpoint is the Hub's address when neither Options.Endpoint nor
// HF_ENDPOINT says otherwise.
const DefaultEndpoint = "https://huggingface.co"

// Repo types, as huggingface_hub names them.
const (
	RepoModel   = "model"
	RepoDataset = "dataset"
	RepoSpace   = "space"
)

// ErrBadSpec reports a source string that is not a valid hf:// or http(s)
// address.
var ErrBadSpec = errors.New("invalid remote source")

// Location names a remote file: either a file of a Hub repo (Repo set) or a
// plain URL (only URL set).
type Location struct {
	// Endpoint is the Hub's base URL, e.g. https://huggingface.co.
	Endpoint string
	// RepoType is RepoModel, RepoDataset or RepoSpace.
	RepoType string
	// Repo is "owner/name".
	Repo string
	// Revision is a branch, tag, commit or "refs/pr/N"; "main" by default.
	Revision string
	// Path is the file's path inside the repo, with "/" separators.
	Path string
	// URL is set for plain URLs that are not Hub files; empty for Hub files.
	URL string
}

// IsHub reports whether l names a file of a Hub repo (as opposed to a plain URL).
func (l Location) IsHub() bool { return l.Repo != "" }

// String gives the location in the form the user would write it: hf://...
// for Hub files, the URL otherwise.
func (l Location) String() string {
	if !l.IsHub() {
		return l.URL
	}
	s := "hf://" + l.typePrefix() + l.Repo
	if l.Revision != "" && l.Revision != "main" {
		s += "@" + l.Revision
	}
	return s + "/" + l.Path
}

// typePrefix is the URL prefix of the repo type, as the Hub spells it.
func (l Location) typePrefix() string {
	switch l.RepoType {
	case RepoDataset:
		return "datasets/"
	case RepoSpace:
		return "spaces/"
	}
	return ""
}

// RepoURL is the repo's page on the Hub, for error messages.
func (l Location) RepoURL() string {
	return strings.TrimRight(l.Endpoint, "/") + "/" + l.typePrefix() + l.Repo
}

// ResolveURL is the Hub's resolve URL of the file at revision rev. As in
// huggingface_hub, the revision is escaped as one path segment
// ("refs/pr/1" becomes "refs%2Fpr%2F1") and the file path segment by segment.
func (l Location) ResolveURL(rev string) string {
	segs := strings.Split(l.Path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return l.RepoURL() + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(segs, "/")
}

// sibling returns the location of another file of the same repo (or, for a
// plain URL, a relative reference). name is relative to this file's folder
// unless it starts with "/", which means the repo root.
func (l Location) sibling(name string) (Location, error) {
	if name == "" {
		return Location{}, fmt.Errorf("%w: empty sibling name", ErrBadSpec)
	}
	if !l.IsHub() {
		base, err := url.Parse(l.URL)
		if err != nil {
			return Location{}, fmt.Errorf("%w: %v", ErrBadSpec, err)
		}
		ref, err := url.Parse(name)
		if err != nil {
			return Location{}, fmt.Errorf("%w: %v", ErrBadSpec, err)
		}
		l.URL = base.ResolveReference(ref).String()
		return l, nil
	}
	p := name
	if !strings.HasPrefix(name, "/") {
		p = path.Join(path.Dir(l.Path), name)
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" || p == "." {
		return Location{}, fmt.Errorf("%w: sibling %q names no file", ErrBadSpec, name)
	}
	l.Path = p
	return l, nil
}

// IsRemote reports whether spec names a remote source (hf://, https:// or
// http://) rather than a local path.
func IsRemote(spec string) bool {
	for _, p := range []string{"hf://", "https://", "http://"} {
		if len(spec) >= len(p) && strings.EqualFold(spec[:len(p)], p) {
			return true
		}
	}
	return false
}

// repoPart matches one component of a repo id, as the Hub allows them.
var repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

// specialRef matches the revisions that contain slashes and that
// huggingface_hub's file system accepts unescaped after "@".
var specialRef = regexp.MustCompile(`^refs/(pr/[0-9]+|convert/[A-Za-z0-9._-]+)(/|$)`)

// ParseHF parses "hf://[datasets/|spaces/]owner/repo[@revision]/path/in/repo".
// The revision defaults to "main"; it may be a branch, tag or commit, an
// escaped revision ("refs%2Fpr%2F1") or one of the slash-containing refs
// huggingface_hub accepts unescaped ("refs/pr/1", "refs/convert/parquet").
// Endpoint is set from HF_ENDPOINT (or DefaultEndpoint).
func ParseHF(s string) (Location, error) {
	const scheme = "hf://"
	if !strings.HasPrefix(strings.ToLower(s), scheme) {
		return Location{}, fmt.Errorf("%w %q: does not start with hf://", ErrBadSpec, s)
	}
	rest := s[len(scheme):]
	loc := Location{Endpoint: EndpointFromEnv(), RepoType: RepoModel, Revision: "main"}
	switch {
	case strings.HasPrefix(rest, "datasets/"):
		loc.RepoType, rest = RepoDataset, rest[len("datasets/"):]
	case strings.HasPrefix(rest, "spaces/"):
		loc.RepoType, rest = RepoSpace, rest[len("spaces/"):]
	}
	owner, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return Location{}, fmt.Errorf("%w %q: want hf://owner/repo/path", ErrBadSpec, s)
	}
	name, rest, _ := strings.Cut(rest, "/")
	if n, rev, ok := strings.Cut(name, "@"); ok {
		name = n
		if rev == "refs" && specialRef.MatchString("refs/"+rest) {
			// "@refs/pr/1/file": the revision takes three segments.
			m := specialRef.FindString("refs/" + rest)
			rev = strings.TrimSuffix(m, "/")
			rest = strings.TrimPrefix("refs/"+rest, m)
		}
		r, err := url.PathUnescape(rev)
		if err != nil || r == "" {
			return Location{}, fmt.Errorf("%w %q: bad revision %q", ErrBadSpec, s, rev)
		}
		loc.Revision = r
	}
	if !repoPart.MatchString(owner) || !repoPart.MatchString(name) {
		return Location{}, fmt.Errorf("%w %q: %q is not a repo id (want owner/name)", ErrBadSpec, s, owner+"/"+name)
	}
	loc.Repo = owner + "/" + name
	p, err := cleanRepoPath(rest)
	if err != nil {
		return Location{}, fmt.Errorf("%w %q: %v", ErrBadSpec, s, err)
	}
	loc.Path = p
	return loc, nil
}

// cleanRepoPath checks a path inside a repo: not empty, no "." or ".."
// segments, not a folder.
func cleanRepoPath(p string) (string, error) {
	if p == "" || strings.HasSuffix(p, "/") {
		return "", errors.New("no file path in the repo")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("bad file path %q", p)
		}
	}
	return p, nil
}

// parseURL turns an http(s) URL into a Location. A resolve or blob URL on the
// Hub endpoint becomes a Hub location (so it is pinned and authenticated like
// hf://); anything else is a plain URL.
func parseURL(s, endpoint string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Location{}, fmt.Errorf("%w %q: not an http(s) URL", ErrBadSpec, s)
	}
	plain := Location{URL: u.String()}
	ep, err := url.Parse(endpoint)
	if err != nil || !strings.EqualFold(ep.Host, u.Host) {
		return plain, nil
	}
	rel, ok := strings.CutPrefix(u.EscapedPath(), strings.TrimRight(ep.EscapedPath(), "/")+"/")
	if !ok {
		return plain, nil
	}
	loc := Location{Endpoint: endpoint, RepoType: RepoModel}
	switch {
	case strings.HasPrefix(rel, "datasets/"):
		loc.RepoType, rel = RepoDataset, rel[len("datasets/"):]
	case strings.HasPrefix(rel, "spaces/"):
		loc.RepoType, rel = RepoSpace, rel[len("spaces/"):]
	}
	segs := strings.SplitN(rel, "/", 5) // owner, name, resolve|blob, rev, path
	if len(segs) != 5 || (segs[2] != "resolve" && segs[2] != "blob") ||
		!repoPart.MatchString(segs[0]) || !repoPart.MatchString(segs[1]) {
		return plain, nil
	}
	rev, err1 := url.PathUnescape(segs[3])
	p, err2 := url.PathUnescape(segs[4])
	if err1 != nil || err2 != nil || rev == "" {
		return plain, nil
	}
	if p, err = cleanRepoPath(p); err != nil {
		return Location{}, fmt.Errorf("%w %q: %v", ErrBadSpec, s, err)
	}
	loc.Repo, loc.Revision, loc.Path = segs[0]+"/"+segs[1], rev, p
	return loc, nil
}

// EndpointFromEnv returns HF_ENDPOINT, or DefaultEndpoint when it is unset.
func EndpointFromEnv() string {
	if e := strings.TrimSpace(os.Getenv("HF_ENDPOINT")); e != "" {
		return strings.TrimRight(e, "/")
	}
	return DefaultEndpoint
}

// TokenFromEnv returns the Hub token the way huggingface_hub finds it:
// HF_TOKEN, then HUGGING_FACE_HUB_TOKEN, then the file HF_TOKEN_PATH, or
// "token" under HF_HOME (default $XDG_CACHE_HOME/huggingface, or
// ~/.cache/huggingface). It returns "" when there is none.
func TokenFromEnv() string {
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := strings.TrimSpace(os.Getenv(k)); t != "" {
			return t
		}
	}
	p := os.Getenv("HF_TOKEN_PATH")
	if p == "" {
		p = filepath.Join(hfHome(), "token")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hfHome is huggingface_hub's HF_HOME with its defaults.
func hfHome() string {
	if h := os.Getenv("HF_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "huggingface")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "huggingface")
	}
	return filepath.Join(home, ".cache", "huggingface")
}

// WithRevision returns the hf:// spec s at revision rev, as
// huggingface-cli's --revision selects one: s must name no other revision.
func WithRevision(s, rev string) (string, error) {
	loc, err := ParseHF(s)
	if err != nil {
		return "", err
	}
	if loc.Revision != "main" && loc.Revision != rev {
		return "", fmt.Errorf("%w %q: names revision %q, and --revision says %q", ErrBadSpec, s, loc.Revision, rev)
	}
	loc.Revision = rev
	return loc.String(), nil
}
