package source_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/headergen"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/source"
	"github.com/ggufkit/gguf/split"
)

// options talk to s with fast retries.
func options(s *hubtest.Server) source.Options {
	return source.Options{Remote: hfremote.Options{Endpoint: s.URL(), Anonymous: true,
		Retry: hfremote.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}}}
}

func open(t testing.TB, spec string, o source.Options) *source.Source {
	t.Helper()
	src, err := source.Open(context.Background(), spec, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// sameHeader compares two decoded headers.
func sameHeader(t testing.TB, name string, a, b *gguf.File) {
	t.Helper()
	if a.Version != b.Version || a.HeaderSize != b.HeaderSize || a.DataOffset != b.DataOffset || a.DataSize != b.DataSize || a.Alignment != b.Alignment {
		t.Fatalf("%s: header %d/%d/%d/%d, want %d/%d/%d/%d", name, a.Version, a.HeaderSize, a.DataOffset, a.DataSize, b.Version, b.HeaderSize, b.DataOffset, b.DataSize)
	}
	if a.Metadata.Len() != b.Metadata.Len() || len(a.Tensors) != len(b.Tensors) {
		t.Fatalf("%s: %d keys %d tensors, want %d %d", name, a.Metadata.Len(), len(a.Tensors), b.Metadata.Len(), len(b.Tensors))
	}
	for i, kv := range a.Metadata.KVs() {
		w := b.Metadata.KVs()[i]
		if kv.Key != w.Key || !kv.Value.Equal(w.Value) {
			t.Fatalf("%s: key %d %s differs", name, i, kv.Key)
		}
	}
	for i := range a.Tensors {
		x, y := a.Tensors[i], b.Tensors[i]
		if x.Name != y.Name || x.Type != y.Type || x.Offset != y.Offset || x.Shape() != y.Shape() {
			t.Fatalf("%s: tensor %d differs", name, i)
		}
	}
}

// checkCost checks a header read's cost: at most 4 requests with the
// resolve, at most 1.25 x the header + 1 MiB.
func checkCost(t testing.TB, name string, st source.Stats, header int64) {
	t.Helper()
	budget := header + header/4 + 1<<20
	t.Logf("%-34s header %9d: %d requests, %9d bytes (budget %d)", name, header, st.Requests, st.Bytes, budget)
	if st.Requests > 4 || st.Bytes > budget {
		t.Errorf("%s: %d requests and %d bytes for a %d-byte header; want at most 4 and %d", name, st.Requests, st.Bytes, header, budget)
	}
}

// TestRemoteHeaderCost opens every reference GGUF file and generated
// headers up to 12 MB from the loopback Hub: the decoded header equals the
// local one, within the request and byte budget.
func TestRemoteHeaderCost(t *testing.T) {
	var paths []string
	for _, pat := range []string{"models/*.gguf", "models/vocab/*.gguf", "refdata/*/*.gguf", "refdata/*/models/*.gguf"} {
		paths = append(paths, shared.Glob(t, pat)...)
	}
	files := map[string]hubtest.Content{}
	for _, p := range paths {
		files[filepath.Base(p)] = testfiles.Content(t, p)
	}
	specs := headergen.Specs()
	gen := map[string]*headergen.File{}
	for _, s := range specs {
		f, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		gen[s.Name] = f
		files["gen/"+s.Name+".gguf"] = hubtest.Content{R: f, Size: f.Size}
	}
	hub := testfiles.Hub(t, hubtest.Options{}, "org/models", files)
	for _, p := range paths {
		name := filepath.Base(p)
		remote := open(t, "hf://org/models/"+name, options(hub))
		local := open(t, p, source.Options{})
		sameHeader(t, name, remote.File(), local.File())
		checkCost(t, name, remote.Stats(), local.File().HeaderSize)
	}
	for _, s := range specs {
		remote := open(t, "hf://org/models/gen/"+s.Name+".gguf", options(hub))
		local, err := gguf.NewReader(gen[s.Name], gen[s.Name].Size)
		if err != nil {
			t.Fatal(err)
		}
		sameHeader(t, s.Name, remote.File(), local.File)
		checkCost(t, s.Name, remote.Stats(), local.HeaderSize)
	}
}

// build runs an identity build of src into memory.
func build(t testing.TB, src *source.Source) ([]byte, error) {
	t.Helper()
	in := &plan.Input{Name: src.Name, File: src.File(), ReaderAt: src.Reader.ReaderAt()}
	var buf bytes.Buffer
	_, err := plan.Identity(in).Execute(context.Background(), &buf, plan.Options{})
	return buf.Bytes(), err
}

// TestRemoteBuild: an identity build of a remote file is the file, fetched
// once (the header's bytes are not fetched again), and checked against the
// Hub's sha256; injected faults change nothing but the retry count.
func TestRemoteBuild(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q6_K.gguf")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hub := testfiles.Hub(t, hubtest.Options{}, "org/m", map[string]hubtest.Content{"m.gguf": hubtest.Bytes(want)})
	src := open(t, "hf://org/m/m.gguf", options(hub))
	got, err := build(t, src)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("remote build: %v, %d bytes (identical %v)", err, len(got), bytes.Equal(got, want))
	}
	st := src.Stats()
	if st.Verified != 1 || st.Bytes != int64(len(want)) || st.Retries != 0 {
		t.Errorf("stats %+v: want 1 verified, %d bytes, no retries", st, len(want))
	}

	// A reset mid-body, a 429 and a 500, on the CDN during the build.
	n := int(hub.Stats().CDNRequests)
	hub.SetFaults([]hubtest.Fault{
		{On: "cdn", Nth: n + 2, Kind: hubtest.Reset},
		{On: "cdn", Nth: n + 3, Kind: hubtest.Status, Status: 429, RetryAfter: "0"},
		{On: "cdn", Nth: n + 4, Kind: hubtest.Status, Status: 500},
	})
	o := options(hub)
	o.Concurrency = 1
	o.Remote.ChunkSize = 256 << 10
	src = open(t, "hf://org/m/m.gguf", o)
	got, err = build(t, src)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("build with faults: %v (identical %v)", err, bytes.Equal(got, want))
	}
	t.Logf("build with a reset, a 429 and a 500: %s", src.Stats())
	if st := src.Stats(); st.Retries < 3 || st.Verified != 1 {
		t.Errorf("stats with faults %+v: want at least 3 retries, verified", st)
	}
}

// TestRemoteChecksumMismatch: a file whose bytes do not match the Hub's
// sha256 fails the build.
func TestRemoteChecksumMismatch(t *testing.T) {
	path := shared.Path(t, "models", "stories260K-f32.gguf")
	c := testfiles.Content(t, path)
	c.SHA256 = strings.Repeat("ab", 32)
	hub := testfiles.Hub(t, hubtest.Options{}, "org/m", map[string]hubtest.Content{"m.gguf": c})
	src := open(t, "hf://org/m/m.gguf", options(hub))
	if _, err := build(t, src); !errors.Is(err, hfremote.ErrChecksumMismatch) {
		t.Fatalf("build of a corrupt file: %v", err)
	}
}

// TestRemoteSequentialReads: reading every tensor with small ReadAt calls,
// as diff hashes them, is served by a stream fetching ahead, not a request
// per call.
func TestRemoteSequentialReads(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	hub := testfiles.Hub(t, hubtest.Options{}, "org/m", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, path)})
	src := open(t, "hf://org/m/m.gguf", options(hub))
	local := open(t, path, source.Options{})
	before := src.Stats().Requests
	for i := range src.File().Tensors {
		a, err := io.ReadAll(io.NewSectionReader(src.Reader.TensorData(i), 0, 1<<40))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(local.Reader.TensorData(i))
		if !bytes.Equal(a, b) {
			t.Fatalf("tensor %d differs", i)
		}
	}
	n := src.Stats().Requests - before
	t.Logf("%d tensors read with 32 KiB ReadAt calls: %d requests", len(src.File().Tensors), n)
	if n > 6 {
		t.Errorf("%d requests to read %d tensors in order", n, len(src.File().Tensors))
	}
}

// TestRemoteRangeIgnored: a CDN that ignores Range never sends a 1 GiB file
// whole for reading its header.
func TestRemoteRangeIgnored(t *testing.T) {
	s := headergen.Spec{Name: "big", Tensors: 3, NameLen: 20, DataSize: 1 << 30}
	f, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.Copy(h, io.NewSectionReader(f, 0, f.Size))
	hub := testfiles.Hub(t, hubtest.Options{Faults: []hubtest.Fault{{On: "cdn", Kind: hubtest.IgnoreRange}}}, "org/big", map[string]hubtest.Content{"big.gguf": {R: f, Size: f.Size, SHA256: hex.EncodeToString(h.Sum(nil))}})
	src := open(t, "hf://org/big/big.gguf", options(hub))
	if src.Size() != f.Size || len(src.File().Tensors) != 3 {
		t.Fatalf("size %d, %d tensors", src.Size(), len(src.File().Tensors))
	}
	src.Close()
	t.Logf("1 GiB file, CDN ignoring Range: header read with %s; the CDN wrote %d bytes", src.Stats(), hub.Stats().CDNBytes)
	if st := hub.Stats(); st.CDNBytes > 32<<20 {
		t.Errorf("the CDN sent %d bytes of a 1 GiB file for its header", st.CDNBytes)
	}
}

// TestGated: a gated repo needs a token, which never reaches the CDN.
func TestGated(t *testing.T) {
	hub := testfiles.Hub(t, hubtest.Options{Gated: map[string]string{"org/gated": "hf_secret"}}, "org/gated", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, shared.Path(t, "models", "stories260K-f32.gguf"))})
	_, err := source.Open(context.Background(), "hf://org/gated/m.gguf", options(hub))
	if !errors.Is(err, hfremote.ErrGated) || !strings.Contains(err.Error(), "org/gated") {
		t.Fatalf("no token: %v", err)
	}
	o := options(hub)
	o.Token = "hf_secret"
	src := open(t, "hf://org/gated/m.gguf", o)
	if _, err := build(t, src); err != nil {
		t.Fatal(err)
	}
	if st := hub.Stats(); st.CDNAuthorization != 0 || st.CDNRequests == 0 {
		t.Errorf("CDN requests %d, %d with Authorization", st.CDNRequests, st.CDNAuthorization)
	}
}

// splitFiles writes the files of a model split at max bytes.
func splitFiles(t testing.TB, path string, max int64) []string {
	t.Helper()
	src := open(t, path, source.Options{})
	in := &plan.Input{Name: path, File: src.File(), ReaderAt: src.Reader.ReaderAt()}
	res, err := split.Write(context.Background(), plan.Identity(in), filepath.Join(t.TempDir(), "m"), split.Limit{Bytes: max}, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Files
}

// TestSplit: the first file of a split model opens as the merged model,
// locally and from the Hub (its other files at the same commit), and a build
// of it is the merged file, every remote file checked against its sha256.
func TestSplit(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	files := splitFiles(t, path, 1_000_000)
	local := open(t, files[0], source.Options{})
	if local.Files() != len(files) || len(local.File().Tensors) != 39 {
		t.Fatalf("local split: %d files, %d tensors", local.Files(), len(local.File().Tensors))
	}
	merged, err := build(t, local)
	if err != nil {
		t.Fatal(err)
	}
	up := map[string]hubtest.Content{}
	for _, f := range files {
		up["q8/"+filepath.Base(f)] = testfiles.Content(t, f)
	}
	hub := testfiles.Hub(t, hubtest.Options{}, "org/split", up)
	remote := open(t, "hf://org/split/q8/m-00001-of-00005.gguf", options(hub))
	sameHeader(t, "remote split", remote.File(), local.File())
	got, err := build(t, remote)
	if err != nil || !bytes.Equal(got, merged) {
		t.Fatalf("remote split build: %v (identical %v)", err, bytes.Equal(got, merged))
	}
	if st := remote.Stats(); st.Files != 5 || st.Verified != 5 {
		t.Errorf("stats %+v: want 5 files, all verified", st)
	}
	// Opening another file than the first says which to open.
	_, err = source.Open(context.Background(), files[1], source.Options{})
	if err == nil || !strings.Contains(err.Error(), "open the first one, ") || !strings.Contains(err.Error(), "m-00001-of-00005.gguf") {
		t.Errorf("second file: %v", err)
	}
	// A missing file is named.
	os.Remove(files[3])
	_, err = source.Open(context.Background(), files[0], source.Options{})
	if err == nil || !strings.Contains(err.Error(), "m-00004-of-00005.gguf") {
		t.Errorf("missing file: %v", err)
	}
}

// TestSubsetCost: streaming a subset of the tensors costs the header read
// and those tensors' bytes.
func TestSubsetCost(t *testing.T) {
	path := shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	hub := testfiles.Hub(t, hubtest.Options{}, "org/m", map[string]hubtest.Content{"m.gguf": testfiles.Content(t, path)})
	src := open(t, "hf://org/m/m.gguf", options(hub))
	in := &plan.Input{Name: src.Name, File: src.File(), ReaderAt: src.Reader.ReaderAt()}
	var ranges []plan.Range
	var want int64
	for i, ti := range src.File().Tensors {
		if strings.Contains(ti.Name, "ffn_down") {
			r := in.TensorRange(i)
			ranges = append(ranges, r)
			want += r.Len
		}
	}
	rc := src.Reader.ReaderAt().(plan.RangeStreamer).StreamRanges(context.Background(), ranges)
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || n != want {
		t.Fatalf("read %d of %d bytes: %v", n, want, err)
	}
	st := src.Stats()
	header := int64(1 << 20) // the first read is one window
	if st.Bytes > header+want+want/50 || st.Verified != 0 {
		t.Errorf("%+v: want at most %d bytes, nothing verified", st, header+want+want/50)
	}
}
