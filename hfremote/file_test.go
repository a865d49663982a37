package hfremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

func TestOpenResolvesOnceAndReadsOneRangePerReadAt(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	model := hubtest.PatternContent(1, 3<<20+12345)
	id := commit(t, s, "org/repo", "main", map[string]hubtest.Content{"sub/model.gguf": model})

	o := testOptions(s, nil)
	o.Token, o.Anonymous = "hf_secret", false
	f := open(t, "hf://org/repo/sub/model.gguf", o)
	if f.Size() != model.Size || f.Commit() != id {
		t.Fatalf("size %d commit %q, want %d %q", f.Size(), f.Commit(), model.Size, id)
	}
	sum := sha256Hex(t, model)
	if f.SHA256() != sum || f.ETag() != sum {
		t.Fatalf("sha256 %q etag %q, want %q", f.SHA256(), f.ETag(), sum)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Host != "hub" || reqs[0].Method != http.MethodHead || !reqs[0].Auth ||
		reqs[0].Path != "/org/repo/resolve/main/sub/model.gguf" || reqs[0].Status != http.StatusFound {
		t.Fatalf("Open sent %+v, want one authenticated HEAD to the resolve URL", reqs)
	}

	const off, n = 1000, 1 << 20
	if got := readAt(t, f, off, n); !bytes.Equal(got, want(t, model, off, n)) {
		t.Fatal("ReadAt bytes differ from the file's")
	}
	cdn := cdnRequests(s)
	if len(cdn) != 1 || cdn[0].Range != fmt.Sprintf("bytes=%d-%d", off, off+n-1) || cdn[0].Status != http.StatusPartialContent {
		t.Fatalf("ReadAt sent %+v, want one range request for exactly the bytes asked", cdn)
	}
	if st := s.Stats(); st.CDNAuthorization != 0 || st.CDNBytes != n {
		t.Fatalf("server stats %+v: the CDN must see no token and send exactly %d bytes", st, n)
	}
	if st := f.Stats(); st.Requests != 2 || st.HubRequests != 1 || st.Bytes != n || st.Retries != 0 {
		t.Fatalf("file stats %+v", st)
	}

	// A read past the end follows io.ReaderAt: the bytes that exist, then EOF.
	b := make([]byte, 100)
	k, err := f.ReadAt(b, f.Size()-40)
	if k != 40 || err != io.EOF || !bytes.Equal(b[:40], want(t, model, f.Size()-40, 40)) {
		t.Fatalf("read across the end: %d, %v", k, err)
	}
	if k, err := f.ReadAt(b, f.Size()); k != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d, %v", k, err)
	}
}

func TestFileServedByTheHubItself(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	cfg := []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 64}`)
	id := commit(t, s, "org/repo", "main", map[string]hubtest.Content{"config.json": hubtest.Bytes(cfg)})
	o := testOptions(s, nil)
	o.Token, o.Anonymous = "hf_secret", false
	f := open(t, "hf://org/repo/config.json", o)
	if f.Size() != int64(len(cfg)) || f.SHA256() != "" || len(f.ETag()) != 40 {
		t.Fatalf("size %d sha256 %q etag %q", f.Size(), f.SHA256(), f.ETag())
	}
	if got := readAt(t, f, 5, 10); !bytes.Equal(got, cfg[5:15]) {
		t.Fatalf("got %q", got)
	}
	// The git blob id the Hub gave as ETag checks a whole read.
	if got := readAll(t, f.VerifyingReader(context.Background(), RangeOptions{})); !bytes.Equal(got, cfg) {
		t.Fatalf("got %q", got)
	}
	for _, r := range s.Requests()[1:] {
		if r.Host != "hub" || r.Path != "/org/repo/resolve/"+id+"/config.json" || !r.Auth {
			t.Fatalf("data request %+v: want the Hub, pinned to commit %s, with the token", r, id)
		}
	}
}

func TestReadsStayPinnedToTheResolvedCommit(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	v1 := map[string]hubtest.Content{
		"m-00001-of-00002.gguf": hubtest.PatternContent(1, 1<<20),
		"m-00002-of-00002.gguf": hubtest.PatternContent(2, 1<<20),
	}
	c1 := commit(t, s, "org/repo", "main", v1)
	o := testOptions(s, nil)
	f := open(t, "hf://org/repo/m-00001-of-00002.gguf", o)

	// A push while the build runs: both shards change on main.
	c2 := commit(t, s, "org/repo", "main", map[string]hubtest.Content{
		"m-00001-of-00002.gguf": hubtest.PatternContent(3, 1<<20),
		"m-00002-of-00002.gguf": hubtest.PatternContent(4, 1<<20),
	})
	if c1 == c2 {
		t.Fatal("the push made no new commit")
	}
	// The next CDN request finds its link expired: the file is resolved
	// again, and must be resolved at c1, not at main.
	s.SetFaults([]hubtest.Fault{{On: "cdn", Nth: 1, Kind: hubtest.Expire}})
	if got := readAt(t, f, 0, 4096); !bytes.Equal(got, want(t, v1["m-00001-of-00002.gguf"], 0, 4096)) {
		t.Fatal("read after the push did not come from the resolved commit")
	}
	if st := f.Stats(); st.ReResolves != 1 {
		t.Fatalf("stats %+v: want one re-resolve", st)
	}
	sib, err := f.Sibling("m-00002-of-00002.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer sib.Close()
	if sib.Commit() != c1 || !strings.Contains(sib.Name(), "@"+c1+"/") {
		t.Fatalf("sibling at %q (%s), want commit %s", sib.Commit(), sib.Name(), c1)
	}
	if got := readAt(t, sib, 100, 4096); !bytes.Equal(got, want(t, v1["m-00002-of-00002.gguf"], 100, 4096)) {
		t.Fatal("sibling bytes are not the pinned commit's")
	}
	var hubPaths []string
	for _, r := range s.Requests() {
		if r.Host == "hub" {
			hubPaths = append(hubPaths, r.Path)
		}
	}
	wantPaths := []string{
		"/org/repo/resolve/main/m-00001-of-00002.gguf",
		"/org/repo/resolve/" + c1 + "/m-00001-of-00002.gguf",
		"/org/repo/resolve/" + c1 + "/m-00002-of-00002.gguf",
	}
	if fmt.Sprint(hubPaths) != fmt.Sprint(wantPaths) {
		t.Fatalf("Hub saw %q, want %q", hubPaths, wantPaths)
	}
	// A fresh open follows main to the new commit.
	if g := open(t, "hf://org/repo/m-00001-of-00002.gguf", o); g.Commit() != c2 {
		t.Fatalf("fresh open at %s, want %s", g.Commit(), c2)
	}
}

func TestRevisionsAndRepoTypes(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	pr := hubtest.PatternContent(7, 5000)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"x.gguf": hubtest.PatternContent(6, 5000)})
	prCommit := commit(t, s, "org/repo", "refs/pr/1", map[string]hubtest.Content{"x.gguf": pr})
	ds := hubtest.PatternContent(8, 3000)
	commit(t, s, "datasets/org/data", "v2", map[string]hubtest.Content{"dir/d.bin": ds})
	o := testOptions(s, nil)

	for _, spec := range []string{"hf://org/repo@refs/pr/1/x.gguf", "hf://org/repo@refs%2Fpr%2F1/x.gguf"} {
		f := open(t, spec, o)
		if f.Commit() != prCommit || !bytes.Equal(readAt(t, f, 0, 5000), want(t, pr, 0, 5000)) {
			t.Fatalf("%s: commit %s, or bytes not the PR's", spec, f.Commit())
		}
	}
	if r := s.Requests()[0]; r.Path != "/org/repo/resolve/refs%2Fpr%2F1/x.gguf" {
		t.Fatalf("resolve path %q: the revision must be escaped as one segment", r.Path)
	}
	// A commit id works as a revision, and so does a Hub URL.
	for _, spec := range []string{"hf://org/repo@" + prCommit + "/x.gguf", s.URL() + "/org/repo/blob/" + prCommit + "/x.gguf"} {
		if f := open(t, spec, o); f.Commit() != prCommit || f.Size() != pr.Size {
			t.Fatalf("%s: commit %s size %d", spec, f.Commit(), f.Size())
		}
	}
	f := open(t, "hf://datasets/org/data@v2/dir/d.bin", o)
	if !bytes.Equal(readAt(t, f, 10, 100), want(t, ds, 10, 100)) {
		t.Fatal("dataset bytes differ")
	}
}

func TestGatedRepo(t *testing.T) {
	s := startHub(t, hubtest.Options{Gated: map[string]string{"meta/llama": "hf_accepted"}})
	c := hubtest.PatternContent(9, 1<<20)
	commit(t, s, "meta/llama", "main", map[string]hubtest.Content{"m.gguf": c})
	o := testOptions(s, nil)

	_, err := Open(context.Background(), "hf://meta/llama/m.gguf", o)
	if !errors.Is(err, ErrGated) || !strings.Contains(err.Error(), "meta/llama is gated") || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
	o.Token, o.Anonymous = "hf_other", false
	_, err = Open(context.Background(), "hf://meta/llama/m.gguf", o)
	if !errors.Is(err, ErrGated) || !strings.Contains(err.Error(), "no access") {
		t.Fatalf("token without access: %v", err)
	}
	if st := s.Stats(); st.HubRequests != 2 {
		t.Fatalf("%d Hub requests: a gated answer must not be retried", st.HubRequests)
	}
	o.Token = "hf_accepted"
	f := open(t, "hf://meta/llama/m.gguf", o)
	if !bytes.Equal(readAt(t, f, 0, 1<<20), want(t, c, 0, 1<<20)) {
		t.Fatal("bytes differ")
	}
	st := s.Stats()
	if st.CDNRequests == 0 || st.CDNAuthorization != 0 {
		t.Fatalf("server stats %+v: the CDN must never see the token", st)
	}
}

func TestNotFoundAndUnauthorized(t *testing.T) {
	s := startHub(t, hubtest.Options{Tokens: []string{"hf_good"}})
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": hubtest.PatternContent(1, 100)})
	anon := testOptions(s, nil)
	tok := anon
	tok.Token, tok.Anonymous = "hf_good", false
	bad := anon
	bad.Token, bad.Anonymous = "hf_bad", false
	for _, tc := range []struct {
		spec   string
		o      Options
		target error
		words  string
	}{
		{"hf://org/nope/m.gguf", anon, ErrRepoNotFound, "repository org/nope not found (if it is private, set HF_TOKEN)"},
		{"hf://org/nope/m.gguf", tok, ErrRepoNotFound, "repository org/nope not found"},
		{"hf://org/repo@v9/m.gguf", anon, ErrRevisionNotFound, `revision "v9" not found in org/repo`},
		{"hf://org/repo/sub/x.gguf", anon, ErrEntryNotFound, `file "sub/x.gguf" not found in org/repo at revision main`},
		{"hf://org/repo/m.gguf", bad, ErrUnauthorized, "the Hub rejected the token (401)"},
	} {
		before := s.Stats().HubRequests
		_, err := Open(context.Background(), tc.spec, tc.o)
		var e *Error
		if !errors.Is(err, tc.target) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.words) || !strings.HasPrefix(err.Error(), tc.spec+": ") {
			t.Errorf("%s: got %v, want %v saying %q", tc.spec, err, tc.target, tc.words)
		}
		if tc.target != ErrUnauthorized && !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v is not ErrNotFound", tc.spec, err)
		}
		if n := s.Stats().HubRequests - before; n != 1 {
			t.Errorf("%s: %d requests, want 1 (permanent errors are not retried)", tc.spec, n)
		}
	}
}

func TestTransientFailuresAreRetriedByteIdentical(t *testing.T) {
	content := hubtest.PatternContent(5, 24<<20+777)
	run := func(faults []hubtest.Fault) ([]byte, StatsSnapshot, []time.Duration) {
		// Faults are set before Open, so that the resolve can fail too.
		s := startHub(t, hubtest.Options{Faults: faults})
		commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": content})
		w := &waits{}
		f := open(t, "hf://org/repo/m.gguf", testOptions(s, w))
		var out bytes.Buffer
		// The header the way the decoder reads it, then the rest in chunks.
		out.Write(readAt(t, f, 0, 1<<20))
		rest := []Range{{1 << 20, f.Size() - 1<<20}}
		out.Write(readAll(t, f.Ranges(context.Background(), rest, RangeOptions{Concurrency: 3, ChunkSize: 2 << 20})))
		return out.Bytes(), f.Stats(), w.list()
	}
	clean, cleanStats, _ := run(nil)
	if cleanStats.Retries != 0 || !bytes.Equal(clean, want(t, content, 0, content.Size)) {
		t.Fatalf("clean run: stats %+v or bytes differ", cleanStats)
	}
	faults := []hubtest.Fault{
		{On: "hub", Nth: 1, Kind: hubtest.Reset}, // the resolve itself
		{On: "cdn", Nth: 1, Kind: hubtest.Reset}, // mid-body, during the header read
		{On: "cdn", Nth: 3, Kind: hubtest.Status, Status: http.StatusTooManyRequests, RetryAfter: "7"},
		{On: "cdn", Nth: 5, Kind: hubtest.Status, Status: http.StatusInternalServerError},
		{On: "cdn", Nth: 6, Kind: hubtest.ShortBody},
		{On: "cdn", Nth: 8, Kind: hubtest.Status, Status: http.StatusServiceUnavailable, RateLimitReset: 42},
		{On: "cdn", Nth: 10, Kind: hubtest.Reset},
	}
	got, st, ws := run(faults)
	if !bytes.Equal(got, clean) {
		t.Fatal("with faults injected, the bytes differ from the clean run")
	}
	if st.Retries != int64(len(faults)) {
		t.Fatalf("stats %+v: want %d retries, one per fault", st, len(faults))
	}
	// The waits the server asked for were honoured (the others are backoff).
	var honoured []time.Duration
	for _, d := range ws {
		if d >= time.Second {
			honoured = append(honoured, d)
		}
	}
	if fmt.Sprint(honoured) != fmt.Sprint([]time.Duration{7 * time.Second, 42 * time.Second}) {
		t.Fatalf("waits %v: want Retry-After 7s and RateLimit t=42s honoured", ws)
	}
	// Every byte of a broken body was kept: a retry asks for the rest only.
	if st.Bytes != content.Size || st.WastedBytes != 0 {
		t.Fatalf("stats %+v: want exactly the file's %d bytes received", st, content.Size)
	}
}

func TestStalledBodyIsAbandonedAndRetried(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	c := hubtest.PatternContent(2, 256<<10)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c})
	o := testOptions(s, nil)
	o.StallTimeout = 200 * time.Millisecond
	f := open(t, "hf://org/repo/m.gguf", o)
	s.SetFaults([]hubtest.Fault{{On: "cdn", Nth: 1, Kind: hubtest.Stall}})
	if !bytes.Equal(readAt(t, f, 0, c.Size), want(t, c, 0, c.Size)) {
		t.Fatal("bytes differ")
	}
	// On a slow machine a healthy request may also look stalled: count at least.
	if st := f.Stats(); st.Retries < 1 || st.Bytes-st.WastedBytes != c.Size {
		t.Fatalf("stats %+v", st)
	}
}

func TestPermanentAndExhaustedFailures(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": hubtest.PatternContent(1, 1000)})
	o := testOptions(s, nil)
	o.Retry.MaxAttempts = 3
	f := open(t, "hf://org/repo/m.gguf", o)

	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.Status, Status: http.StatusBadGateway}})
	_, err := f.ReadAt(make([]byte, 10), 0)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "502") {
		t.Fatalf("persistent 502: %v", err)
	}
	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.Status, Status: http.StatusTooManyRequests, RetryAfter: "3600"}})
	before := s.Stats().CDNRequests
	_, err = f.ReadAt(make([]byte, 10), 0)
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "asks to wait 1h0m0s") {
		t.Fatalf("429 asking for an hour: %v", err)
	}
	if n := s.Stats().CDNRequests - before; n != 1 {
		t.Fatalf("%d requests: a wait beyond MaxWait must fail at once", n)
	}
	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.Status, Status: http.StatusTooManyRequests}})
	if _, err = f.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Fatalf("persistent 429: %v", err)
	}
	// The CDN refuses even fresh links: a bounded number of re-resolves.
	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.Expire}})
	if _, err = f.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrForbidden) {
		t.Fatalf("CDN always 403: %v", err)
	}
	if st := f.Stats(); st.ReResolves != maxReResolves {
		t.Fatalf("stats %+v: want %d re-resolves", st, maxReResolves)
	}
	// A cancelled context ends a read without retrying.
	s.SetFaults(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = f.ReadAtContext(ctx, make([]byte, 10), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	f.Close()
	if _, err = f.ReadAt(make([]byte, 10), 0); err == nil {
		t.Fatal("read after Close succeeded")
	}
}

func TestServerIgnoringRangeIsNeverReadWhole(t *testing.T) {
	const size = 1 << 30
	s := startHub(t, hubtest.Options{})
	big := hubtest.PatternContent(11, size)
	commit(t, s, "org/big", "main", map[string]hubtest.Content{"big.gguf": big})
	o := testOptions(s, nil)
	o.StallTimeout = time.Hour // the server hashes 1 GiB before it answers the resolve
	f := open(t, "hf://org/big/big.gguf", o)
	s.SetFaults([]hubtest.Fault{{On: "cdn", Kind: hubtest.IgnoreRange}})

	// A header read at the start: served from the prefix of the whole-file
	// answer, then the transfer is cut.
	if got := readAt(t, f, 0, 1<<20); !bytes.Equal(got, want(t, big, 0, 1<<20)) {
		t.Fatal("bytes differ")
	}
	if st := f.Stats(); st.Bytes != 1<<20 || st.Requests != 2 {
		t.Fatalf("stats %+v: want exactly the 1 MiB asked, in one request after the resolve", st)
	}
	// A read deep in the file fails at once, clearly, without retries.
	_, err := f.ReadAt(make([]byte, 1<<20), 512<<20)
	if !errors.Is(err, ErrRangeIgnored) || !strings.Contains(err.Error(), "ignored the Range header") || !strings.Contains(err.Error(), "1.0 GiB") {
		t.Fatalf("deep read: %v", err)
	}
	if st := f.Stats(); st.Requests != 3 || st.Retries != 0 {
		t.Fatalf("stats %+v", st)
	}
	s.Close() // wait for the handlers, so their byte counts are final
	// What the server managed to push before the client hung up is bounded
	// by socket buffers, far from the file's size.
	if sent := s.Stats().CDNBytes; sent > 64<<20 {
		t.Fatalf("the CDN sent %d bytes for two 1 MiB reads of a 1 GiB file", sent)
	}
}

func TestExpiredLinksAreResolvedAgain(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	c := hubtest.PatternContent(3, 64<<10)
	id := commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c})
	o := testOptions(s, nil)
	f := open(t, "hf://org/repo/m.gguf", o)
	s.SetFaults([]hubtest.Fault{{On: "cdn", Nth: 2, Kind: hubtest.Expire}})
	for i := range 3 {
		if !bytes.Equal(readAt(t, f, int64(i)*1000, 1000), want(t, c, int64(i)*1000, 1000)) {
			t.Fatal("bytes differ")
		}
	}
	if st := f.Stats(); st.ReResolves != 1 || st.Retries != 0 || st.HubRequests != 2 {
		t.Fatalf("stats %+v: want one re-resolve after the 403", st)
	}
	// With a link lifetime shorter than the time between reads, the file is
	// resolved again before the read instead of after a 403.
	o.LinkTTL = time.Nanosecond
	g := open(t, "hf://org/repo/m.gguf", o)
	s.SetFaults(nil)
	readAt(t, g, 0, 10)
	if st := g.Stats(); st.ReResolves != 1 || st.Requests != 3 {
		t.Fatalf("stats %+v", st)
	}
	last := s.Requests()
	if r := last[len(last)-2]; r.Host != "hub" || !strings.Contains(r.Path, id) {
		t.Fatalf("re-resolve %+v: want the Hub at commit %s", r, id)
	}
}

func TestRenamedRepoAndPlainURLs(t *testing.T) {
	s := startHub(t, hubtest.Options{Moved: map[string]string{"old/name": "new/name"}})
	c := hubtest.PatternContent(4, 100000)
	commit(t, s, "new/name", "main", map[string]hubtest.Content{"m.gguf": c})
	o := testOptions(s, nil)
	o.Token, o.Anonymous = "hf_secret", false
	f := open(t, "hf://old/name/m.gguf", o)
	if f.Location().Repo != "new/name" || !bytes.Equal(readAt(t, f, 0, 100), want(t, c, 0, 100)) {
		t.Fatalf("renamed repo: %+v", f.Location())
	}

	// The same server seen as a plain URL (the Hub is elsewhere): the
	// redirect is followed, and the token goes to neither host.
	plain := o
	plain.Endpoint = "https://hub.invalid"
	before := len(s.Requests())
	g := open(t, s.URL()+"/new/name/resolve/main/m.gguf", plain)
	if g.Location().IsHub() || g.Size() != c.Size || g.Commit() != "" {
		t.Fatalf("plain URL: %+v size %d", g.Location(), g.Size())
	}
	if !bytes.Equal(readAt(t, g, 500, 1000), want(t, c, 500, 1000)) {
		t.Fatal("bytes differ")
	}
	for _, r := range s.Requests()[before:] {
		if r.Auth {
			t.Fatalf("request %+v carried the token to a host that is not the Hub", r)
		}
	}
	if _, err := Open(context.Background(), "ftp://x/y", plain); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("ftp: %v", err)
	}
}

func TestSharedStatsAndSiblings(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{
		"a/x-00001-of-00002.gguf": hubtest.PatternContent(1, 5000),
		"a/x-00002-of-00002.gguf": hubtest.PatternContent(2, 6000),
		"README.md":               hubtest.Bytes([]byte("# hi\n")),
	})
	var total Stats
	o := testOptions(s, nil)
	o.Stats = &total
	f := open(t, "hf://org/repo/a/x-00001-of-00002.gguf", o)
	g, err := f.OpenSibling(context.Background(), "x-00002-of-00002.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, err := f.Sibling("/README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readAt(t, f, 0, 5000)
	readAt(t, g, 0, 6000)
	if g.Size() != 6000 || r.Size() != 5 {
		t.Fatalf("sizes %d %d", g.Size(), r.Size())
	}
	if tot := total.Snapshot(); tot.Requests != 5 || tot.Bytes != 11000 {
		t.Fatalf("shared stats %+v: want 3 resolves and 2 reads", tot)
	}
	if _, err := f.Sibling("../../../etc"); err == nil || !errors.Is(err, ErrNotFound) {
		// Cleaned to a repo path, which does not exist.
		t.Fatalf("escaping sibling: %v", err)
	}
}

func TestVerifyingReader(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	good := hubtest.PatternContent(1, 3<<20+5)
	bad := hubtest.PatternContent(2, 1<<20)
	bad.SHA256 = sha256Hex(t, hubtest.PatternContent(3, 1<<20)) // the Hub publishes another file's hash
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"good.gguf": good, "bad.gguf": bad})
	o := testOptions(s, nil)

	f := open(t, "hf://org/repo/good.gguf", o)
	if got := readAll(t, f.VerifyingReader(context.Background(), RangeOptions{ChunkSize: 1 << 20})); !bytes.Equal(got, want(t, good, 0, good.Size)) {
		t.Fatal("bytes differ")
	}
	g := open(t, "hf://org/repo/bad.gguf", o)
	r := g.VerifyingReader(context.Background(), RangeOptions{})
	defer r.Close()
	_, err := io.Copy(io.Discard, r)
	if !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), bad.SHA256) {
		t.Fatalf("mismatch: %v", err)
	}
}

func TestPlainURLChangeIsDetected(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"a.txt": hubtest.Bytes([]byte("version one"))})
	o := testOptions(s, nil)
	o.Endpoint = "https://hub.invalid" // so the URL below is a plain URL: no commit to pin
	f := open(t, s.URL()+"/org/repo/resolve/main/a.txt", o)
	if f.ETag() == "" || f.Commit() != "" {
		t.Fatalf("etag %q commit %q", f.ETag(), f.Commit())
	}
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"a.txt": hubtest.Bytes([]byte("version two"))})
	if _, err := f.ReadAt(make([]byte, 4), 0); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "ETag") {
		t.Fatalf("same size, new content: %v", err)
	}
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"a.txt": hubtest.Bytes([]byte("version three"))})
	if _, err := f.ReadAt(make([]byte, 4), 0); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "13 bytes, not the 11") {
		t.Fatalf("new size: %v", err)
	}
}
