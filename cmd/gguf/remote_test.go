package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/headergen"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// startHub starts a loopback Hub serving files in repo and points the
// command at it, with no token from the environment.
func startHub(t *testing.T, opts hubtest.Options, repo string, files map[string]hubtest.Content) *hubtest.Server {
	t.Helper()
	s := testfiles.Hub(t, opts, repo, files)
	t.Setenv("HF_ENDPOINT", s.URL())
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	t.Setenv("HF_TOKEN_PATH", "")
	t.Setenv("HF_HOME", t.TempDir())
	return s
}

// infoJSON runs gguf info --json and drops the field naming the source.
func infoJSON(t *testing.T, spec string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustRun(t, nil, "info", "--json", spec).stdout, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "source")
	return m
}

// cost is what the loopback Hub served between two snapshots.
func cost(before, after hubtest.Stats) (requests, bytes int64) {
	return after.HubRequests + after.CDNRequests - before.HubRequests - before.CDNRequests,
		after.HubBytes + after.CDNBytes - before.HubBytes - before.CDNBytes
}

// TestRemoteInfoEqualsLocal: gguf info --json of hf://owner/repo/file is the
// local one's, for real files and generated headers from a few hundred
// bytes to 12 MB, in at most 4 requests and 1.25 x header + 1 MiB, as the
// Hub counts them.
func TestRemoteInfoEqualsLocal(t *testing.T) {
	dir := t.TempDir()
	local := map[string]string{}
	for _, p := range []string{
		shared.Path(t, "models", "stories260K-f32.gguf"),
		shared.Path(t, "models", "vocab", "ggml-vocab-deepseek-llm.gguf"),
		shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q4_K.gguf"),
	} {
		local[filepath.Base(p)] = p
	}
	for _, s := range headergen.Specs() {
		if s.Name != "tiny" && s.Name != "o200k-like" && s.Name != "many-tensors" {
			continue
		}
		s.DataSize = 8 << 20
		f, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, s.Name+".gguf")
		if err := os.WriteFile(p, append(f.Header, make([]byte, f.Size-int64(len(f.Header)))...), 0o644); err != nil {
			t.Fatal(err)
		}
		local[s.Name+".gguf"] = p
	}
	files := map[string]hubtest.Content{}
	for name, p := range local {
		files["sub/"+name] = testfiles.Content(t, p)
	}
	hub := startHub(t, hubtest.Options{}, "owner/repo", files)
	for name, p := range local {
		want := infoJSON(t, p)
		before := hub.Stats()
		got := infoJSON(t, "hf://owner/repo/sub/"+name)
		reqs, n := cost(before, hub.Stats())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: remote info --json differs from the local one", name)
		}
		header := int64(want["header_bytes"].(float64))
		t.Logf("%-28s header %9d bytes: %d requests, %9d bytes", name, header, reqs, n)
		if reqs > 4 || n > header+header/4+1<<20 {
			t.Errorf("%s: %d requests and %d bytes for a %d-byte header", name, reqs, n, header)
		}
	}
}

var retriesRE = regexp.MustCompile(`(\d+) retries`)

// TestRemoteBuildFaults: gguf build of a remote file is byte-identical to
// the file, with a reset, a 429 and a 500 injected or not; --stats counts
// the retries and says the file was checked against the Hub's sha256.
func TestRemoteBuildFaults(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hub := startHub(t, hubtest.Options{}, "org/model", map[string]hubtest.Content{"m.gguf": hubtest.Bytes(want)})
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.gguf")
	r := mustRun(t, nil, "build", "hf://org/model/m.gguf", "-o", clean, "--stats")
	if got, _ := os.ReadFile(clean); !bytes.Equal(got, want) {
		t.Fatal("a clean remote build differs from the file")
	}
	if !strings.Contains(string(r.stderr), "1 verified against the Hub's sha256") {
		t.Errorf("--stats: %s", r.stderr)
	}
	n := int(hub.Stats().CDNRequests)
	hub.SetFaults([]hubtest.Fault{
		{On: "cdn", Nth: n + 2, Kind: hubtest.Reset},
		{On: "cdn", Nth: n + 3, Kind: hubtest.Status, Status: 429, RetryAfter: "1"},
		{On: "cdn", Nth: n + 4, Kind: hubtest.Status, Status: 500},
	})
	faulty := filepath.Join(dir, "faulty.gguf")
	r = mustRun(t, nil, "build", "hf://org/model/m.gguf", "-o", faulty, "--stats")
	got, _ := os.ReadFile(faulty)
	if !bytes.Equal(got, want) {
		t.Fatal("a remote build with faults differs from a clean one")
	}
	m := retriesRE.FindStringSubmatch(string(r.stderr))
	if m == nil {
		t.Fatalf("--stats gave no retry count: %s", r.stderr)
	}
	if k, _ := strconv.Atoi(m[1]); k < 3 {
		t.Errorf("%d retries for 3 injected faults: %s", k, r.stderr)
	}
	t.Logf("%s", r.stderr)
}

// TestRemoteChecksumMismatchCLI: a remote file that does not match the
// Hub's sha256 fails the build and nothing is written.
func TestRemoteChecksumMismatchCLI(t *testing.T) {
	c := testfiles.Content(t, shared.Path(t, "models", "stories260K-f32.gguf"))
	c.SHA256 = strings.Repeat("0f", 32)
	startHub(t, hubtest.Options{}, "org/model", map[string]hubtest.Content{"m.gguf": c})
	out := filepath.Join(t.TempDir(), "out.gguf")
	checkOneLineError(t, runGGUF(t, nil, "build", "hf://org/model/m.gguf", "-o", out), exitUsage, "checksum mismatch")
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("%d files left after a checksum mismatch", len(entries))
	}
}

// TestRemoteRangeIgnoredCLI: with a CDN that ignores Range, gguf info of a
// 1 GB file reads its header, never the whole file.
func TestRemoteRangeIgnoredCLI(t *testing.T) {
	f, err := headergen.Spec{Name: "1g", Tensors: 4, NameLen: 20, DataSize: 1_000_000_000}.Build()
	if err != nil {
		t.Fatal(err)
	}
	hub := startHub(t, hubtest.Options{Faults: []hubtest.Fault{{On: "cdn", Kind: hubtest.IgnoreRange}}}, "org/big", map[string]hubtest.Content{"big.gguf": {R: f, Size: f.Size}})
	before := hub.Stats()
	r := mustRun(t, nil, "info", "--json", "hf://org/big/big.gguf")
	if !bytes.Contains(r.stdout, []byte(fmt.Sprintf(`"size": %d`, f.Size))) {
		t.Errorf("info: %s", r.stdout)
	}
	_, n := cost(before, hub.Stats())
	t.Logf("1 GB file, CDN ignoring Range: %d bytes sent for gguf info", n)
	if n > 32<<20 {
		t.Errorf("the CDN sent %d bytes for the header of a 1 GB file", n)
	}
}

// TestRemoteGated: a gated repo without a token fails naming the repo; with
// HF_TOKEN or --token it works, and the CDN never sees the token.
func TestRemoteGated(t *testing.T) {
	path := shared.Path(t, "models", "stories260K-f32.gguf")
	hub := startHub(t, hubtest.Options{Gated: map[string]string{"org/gated": "hf_good"}, Tokens: []string{"hf_good", "hf_other"}}, "org/gated", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, path)})
	checkOneLineError(t, runGGUF(t, nil, "info", "hf://org/gated/m.gguf"), exitUsage, "org/gated")
	t.Setenv("HF_TOKEN", "hf_other")
	checkOneLineError(t, runGGUF(t, nil, "info", "hf://org/gated/m.gguf"), exitUsage, "org/gated")
	out := filepath.Join(t.TempDir(), "m.gguf")
	mustRun(t, nil, "build", "--token", "hf_good", "hf://org/gated/m.gguf", "-o", out)
	want, _ := os.ReadFile(path)
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("gated build differs")
	}
	t.Setenv("HF_TOKEN", "hf_good")
	mustRun(t, nil, "info", "hf://org/gated/m.gguf")
	// The token file huggingface_hub writes (hf auth login) under HF_HOME.
	t.Setenv("HF_TOKEN", "")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "token"), []byte("hf_good\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HOME", home)
	mustRun(t, nil, "info", "hf://org/gated/m.gguf")
	if st := hub.Stats(); st.CDNAuthorization != 0 || st.CDNRequests == 0 {
		t.Errorf("%d CDN requests, %d with Authorization", st.CDNRequests, st.CDNAuthorization)
	}
}

// moeModel is a generated MoE-shaped file of ~450 MB whose tensor data is
// hubtest's computed pattern: 64 MB of non-expert tensors, 384 MB of
// experts interleaved with them layer by layer.
type moeModel struct {
	header []byte
	layout *gguf.File
	pat    *hubtest.Pattern
}

func newMoEModel(t *testing.T) *moeModel {
	t.Helper()
	md, err := gguf.NewMetadata(
		gguf.KV{Key: gguf.KeyArchitecture, Value: gguf.String("llama")},
		gguf.KV{Key: gguf.KeyName, Value: gguf.String("generated-moe")},
		gguf.KV{Key: "llama.expert_count", Value: gguf.Uint32(8)},
		gguf.KV{Key: "llama.expert_used_count", Value: gguf.Uint32(2)},
	)
	if err != nil {
		t.Fatal(err)
	}
	f32 := func(name string, dims ...uint64) gguf.TensorInfo {
		return gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Dims: dims}
	}
	ts := []gguf.TensorInfo{f32("token_embd.weight", 1024, 4096)}
	for l := range 4 {
		b := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, f32(b+"attn_norm.weight", 1024), f32(b+"attn_q.weight", 1024, 512), f32(b+"attn_k.weight", 1024, 512),
			f32(b+"attn_v.weight", 1024, 512), f32(b+"attn_output.weight", 512, 1024), f32(b+"ffn_gate_inp.weight", 1024, 8),
			f32(b+"ffn_gate_exps.weight", 1024, 1024, 8), f32(b+"ffn_up_exps.weight", 1024, 1024, 8), f32(b+"ffn_down_exps.weight", 1024, 1024, 8))
	}
	ts = append(ts, f32("output_norm.weight", 1024), f32("output.weight", 1024, 4096))
	layout, err := gguf.Layout(3, md, ts)
	if err != nil {
		t.Fatal(err)
	}
	var hdr bytes.Buffer
	if _, err := gguf.NewWriterLayout(&hdr, layout); err != nil {
		t.Fatal(err)
	}
	return &moeModel{header: hdr.Bytes(), layout: layout, pat: hubtest.NewPattern(7)}
}

func (m *moeModel) ReadAt(p []byte, off int64) (int, error) {
	if off >= m.layout.FileSize() {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), m.layout.FileSize()-off))
	k := 0
	if off < int64(len(m.header)) {
		k = copy(p[:n], m.header[off:])
	}
	m.pat.ReadAt(p[k:n], off+int64(k))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestRemoteFetchSubset: gguf fetch of the non-expert tensors of a MoE file
// is a valid GGUF whose tensors are byte for byte the original's, fetched
// with at most 1.02 x (header + selected tensors).
func TestRemoteFetchSubset(t *testing.T) {
	m := newMoEModel(t)
	hub := startHub(t, hubtest.Options{}, "org/moe", map[string]hubtest.Content{"moe-Q4.gguf": {R: m, Size: m.layout.FileSize()}})
	mustRun(t, nil, "info", "hf://org/moe/moe-Q4.gguf") // the Hub hashes the file on first use
	out := filepath.Join(t.TempDir(), "dense.gguf")
	before := hub.Stats()
	r := mustRun(t, nil, "fetch", "hf://org/moe/moe-Q4.gguf", "--exclude", `_exps\.`, "-o", out, "--stats")
	reqs, n := cost(before, hub.Stats())
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	got, err := gguf.NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var selected int64
	for i, ti := range m.layout.Tensors {
		j := got.TensorIndex(ti.Name)
		if strings.Contains(ti.Name, "_exps.") {
			if j >= 0 {
				t.Errorf("expert tensor %s fetched", ti.Name)
			}
			continue
		}
		if j < 0 {
			t.Fatalf("%s missing", ti.Name)
		}
		selected += ti.Size()
		a, _ := io.ReadAll(got.TensorData(j))
		b, _ := io.ReadAll(io.NewSectionReader(m, m.layout.DataOffset+int64(m.layout.Tensors[i].Offset), ti.Size()))
		if !bytes.Equal(a, b) {
			t.Fatalf("tensor %s differs from the original", ti.Name)
		}
	}
	if got.Metadata.Len() != m.layout.Metadata.Len() || len(got.Tensors) != 27 {
		t.Errorf("%d keys, %d tensors", got.Metadata.Len(), len(got.Tensors))
	}
	mustRun(t, nil, "info", out)
	budget := (m.layout.HeaderSize + selected) * 102 / 100
	t.Logf("fetch of %d of %d bytes: %d requests, %d bytes served (budget %d)\n%s", selected, m.layout.FileSize(), reqs, n, budget, r.stderr)
	if n > budget {
		t.Errorf("served %d bytes for %d bytes of header and tensors", n, m.layout.HeaderSize+selected)
	}
}

// TestRemoteSplitAndDiff: a split model on the Hub opens from its first
// file; build merges it like llama-gguf-split --merge; diff and --add take
// remote sources.
func TestRemoteSplitAndDiff(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q6_K.gguf")
	dir := t.TempDir()
	r := mustRun(t, nil, "build", path, "--split-max-size", "1M", "-o", filepath.Join(dir, "q6.gguf"))
	shards, _ := filepath.Glob(filepath.Join(dir, "q6-*-of-*.gguf"))
	if len(shards) != 3 {
		t.Fatalf("split into %v\n%s", shards, r.stderr)
	}
	files := map[string]hubtest.Content{"plain.gguf": testfiles.Content(t, path)}
	for _, s := range shards {
		files["split/"+filepath.Base(s)] = testfiles.Content(t, s)
	}
	startHub(t, hubtest.Options{}, "org/q6", files)
	first := "hf://org/q6/split/q6-00001-of-00003.gguf"
	if got, want := infoJSON(t, first), infoJSON(t, shards[0]); !reflect.DeepEqual(got, want) {
		t.Error("remote split info differs from the local one")
	}
	localMerged, remoteMerged := filepath.Join(dir, "local.gguf"), filepath.Join(dir, "remote.gguf")
	mustRun(t, nil, "build", shards[0], "-o", localMerged)
	r = mustRun(t, nil, "build", first, "-o", remoteMerged, "--stats")
	a, _ := os.ReadFile(localMerged)
	b, _ := os.ReadFile(remoteMerged)
	if !bytes.Equal(a, b) {
		t.Error("remote merge differs from local merge")
	}
	if !strings.Contains(string(r.stderr), "3 files, ") || !strings.Contains(string(r.stderr), "3 verified") {
		t.Errorf("--stats of a split build: %s", r.stderr)
	}
	// The merged file is the original with llama-gguf-split --merge's keys.
	r = runGGUF(t, nil, "diff", "--json", path, localMerged)
	var d struct {
		Same        bool              `json:"same"`
		KeysAdded   []json.RawMessage `json:"keys_added"`
		KeysRemoved []json.RawMessage `json:"keys_removed"`
		Changed     []json.RawMessage `json:"tensors_changed"`
	}
	if err := json.Unmarshal(r.stdout, &d); err != nil || r.code != exitFound || len(d.KeysAdded) != 3 || len(d.KeysRemoved) != 0 || len(d.Changed) != 0 {
		t.Errorf("diff original merged: exit %d, %s", r.code, r.stdout)
	}
	mustRun(t, nil, "diff", path, "hf://org/q6/plain.gguf")
	// --add from the Hub: the output head, dropped locally, comes back.
	out := filepath.Join(dir, "added.gguf")
	mustRun(t, nil, "build", path, "--drop", `^output\.weight$`, "--add", `hf://org/q6/plain.gguf:^output\.weight$`, "-o", out)
	orig, added := testfiles.Reader(t, path), testfiles.Reader(t, out)
	i, j := orig.TensorIndex("output.weight"), added.TensorIndex("output.weight")
	if j != len(added.Tensors)-1 || len(added.Tensors) != len(orig.Tensors) || i < 0 {
		t.Fatalf("build --add hf://: output.weight at %d of %d", j, len(added.Tensors))
	}
	a, _ = io.ReadAll(orig.TensorData(i))
	b, _ = io.ReadAll(added.TensorData(j))
	if !bytes.Equal(a, b) {
		t.Error("build --add hf://: output.weight differs from the original")
	}
}

// TestRemoteForms: every form of SOURCE huggingface_hub users write (a
// dataset repo, a pull-request ref, a revision, a plain https URL) gives
// the local file's info.
func TestRemoteForms(t *testing.T) {
	path := shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")
	c := testfiles.Content(t, path)
	hub := startHub(t, hubtest.Options{}, "datasets/org/data", map[string]hubtest.Content{"q8/m.gguf": c})
	if _, err := hub.Commit("org/model", "refs/pr/1", map[string]hubtest.Content{"m.gguf": c}); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Commit("org/model", "v2", map[string]hubtest.Content{"m.gguf": c}); err != nil {
		t.Fatal(err)
	}
	want := infoJSON(t, path)
	for _, spec := range []string{
		"hf://datasets/org/data/q8/m.gguf",
		"hf://org/model@refs/pr/1/m.gguf",
		"hf://org/model@v2/m.gguf",
		hub.URL() + "/org/model/resolve/v2/m.gguf",
	} {
		if got := infoJSON(t, spec); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: info differs from the local file's", spec)
		}
	}
	checkOneLineError(t, runGGUF(t, nil, "info", "hf://org/model@nope/m.gguf"), exitUsage, "nope")
}

// TestRemoteReorderedBuildVerified: builds that write tensors in another
// order than the remote file holds them (quantize lists them as
// llama-quantize does) still read the file front to back, so it is checked
// against the Hub's sha256: the output is llama.cpp's file and --stats
// says so; with a wrong sha256 the build fails and leaves nothing.
func TestRemoteReorderedBuildVerified(t *testing.T) {
	c := testfiles.Content(t, shared.Path(t, "models", "stories260K-f32.gguf"))
	want, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	startHub(t, hubtest.Options{}, "org/model", map[string]hubtest.Content{"m.gguf": c})
	dir := t.TempDir()
	out := filepath.Join(dir, "q8.gguf")
	r := mustRun(t, nil, "quantize", "hf://org/model/m.gguf", out, "--type", "Q8_0", "--tensor-type", "ffn_down=F16", "--stats", "-q")
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Fatal("remote quantize differs from llama.cpp's file")
	}
	if !strings.Contains(string(r.stderr), "1 verified against the Hub's sha256") {
		t.Errorf("reordered remote build not verified: %s", r.stderr)
	}

	c.SHA256 = strings.Repeat("0f", 32)
	startHub(t, hubtest.Options{}, "org/bad", map[string]hubtest.Content{"m.gguf": c})
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	// quantize prints its plan first; the error is the last line.
	r = runGGUF(t, nil, "quantize", "hf://org/bad/m.gguf", bad, "--type", "Q8_0", "--tensor-type", "ffn_down=F16", "-q")
	lines := strings.Split(strings.TrimRight(string(r.stderr), "\n"), "\n")
	if last := lines[len(lines)-1]; r.code != exitUsage || !strings.Contains(last, "checksum mismatch") {
		t.Errorf("exit %d, last line %q", r.code, last)
	}
	if entries, _ := os.ReadDir(filepath.Dir(bad)); len(entries) != 0 {
		t.Errorf("%d files left after a checksum mismatch", len(entries))
	}
}
