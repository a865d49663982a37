package recipes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestParseErrorsHaveLineAndColumn: unknown fields, values of the wrong
// kind and malformed pins are refused with the line and column they are at.
func TestParseErrorsHaveLineAndColumn(t *testing.T) {
	const good = "name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: model\n"
	if _, err := Parse("r.yaml", []byte(good)); err != nil {
		t.Fatalf("good recipe refused: %v", err)
	}
	for _, tc := range []struct{ text, want string }{
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n    sha: abc\nbuild:\n  from: model\n", `r.yaml:5:5: unknown field "sha" in inputs.model`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: model\n  exprets_last: true\n", `r.yaml:7:3: unknown field "exprets_last" in build`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n    size: big\nbuild:\n  from: model\n", `r.yaml:5:11: inputs.model.size: want a non-negative integer, got "big"`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n    size: -3\nbuild:\n  from: model\n", `r.yaml:5:11: inputs.model.size: want a non-negative integer, got "-3"`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: model\n  experts_last: yes please\n", `r.yaml:7:17: build.experts_last: want true or false, got "yes please"`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: model\n  drop: '^a'\n", `r.yaml:7:9: build.drop: want a list, got a value`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n    sha256: 1234abcd\nbuild:\n  from: model\n", `r.yaml:4:5: inputs.model: sha256 "1234abcd" is not 64 lowercase hex digits`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: modle\n", `r.yaml:6:3: build.from: no input "modle" (inputs: model)`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n  ids:\n    source: i.txt\nbuild:\n  from: model\n", `r.yaml:6:5: inputs.ids: not used by the build`},
		{"name: x\nname: y\n", `r.yaml:2:1: field "name" given twice`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\nbuild:\n  from: model\n  set: ['general.name=str:@/etc/passwd']\n", `r.yaml:6:3: build.set[0]: "general.name=str:@/etc/passwd" reads a file`},
		{"name: x\ninputs:\n  model:\n    source: m.gguf\n", `r.yaml:1:1: missing build (or assemble)`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nbuild:\n  from: a\nassemble:\n  base: a\n  experts: b\n", `r.yaml:10:3: give either build or assemble, not both`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nassemble:\n  base: a\n  expert: b\n", `r.yaml:9:3: unknown field "expert" in assemble (want one of base, experts, experts_type, experts_layout, imatrix)`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nassemble:\n  base: a\n  experts: c\n", `r.yaml:8:3: assemble.experts: no input "c" (inputs: a, b)`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nassemble:\n  base: a\n  experts: b\n  experts_type: Q9_K\n", `r.yaml:8:3: assemble.experts_type: `},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nassemble:\n  base: a\n  experts: b\n  experts_layout: ter2\n", `r.yaml:8:3: assemble.experts_layout "ter2": want q2lut or none`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\n  m:\n    source: m.dat\nassemble:\n  base: a\n  experts: b\n  imatrix: m\n", `r.yaml:10:3: assemble.imatrix needs experts_type`},
		{"name: x\ninputs:\n  a:\n    source: a.gguf\n  b:\n    source: b.gguf\nassemble:\n  base: a\n  experts: b\n  experts_last: true\n", `r.yaml:10:3: unknown field "experts_last" in assemble`},
		{"name: [x\n", `r.yaml: `},
		{"name: true\n", `r.yaml:1:7: name: want a string, got true (quote it)`},
	} {
		_, err := Parse("r.yaml", []byte(tc.text))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.text, err, tc.want)
		}
	}
}

// writeFiles writes name -> content into dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lockedRecipe writes a recipe quantizing a generated model with an
// importance matrix and experts last into a temporary directory, locks it
// and returns it with the directory.
func lockedRecipe(t *testing.T) (*Recipe, string) {
	t.Helper()
	dir := t.TempDir()
	m := fixture.Named["ci-moe"]
	writeFiles(t, dir, map[string][]byte{
		"moe.gguf": m.Build(), "imatrix.gguf": fixture.Imatrix(m, "cal.txt"), "ids.txt": []byte("# ranked\n40\n7\n93\n12\n"),
		"r.yaml": []byte(`# a comment that lock keeps
name: moe
inputs:
  model: {source: moe.gguf}
  imatrix: {source: imatrix.gguf}
  ids: {source: ids.txt}
build:
  from: model
  head: {ids: ids, pad: 8}
  quantize: {type: Q4_K_M, imatrix: imatrix}
  experts_last: true
output:
  name: moe-q4km.gguf
`)})
	r, err := Load(filepath.Join(dir, "r.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lr, err := Lock(context.Background(), r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lr.Sums.Tensors, func(s TensorSum) bool { return s.Name == "output_ids.weight" }) {
		t.Error("the head from the ids file was not pruned")
	}
	text, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "# a comment that lock keeps") {
		t.Error("lock dropped the recipe's comment")
	}
	writeFiles(t, dir, map[string][]byte{"r.yaml": text})
	if r, err = Load(filepath.Join(dir, "r.yaml")); err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// TestRunMismatchNamesTensorAndLeavesNothing: a locked recipe runs and
// verifies; with one tensor's expected sha256 changed, Run fails naming
// that tensor and leaves no file (nor a temporary one) in the directory.
func TestRunMismatchNamesTensorAndLeavesNothing(t *testing.T) {
	r, dir := lockedRecipe(t)
	ctx := context.Background()
	out := filepath.Join(dir, "out.gguf")
	for _, threads := range []int{1, 3} {
		res, err := Open(ctx, r, Options{Pinned: true, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Run(ctx, out, RunOptions{}); err != nil {
			t.Fatalf("threads %d: %v", threads, err)
		}
		res.Close()
		if _, err := r.Verify(out); err != nil {
			t.Fatalf("threads %d: verify: %v", threads, err)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum(data) != r.Output.SHA256 || int64(len(data)) != *r.Output.Size {
		t.Fatal("the written file is not the one the recipe pins")
	}
	os.Remove(out)

	// Change tensor #5's expected sum (and so the file's).
	k := 5
	r.Output.Tensors[k].SHA256 = strings.Repeat("0", 64)
	r.Output.SHA256 = strings.Repeat("1", 64)
	res, err := Open(ctx, r, Options{Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	_, err = res.Run(ctx, out, RunOptions{})
	var m *Mismatch
	if !errors.As(err, &m) || m.Tensor != r.Output.Tensors[k].Name || !strings.Contains(err.Error(), "first differing tensor #5 "+m.Tensor) {
		t.Fatalf("want a mismatch naming tensor #%d %s, got %v", k, r.Output.Tensors[k].Name, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") && e.Name() != "moe.gguf" && e.Name() != "imatrix.gguf" && e.Name() != "ids.txt" {
			t.Errorf("left %s behind after a mismatch", e.Name())
		}
	}

	// Verify finds a flipped byte in one tensor of an existing file.
	r2, _ := Load(r.Path)
	res2, _ := Open(ctx, r2, Options{Pinned: true})
	defer res2.Close()
	if _, err := res2.Run(ctx, out, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	rd := testfiles.Reader(t, out)
	ti := rd.Tensors[7]
	data, _ = os.ReadFile(out)
	data[rd.DataOffset+int64(ti.Offset)+3] ^= 0x40
	bad := filepath.Join(dir, "bad.gguf")
	writeFiles(t, dir, map[string][]byte{"bad.gguf": data})
	if _, err := r2.Verify(bad); !errors.As(err, &m) || m.Tensor != ti.Name {
		t.Errorf("verify of a file with a byte of %s flipped: %v", ti.Name, err)
	}
}

// openPlanned opens r's inputs (closed when the test ends) and plans its
// build and the build's costs.
func openPlanned(t *testing.T, r *Recipe, opts Options) (*Resolved, *Planned, []Cost) {
	t.Helper()
	ctx := context.Background()
	res, err := Open(ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	b, err := res.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := res.Costs(b)
	if err != nil {
		t.Fatal(err)
	}
	return res, b, costs
}

// hubModel is a generated model served by a loopback Hub at owner/repo,
// with its importance matrix.
func hubModel(t *testing.T) (*hubtest.Server, []byte, string) {
	t.Helper()
	m := fixture.Named["ci-dense"]
	model := m.Build()
	hub := testfiles.Hub(t, hubtest.Options{}, "owner/repo", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(model), "imatrix.gguf_file": hubtest.Bytes(fixture.Imatrix(m, "cal.txt")),
	})
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HOME", t.TempDir())
	return hub, model, hub.URL()
}

// TestBranchRefusedByRunAcceptedByLock: an input named by branch is refused
// by run (before any request), pinned by lock to the commit it resolves to,
// and the locked recipe runs against the Hub to the file it pins.
func TestBranchRefusedByRunAcceptedByLock(t *testing.T) {
	hub, model, endpoint := hubModel(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.yaml")
	writeFiles(t, dir, map[string][]byte{"r.yaml": []byte(`name: hub
inputs:
  model: {source: "hf://owner/repo@main/model.gguf"}
  imatrix: {source: "hf://owner/repo/imatrix.gguf_file"}
build:
  from: model
  quantize: {type: Q4_K_M, imatrix: imatrix}
`)})
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := hub.Stats()
	_, err = Open(ctx, r, Options{Endpoint: endpoint, Pinned: true})
	var pe *PinError
	if !errors.As(err, &pe) || !pe.Unpinned || !strings.Contains(err.Error(), "not a 40-hex commit") {
		t.Fatalf("run of a branch: %v", err)
	}
	if after := hub.Stats(); after.HubRequests+after.CDNRequests != before.HubRequests+before.CDNRequests {
		t.Error("refusing a branch sent requests")
	}
	if _, err := Lock(ctx, r, Options{Endpoint: endpoint}); err != nil {
		t.Fatal(err)
	}
	commit := regexp.MustCompile(`^hf://owner/repo@[0-9a-f]{40}/model\.gguf$`)
	if !commit.MatchString(r.Inputs["model"].Source) || !strings.Contains(r.Inputs["imatrix"].Source, "@") {
		t.Fatalf("lock did not pin the commits: %s, %s", r.Inputs["model"].Source, r.Inputs["imatrix"].Source)
	}
	if r.Inputs["model"].SHA256 != sum(model) || *r.Inputs["model"].Size != int64(len(model)) {
		t.Error("lock pinned the wrong sha256 or size")
	}
	text, _ := r.Encode()
	writeFiles(t, dir, map[string][]byte{"r.yaml": text})
	r, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res, _, costs := openPlanned(t, r, Options{Endpoint: endpoint, Pinned: true})
	startRun := hub.Stats()
	out := filepath.Join(dir, "out.gguf")
	if _, err := res.Run(ctx, out, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	end := hub.Stats()
	// The plan's count of the model's fetch is what the Hub served.
	var model0 Cost
	for _, c := range costs {
		if c.Name == "model" {
			model0 = c
		}
	}
	if got := end.CDNRequests - startRun.CDNRequests; !model0.Counted || int64(model0.Requests) != got {
		t.Errorf("plan said %d requests (counted %v), the run sent %d", model0.Requests, model0.Counted, got)
	}
	// The bytes asked for, from the ranges the CDN logged (its byte
	// counter is updated as its writes return, which can land after a
	// snapshot).
	var asked int64
	for _, q := range hub.Requests() {
		var a, b int64
		if q.Host == "cdn" && int64(q.N) > startRun.CDNRequests {
			if _, err := fmt.Sscanf(q.Range, "bytes=%d-%d", &a, &b); err != nil {
				t.Fatalf("request %d: range %q", q.N, q.Range)
			}
			asked += b - a + 1
		}
	}
	if model0.Bytes != asked {
		t.Errorf("plan said %d bytes, the run asked for %d", model0.Bytes, asked)
	}
	if _, err := r.Verify(out); err != nil {
		t.Fatal(err)
	}
}

// TestPinnedSHA256MismatchDownloadsNothing: an input whose pinned sha256 is
// not the one the Hub publishes fails with a message naming both, before
// any byte of the file is downloaded.
func TestPinnedSHA256MismatchDownloadsNothing(t *testing.T) {
	hub, model, endpoint := hubModel(t)
	ctx := context.Background()
	dir := t.TempDir()
	text := `name: wrong
inputs:
  model: {source: "hf://owner/repo@COMMIT/model.gguf", sha256: "` + strings.Repeat("ab", 32) + `", size: SIZE}
build:
  from: model
`
	probe, err := Parse(filepath.Join(dir, "p.yaml"), []byte(strings.NewReplacer("@COMMIT", "", ", sha256: \""+strings.Repeat("ab", 32)+"\", size: SIZE", "").Replace(text)))
	if err != nil {
		t.Fatal(err)
	}
	lr, err := Lock(ctx, probe, Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	commit := lr.Inputs["model"].Commit
	text = strings.NewReplacer("COMMIT", commit, "SIZE", strconv.Itoa(len(model))).Replace(text)
	r, err := Parse(filepath.Join(dir, "r.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	before := hub.Stats()
	_, err = Open(ctx, r, Options{Endpoint: endpoint, Pinned: true})
	var pe *PinError
	if !errors.As(err, &pe) || pe.Unpinned || !strings.Contains(err.Error(), sum(model)) || !strings.Contains(err.Error(), "not the pinned "+strings.Repeat("ab", 32)) {
		t.Fatalf("want a sha256 mismatch naming both sums, got %v", err)
	}
	if after := hub.Stats(); after.CDNBytes != before.CDNBytes || after.CDNRequests != before.CDNRequests {
		t.Errorf("a mismatching pin downloaded %d bytes in %d requests", after.CDNBytes-before.CDNBytes, after.CDNRequests-before.CDNRequests)
	}
}

// TestCIRecipes runs the committed CI recipes (recipes/ci on ../shared
// files; recipes/ci/gen on generated models, written next to copies of
// them) and checks each gives its pinned sha256. The stories260K Q8_0
// recipe's pin is the sha256 of llama-quantize's own file.
func TestCIRecipes(t *testing.T) {
	ctx := context.Background()
	q8, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	gen := t.TempDir()
	for name, m := range fixture.Named {
		writeFiles(t, gen, map[string][]byte{name + ".gguf": m.Build(), name + "-imatrix.gguf": fixture.Imatrix(m, m.Name+"-calibration.txt")})
	}
	paths, _ := filepath.Glob("ci/*.yaml")
	genPaths, _ := filepath.Glob("ci/gen/*.yaml")
	for _, p := range genPaths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, gen, map[string][]byte{filepath.Base(p): b})
		paths = append(paths, filepath.Join(gen, filepath.Base(p)))
	}
	if len(paths) < 4 {
		t.Fatalf("found only %d CI recipes", len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			r, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Output.SHA256 == "" || len(r.Output.Tensors) == 0 {
				t.Fatal("a CI recipe must be locked")
			}
			res, err := Open(ctx, r, Options{Pinned: true, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			out := filepath.Join(t.TempDir(), "out.gguf")
			rr, err := res.Run(ctx, out, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(p) == "stories260k-q8.yaml" && rr.Sums.SHA256 != sum(q8) {
				t.Errorf("stories260k-q8 gives %s, llama-quantize's file is %s", rr.Sums.SHA256, sum(q8))
			}
		})
	}
}
