package hubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServesADirectoryLikeTheHub(t *testing.T) {
	root := t.TempDir()
	model := bytes.Repeat([]byte("GGUF-bytes-"), 1000)
	writeFile(t, filepath.Join(root, "org", "repo", "main", "q4", "m.gguf"), model)
	writeFile(t, filepath.Join(root, "org", "repo", "main", "config.json"), []byte(`{"a":1}`))
	writeFile(t, filepath.Join(root, "org", "repo", "refs%2Fpr%2F1", "q4", "m.gguf"), []byte("pr version"))
	writeFile(t, filepath.Join(root, "datasets", "org", "data", "main", "d.txt"), []byte("dataset file"))
	s, err := NewServer(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	hub, _ := url.Parse(s.URL())
	cdn, _ := url.Parse(s.CDNURL())
	if hub.Hostname() == cdn.Hostname() {
		t.Fatalf("Hub %s and CDN %s share a host name", hub.Host, cdn.Host)
	}
	if hub.Hostname() != "127.0.0.1" || cdn.Hostname() != "127.0.0.2" {
		t.Logf("CDN on %s (127.0.0.2 not bindable here)", cdn.Host)
	}

	// An LFS file: 302 to the CDN with the Hub's headers, no body on HEAD.
	resp, body := do(t, http.MethodHead, s.URL()+"/org/repo/resolve/main/q4/m.gguf", nil)
	sum := sha256.Sum256(model)
	if resp.StatusCode != http.StatusFound || len(body) != 0 ||
		resp.Header.Get("X-Linked-Etag") != `"`+hex.EncodeToString(sum[:])+`"` ||
		resp.Header.Get("X-Linked-Size") != strconv.Itoa(len(model)) ||
		len(resp.Header.Get("X-Repo-Commit")) != 40 || resp.Header.Get("ETag") == resp.Header.Get("X-Linked-Etag") {
		t.Fatalf("resolve: %d %v", resp.StatusCode, resp.Header)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Host != cdn.Host {
		t.Fatalf("redirect to %s, want the CDN %s", loc.Host, cdn.Host)
	}
	resp, body = do(t, http.MethodGet, loc.String(), http.Header{"Range": {"bytes=11-21"}})
	if resp.StatusCode != http.StatusPartialContent || string(body) != "GGUF-bytes-" ||
		resp.Header.Get("Content-Range") != "bytes 11-21/"+strconv.Itoa(len(model)) {
		t.Fatalf("CDN range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, _ = do(t, http.MethodGet, loc.String(), http.Header{"Range": {"bytes=999999-"}})
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("range past the end: %d", resp.StatusCode)
	}
	forged := strings.Replace(loc.String(), "Expires=", "Expires=9", 1)
	if resp, _ = do(t, http.MethodGet, forged, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged link: %d", resp.StatusCode)
	}

	// A small file is served by the Hub itself, with its git blob id.
	resp, body = do(t, http.MethodGet, s.URL()+"/org/repo/resolve/main/config.json", nil)
	if resp.StatusCode != http.StatusOK || string(body) != `{"a":1}` ||
		resp.Header.Get("ETag") != `"`+gitID(`{"a":1}`)+`"` {
		t.Fatalf("config.json: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// The PR ref, escaped or not, and the dataset.
	for _, p := range []string{"/org/repo/resolve/refs%2Fpr%2F1/q4/m.gguf", "/org/repo/resolve/refs/pr/1/q4/m.gguf"} {
		resp, _ = do(t, http.MethodHead, s.URL()+p, nil)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("X-Linked-Size") != "10" {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
	if resp, body = do(t, http.MethodGet, s.URL()+"/datasets/org/data/resolve/main/d.txt", nil); string(body) != "dataset file" {
		t.Fatalf("dataset: %d %q", resp.StatusCode, body)
	}
	if r := s.Requests(); len(r) != 8 || r[1].Host != "cdn" || r[1].Range != "bytes=11-21" {
		t.Fatalf("request log %+v", r)
	}
}

// gitID is `git hash-object` of s.
func gitID(s string) string {
	c, err := gitHash(Bytes([]byte(s)))
	if err != nil {
		panic(err)
	}
	return c
}

func TestGitHashMatchesGit(t *testing.T) {
	// `printf 'hello\n' | git hash-object --stdin`
	if got := gitID("hello\n"); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("got %s", got)
	}
}

func TestHubErrors(t *testing.T) {
	s, err := NewServer("", Options{
		Gated:  map[string]string{"meta/llama": "hf_ok"},
		Tokens: []string{"hf_ok", "hf_other"},
		Moved:  map[string]string{"old/llama": "meta/llama"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Commit("meta/llama", "main", map[string]Content{"m.gguf": Bytes([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	auth := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	for _, tc := range []struct {
		path   string
		h      http.Header
		status int
		code   string
	}{
		{"/nobody/none/resolve/main/m.gguf", nil, 401, "RepoNotFound"},
		{"/nobody/none/resolve/main/m.gguf", auth("hf_ok"), 404, "RepoNotFound"},
		{"/meta/llama/resolve/main/m.gguf", nil, 401, "GatedRepo"},
		{"/meta/llama/resolve/main/m.gguf", auth("hf_other"), 403, "GatedRepo"},
		{"/meta/llama/resolve/main/m.gguf", auth("hf_bad"), 401, ""},
		{"/meta/llama/resolve/v2/m.gguf", auth("hf_ok"), 404, "RevisionNotFound"},
		{"/meta/llama/resolve/main/x.gguf", auth("hf_ok"), 404, "EntryNotFound"},
		{"/meta/llama/resolve/main/m.gguf", auth("hf_ok"), 302, ""},
		{"/old/llama/resolve/main/m.gguf", nil, 307, ""},
		{"/meta/llama/tree/main", nil, 404, ""},
	} {
		resp, _ := do(t, http.MethodHead, s.URL()+tc.path, tc.h)
		if resp.StatusCode != tc.status || resp.Header.Get("X-Error-Code") != tc.code {
			t.Errorf("%s %v: %d %q, want %d %q", tc.path, tc.h, resp.StatusCode, resp.Header.Get("X-Error-Code"), tc.status, tc.code)
		}
	}
	if st := s.Stats(); st.HubRequests != 10 || st.CDNRequests != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCommitsKeepHistory(t *testing.T) {
	s, err := NewServer("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c1, _ := s.Commit("o/r", "main", map[string]Content{"a.txt": Bytes([]byte("one")), "b.txt": Bytes([]byte("bee"))})
	c2, _ := s.Commit("o/r", "main", map[string]Content{"a.txt": Bytes([]byte("two"))})
	for rev, want := range map[string]string{"main": "two", c1: "one", c2: "two"} {
		_, body := do(t, http.MethodGet, s.URL()+"/o/r/resolve/"+rev+"/a.txt", nil)
		if string(body) != want {
			t.Errorf("a.txt at %s: %q, want %q", rev, body, want)
		}
	}
	if _, body := do(t, http.MethodGet, s.URL()+"/o/r/resolve/main/b.txt", nil); string(body) != "bee" {
		t.Errorf("b.txt did not carry over: %q", body)
	}
	for _, bad := range []string{"o", "a/b/c", "/r"} {
		if _, err := s.Commit(bad, "main", nil); err == nil {
			t.Errorf("repo id %q accepted", bad)
		}
	}
	if _, err := s.Commit("o/r", "main", map[string]Content{"../x": Bytes(nil)}); err == nil {
		t.Error("path escaping the repo accepted")
	}
}

func TestExpiredLinkAndFaults(t *testing.T) {
	s, err := NewServer("", Options{LinkTTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := bytes.Repeat([]byte{1, 2, 3, 4}, 1<<16)
	s.Commit("o/r", "main", map[string]Content{"m.gguf": Bytes(data)})
	resp, _ := do(t, http.MethodHead, s.URL()+"/o/r/resolve/main/m.gguf", nil)
	link := resp.Header.Get("Location")
	if resp, body := do(t, http.MethodGet, link, nil); resp.StatusCode != http.StatusForbidden || !bytes.Contains(body, []byte("expired")) {
		t.Fatalf("expired link: %d %s", resp.StatusCode, body)
	}

	s2, err := NewServer("", Options{Faults: []Fault{
		{On: "hub", Nth: 1, Kind: Status, Status: 429, RetryAfter: "3", RateLimitReset: 9},
		{On: "hub", Nth: 2, Kind: ShortBody},
		{On: "hub", Nth: 3, Kind: IgnoreRange},
		{On: "hub", Nth: 4, Kind: Reset},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.Commit("o/r", "main", map[string]Content{"c.txt": Bytes(data)})
	u := s2.URL() + "/o/r/resolve/main/c.txt"
	rng := http.Header{"Range": {"bytes=0-999"}}
	resp, _ = do(t, http.MethodGet, u, rng)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || resp.Header.Get("RateLimit") != `"resolvers";r=0;t=9` {
		t.Fatalf("429: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := do(t, http.MethodGet, u, rng)
	if resp.StatusCode != 206 || resp.Header.Get("Content-Range") != "bytes 0-999/262144" || len(body) != 500 {
		t.Fatalf("short body: %d %v %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	resp, body = do(t, http.MethodGet, u, rng)
	if resp.StatusCode != 200 || len(body) != len(data) {
		t.Fatalf("range ignored: %d, %d bytes", resp.StatusCode, len(body))
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	resp, err = noRedirect.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("reset: the body arrived whole")
	}
}

func TestPattern(t *testing.T) {
	p := NewPattern(1)
	a := make([]byte, 3*patternPeriod)
	p.ReadAt(a, 0)
	// Any window read anywhere matches the same bytes read at once.
	for _, off := range []int64{0, 1, patternPeriod - 3, patternPeriod, 2*patternPeriod - 1} {
		b := make([]byte, 10000)
		p.ReadAt(b, off)
		if !bytes.Equal(b, a[off:off+10000]) {
			t.Fatalf("window at %d differs", off)
		}
	}
	// Periods differ from each other, and seeds from each other.
	if bytes.Equal(a[:4096], a[patternPeriod:patternPeriod+4096]) || bytes.Equal(a[:4096], a[1<<20:1<<20+4096]) {
		t.Fatal("the pattern repeats")
	}
	q := make([]byte, 4096)
	NewPattern(2).ReadAt(q, 0)
	if bytes.Equal(q, a[:4096]) {
		t.Fatal("seeds give the same bytes")
	}
}
