package hfremote

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestParseHF(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "")
	for _, tc := range []struct {
		in                        string
		typ, repo, rev, path, res string
	}{
		{"hf://bartowski/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf", RepoModel, "bartowski/Qwen3-8B-GGUF", "main", "Qwen3-8B-Q4_K_M.gguf",
			"https://huggingface.co/bartowski/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf"},
		{"hf://org/repo@v1.0/sub dir/m.gguf", RepoModel, "org/repo", "v1.0", "sub dir/m.gguf",
			"https://huggingface.co/org/repo/resolve/v1.0/sub%20dir/m.gguf"},
		{"hf://org/repo@refs/pr/12/m.gguf", RepoModel, "org/repo", "refs/pr/12", "m.gguf",
			"https://huggingface.co/org/repo/resolve/refs%2Fpr%2F12/m.gguf"},
		{"hf://org/repo@refs%2Fpr%2F1/a/b.gguf", RepoModel, "org/repo", "refs/pr/1", "a/b.gguf",
			"https://huggingface.co/org/repo/resolve/refs%2Fpr%2F1/a/b.gguf"},
		{"hf://datasets/org/data@refs/convert/parquet/default/train/0.parquet", RepoDataset, "org/data", "refs/convert/parquet", "default/train/0.parquet",
			"https://huggingface.co/datasets/org/data/resolve/refs%2Fconvert%2Fparquet/default/train/0.parquet"},
		{"hf://spaces/org/app/app.py", RepoSpace, "org/app", "main", "app.py",
			"https://huggingface.co/spaces/org/app/resolve/main/app.py"},
	} {
		l, err := ParseHF(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if l.RepoType != tc.typ || l.Repo != tc.repo || l.Revision != tc.rev || l.Path != tc.path || l.Endpoint != DefaultEndpoint {
			t.Errorf("%s: got %+v", tc.in, l)
		}
		if got := l.ResolveURL(l.Revision); got != tc.res {
			t.Errorf("%s: resolve URL %s, want %s", tc.in, got, tc.res)
		}
		if back, err := ParseHF(l.String()); err != nil || back != l {
			t.Errorf("%s: String() %q does not parse back: %+v %v", tc.in, l.String(), back, err)
		}
	}
	for _, bad := range []string{
		"hf://", "hf://owner", "hf://owner/repo", "hf://owner/repo/", "hf://owner/repo/a/../b",
		"hf://owner/repo@/m.gguf", "hf://-x/repo/m.gguf", "hf://owner/re po/m.gguf", "https://x/y", "hf://o/r@%zz/m",
	} {
		if _, err := ParseHF(bad); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%q: got %v, want ErrBadSpec", bad, err)
		}
	}
	t.Setenv("HF_ENDPOINT", "https://hf-mirror.example/")
	if l, _ := ParseHF("hf://o/r/m.gguf"); l.Endpoint != "https://hf-mirror.example" {
		t.Errorf("HF_ENDPOINT ignored: %+v", l)
	}
}

func TestParseURL(t *testing.T) {
	const ep = "https://huggingface.co"
	for _, tc := range []struct{ in, repo, rev, path string }{
		{"https://huggingface.co/org/repo/resolve/main/m.gguf?download=true", "org/repo", "main", "m.gguf"},
		{"https://huggingface.co/org/repo/blob/refs%2Fpr%2F3/a/m.gguf", "org/repo", "refs/pr/3", "a/m.gguf"},
		{"https://huggingface.co/datasets/org/d/resolve/abc/x%20y.bin", "org/d", "abc", "x y.bin"},
		{"https://huggingface.co/org/repo/tree/main/m.gguf", "", "", ""}, // not a file URL
		{"https://example.com/org/repo/resolve/main/m.gguf", "", "", ""}, // not the Hub
	} {
		l, err := parseURL(tc.in, ep)
		if err != nil || l.Repo != tc.repo || l.Revision != tc.rev || l.Path != tc.path || (l.IsHub() == (l.URL != "")) {
			t.Errorf("%s: %+v %v", tc.in, l, err)
		}
	}
	if !IsRemote("HF://o/r/f") || !IsRemote("https://x") || !IsRemote("http://x") || IsRemote("./hf://x") || IsRemote("model.gguf") {
		t.Error("IsRemote")
	}
}

func TestSiblingLocation(t *testing.T) {
	l := Location{Endpoint: DefaultEndpoint, RepoType: RepoModel, Repo: "o/r", Revision: "main", Path: "q4/m-00001-of-00002.gguf"}
	for in, want := range map[string]string{
		"m-00002-of-00002.gguf": "q4/m-00002-of-00002.gguf",
		"/README.md":            "README.md",
		"../f16/m.gguf":         "f16/m.gguf",
		"../../../../etc/x":     "etc/x", // cannot leave the repo
	} {
		s, err := l.sibling(in)
		if err != nil || s.Path != want || s.Repo != "o/r" {
			t.Errorf("sibling(%q) = %+v, %v; want path %q", in, s, err, want)
		}
	}
	for _, bad := range []string{"", "/", ".."} {
		if _, err := l.sibling(bad); err == nil {
			t.Errorf("sibling(%q) accepted", bad)
		}
	}
	p := Location{URL: "https://example.com/a/b/m-00001-of-00002.gguf?sig=1"}
	if s, _ := p.sibling("m-00002-of-00002.gguf"); s.URL != "https://example.com/a/b/m-00002-of-00002.gguf" {
		t.Errorf("plain sibling %q", s.URL)
	}
}

func TestTokenFromEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_TOKEN_PATH", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	if tok := TokenFromEnv(); tok != "" {
		t.Fatalf("no token anywhere: got %q", tok)
	}
	if err := os.WriteFile(filepath.Join(home, "token"), []byte("hf_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok := TokenFromEnv(); tok != "hf_file" {
		t.Fatalf("token file: got %q", tok)
	}
	other := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(other, []byte(" hf_path "), 0o600)
	t.Setenv("HF_TOKEN_PATH", other)
	if tok := TokenFromEnv(); tok != "hf_path" {
		t.Fatalf("HF_TOKEN_PATH: got %q", tok)
	}
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "hf_old")
	if tok := TokenFromEnv(); tok != "hf_old" {
		t.Fatalf("HUGGING_FACE_HUB_TOKEN: got %q", tok)
	}
	t.Setenv("HF_TOKEN", "hf_new")
	if tok := TokenFromEnv(); tok != "hf_new" {
		t.Fatalf("HF_TOKEN: got %q", tok)
	}
	// Options: an explicit token wins, Anonymous sends none.
	c, err := newClient(Options{Token: "hf_flag"})
	if err != nil || c.token != "hf_flag" {
		t.Fatalf("explicit token: %q %v", c.token, err)
	}
	if c, _ := newClient(Options{}); c.token != "hf_new" {
		t.Fatalf("env token: %q", c.token)
	}
	if c, _ := newClient(Options{Anonymous: true}); c.token != "" {
		t.Fatalf("anonymous: %q", c.token)
	}
	if _, err := newClient(Options{Endpoint: "huggingface.co"}); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("endpoint without scheme: %v", err)
	}
}

func TestServerWait(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"12"}}, 12 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{http.Header{"Ratelimit": {`"resolvers";r=0;t=55`}}, 55 * time.Second, true},
		{http.Header{"Ratelimit": {`"api";r=0;t=5, "resolvers";r=0;t=30`}}, 30 * time.Second, true},
		{http.Header{"Retry-After": {"3"}, "Ratelimit": {`"resolvers";r=0;t=55`}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		if d, ok := serverWait(tc.h, now); d != tc.want || ok != tc.ok {
			t.Errorf("%v: got %v %v, want %v %v", tc.h, d, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffGrowsWithJitterWithinBounds(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for n, full := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 10: time.Second} {
		for range 50 {
			if d := p.backoff(n); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
}

func TestLinkExpiry(t *testing.T) {
	f := &File{c: &client{linkTTL: time.Hour}}
	now := time.Now()
	soon := now.Add(10 * time.Minute)
	for u, want := range map[string]time.Time{
		"https://cdn.example/x": now.Add(time.Hour),
		"https://cdn.example/x?Expires=" + strconv.FormatInt(soon.Unix(), 10):                            soon.Add(-30 * time.Second),
		"https://cdn.example/x?Expires=" + strconv.FormatInt(now.Add(2*time.Hour).Unix(), 10):            now.Add(time.Hour),
		"https://s3.example/x?X-Amz-Date=" + now.UTC().Format("20060102T150405Z") + "&X-Amz-Expires=600": soon.Add(-30 * time.Second),
	} {
		got := f.newLink(u).exp
		if d := got.Sub(want); d < -2*time.Second || d > 2*time.Second {
			t.Errorf("%s: expiry %v, want about %v", u, got, want)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	for in, want := range map[string][3]int64{
		"bytes 0-99/1000":  {0, 99, 1000},
		"bytes 5-5/*":      {5, 5, -1},
		" bytes 10-19/20 ": {10, 19, 20},
	} {
		a, b, c, err := parseContentRange(in)
		if err != nil || [3]int64{a, b, c} != want {
			t.Errorf("%q: %d %d %d %v", in, a, b, c, err)
		}
	}
	for _, bad := range []string{"", "bytes */1000", "bytes 9-5/100", "bytes 0-99/99", "items 0-1/2", "bytes -1-5/10", "bytes 0-5"} {
		if _, _, _, err := parseContentRange(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
