package split_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/synthetic"
	"github.com/ggufkit/gguf/internal/testfiles"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/split"
)

func TestNames(t *testing.T) {
	if got := split.Name("dir/model", 0, 3); got != "dir/model-00001-of-00003.gguf" {
		t.Errorf("Name = %q", got)
	}
	for _, c := range []struct {
		path, prefix string
		no, count    int
		ok           bool
	}{
		{"dir/model-00001-of-00003.gguf", "dir/model", 0, 3, true},
		{"hf://o/r@main/q/m-Q4-00002-of-00002.gguf", "hf://o/r@main/q/m-Q4", 1, 2, true},
		{"model-00004-of-00003.gguf", "", 0, 0, false},
		{"model-00000-of-00003.gguf", "", 0, 0, false},
		{"model-0001-of-0003.gguf", "", 0, 0, false},
		{"model.gguf", "", 0, 0, false},
	} {
		prefix, no, count, ok := split.ParseName(c.path)
		if prefix != c.prefix || no != c.no || count != c.count || ok != c.ok {
			t.Errorf("ParseName(%q) = %q %d %d %v, want %q %d %d %v", c.path, prefix, no, count, ok, c.prefix, c.no, c.count, c.ok)
		}
		if ok {
			if back := split.Name(prefix, no, count); back != c.path {
				t.Errorf("Name(ParseName(%q)) = %q", c.path, back)
			}
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"3M": 3_000_000, "2G": 2_000_000_000, "500M": 500_000_000} {
		if got, err := split.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "0M", "-1M", "3", "3K", "1.5G", "3MB"} {
		if _, err := split.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

// f32Reference rebuilds the header of syn-dense-256-F32.gguf (not stored in
// the reference data: only its dump, its size and the sizes of the 5 files
// llama-gguf-split made of it are) from its dump, with the tokenizer arrays
// of the stored Q8_0 file, which the README says are the same.
func f32Reference(t *testing.T) (*gguf.Metadata, []gguf.TensorInfo, int64) {
	t.Helper()
	q8 := testfiles.Reader(t, shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf"))
	f, err := os.Open(shared.Path(t, "refdata", "synthetic", "gguf-dumps", "syn-dense-256-F32.gguf-dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kvRE := regexp.MustCompile(`^kv \d+ (\S+) (\S+) = (.*)$`)
	tRE := regexp.MustCompile(`^tensor \d+ (\S+) type=f32\(0\) ne=\[([\d,]+)\] offset=(\d+) size=(\d+)$`)
	md := &gguf.Metadata{}
	var infos []gguf.TensorInfo
	var dataOffset int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "data_offset: "); ok {
			dataOffset, _ = strconv.ParseInt(v, 10, 64)
		}
		if m := kvRE.FindStringSubmatch(line); m != nil {
			key, typ, val := m[1], m[2], m[3]
			switch {
			case strings.HasPrefix(typ, "arr["):
				v, ok := q8.Metadata.Get(key)
				if !ok {
					t.Fatalf("the Q8_0 file has no %s", key)
				}
				md.Set(key, v)
			case typ == "str":
				s, err := strconv.Unquote(val)
				if err != nil {
					t.Fatal(err)
				}
				md.Set(key, gguf.String(s))
			case typ == "u32":
				n, _ := strconv.ParseUint(val, 10, 32)
				md.Set(key, gguf.Uint32(uint32(n)))
			case typ == "f32":
				x, _ := strconv.ParseFloat(val, 32)
				md.Set(key, gguf.Float32(float32(x)))
			default:
				t.Fatalf("dump type %s not handled", typ)
			}
		}
		if m := tRE.FindStringSubmatch(line); m != nil {
			var dims []uint64
			for _, d := range strings.Split(m[2], ",") {
				n, _ := strconv.ParseUint(d, 10, 64)
				dims = append(dims, n)
			}
			for len(dims) > 1 && dims[len(dims)-1] == 1 {
				dims = dims[:len(dims)-1]
			}
			infos = append(infos, gguf.TensorInfo{Name: m[1], Type: gguf.TypeF32, Dims: dims})
		}
	}
	if len(infos) != 39 || md.Len() != 19 {
		t.Fatalf("dump gave %d tensors and %d keys, want 39 and 19", len(infos), md.Len())
	}
	return md, infos, dataOffset
}

// TestPlanMatchesLlamaGGUFSplit: `llama-gguf-split --split --split-max-size
// 3M` made 5 files of syn-dense-256-F32.gguf holding 10/8/7/7/7 tensors with
// the sizes the reference README lists.
func TestPlanMatchesLlamaGGUFSplit(t *testing.T) {
	md, infos, dataOffset := f32Reference(t)
	p := &plan.Plan{Version: 3, Metadata: md}
	for _, ti := range infos {
		p.Tensors = append(p.Tensors, plan.Tensor{Info: ti, Src: &plan.Bytes{Data: make([]byte, ti.Size())}})
	}
	merged, files, err := split.Plan(p, "syn-dense-256-F32", split.Limit{Bytes: 3_000_000})
	if err != nil {
		t.Fatal(err)
	}
	// The rebuilt header is the real one: same data offset and file size.
	if merged.DataOffset != dataOffset || merged.FileSize() != 13654336 {
		t.Fatalf("rebuilt F32 file: data offset %d, size %d; want %d, 13654336", merged.DataOffset, merged.FileSize(), dataOffset)
	}
	wantTensors := []int{10, 8, 7, 7, 7}
	wantSizes := []int64{2636512, 2361920, 2885152, 2886176, 2885152}
	if len(files) != len(wantSizes) {
		t.Fatalf("%d files, want %d", len(files), len(wantSizes))
	}
	for k, f := range files {
		if want := fmt.Sprintf("syn-dense-256-F32-%05d-of-00005.gguf", k+1); f.Name != want {
			t.Errorf("file %d named %q, want %q", k, f.Name, want)
		}
		if len(f.Layout.Tensors) != wantTensors[k] || f.Layout.FileSize() != wantSizes[k] {
			t.Errorf("file %d: %d tensors, %d bytes; llama-gguf-split wrote %d tensors, %d bytes",
				k+1, len(f.Layout.Tensors), f.Layout.FileSize(), wantTensors[k], wantSizes[k])
		}
		keys := f.Layout.Metadata.Keys()
		tail := keys[len(keys)-3:]
		if strings.Join(tail, " ") != "split.no split.tensors.count split.count" || (k > 0 && len(keys) != 3) || (k == 0 && len(keys) != 22) {
			t.Errorf("file %d keys %v", k+1, keys)
		}
	}
}

func copyPlan(r *gguf.Reader, name string) *plan.Plan {
	return plan.Identity(&plan.Input{Name: name, File: r.File, ReaderAt: r.ReaderAt()})
}

// shards opens the files of a split model from disk.
func shards(t testing.TB, names []string) []split.Shard {
	var out []split.Shard
	for _, n := range names {
		r := testfiles.Reader(t, n)
		out = append(out, split.Shard{Name: n, R: r.ReaderAt(), File: r.File})
	}
	return out
}

// mergedReference is what llama-gguf-split --merge writes for files split
// from r, reasoning from its source: r's metadata with split.no = 0,
// split.tensors.count and split.count = 0 appended, r's tensors (ggml's
// dimension count) and data, as GGUF v3.
func mergedReference(t testing.TB, r *gguf.Reader) []byte {
	t.Helper()
	md := r.Metadata.Clone()
	md.Set(gguf.KeySplitNo, gguf.Uint16(0))
	md.Set(gguf.KeySplitTensors, gguf.Int32(int32(len(r.Tensors))))
	md.Set(gguf.KeySplitCount, gguf.Uint16(0))
	p := copyPlan(r, "ref")
	p.Version, p.Metadata = 3, md
	var buf bytes.Buffer
	if _, err := p.Execute(context.Background(), &buf, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteAndMerge splits real models, checks every file as llama.cpp's
// loader would, and reads them back as one model: the merged bytes are what
// llama-gguf-split --merge writes, and every tensor is the original's.
func TestWriteAndMerge(t *testing.T) {
	for _, c := range []struct {
		rel   []string
		max   int64
		files int
	}{
		{[]string{"refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf"}, 1_000_000, 5},
		{[]string{"models", "stories260K-f32.gguf"}, 1_000_000, 2},
		{[]string{"refdata", "llama-cpp", "stories260K-Q8_0.gguf"}, 1_000_000, 1},
	} {
		src := testfiles.Reader(t, shared.Path(t, c.rel...))
		dir := t.TempDir()
		prefix := filepath.Join(dir, strings.TrimSuffix(c.rel[len(c.rel)-1], ".gguf"))
		res, err := split.Write(context.Background(), copyPlan(src, "src"), prefix, split.Limit{Bytes: c.max}, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != c.files {
			t.Fatalf("%s: %d files, want %d", c.rel, len(res.Files), c.files)
		}
		for k, name := range res.Files {
			st, err := os.Stat(name)
			if err != nil || st.Size() != res.Sizes[k] {
				t.Fatalf("%s: %v, size %v want %d", name, err, st, res.Sizes[k])
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != c.files {
			t.Errorf("%d entries in the output directory, want %d (temporaries left?)", len(entries), c.files)
		}
		if c.files == 1 {
			// One file: llama-gguf-split still writes the split keys
			// (count 1), which makes it a plain file to every reader.
			r := testfiles.Reader(t, res.Files[0])
			if _, ok, err := split.ReadInfo(r.Metadata); ok || err != nil {
				t.Errorf("a 1-file split reads as split (%v)", err)
			}
			continue
		}
		m, err := split.Merge(shards(t, res.Files))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, m.Size())
		if _, err := m.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		if want := mergedReference(t, src); !bytes.Equal(got, want) {
			t.Errorf("%s: merged file (%d bytes) differs from llama-gguf-split --merge's (%d bytes)", c.rel, len(got), len(want))
		}
		// Streaming the merged file gives the same bytes, in any order
		// of ranges the executor may ask.
		ranges := []plan.Range{{Off: m.Size() - 100, Len: 100}, {Off: 0, Len: m.Size()}, {Off: 5, Len: 1 << 20}}
		rc := m.StreamRanges(context.Background(), ranges)
		all, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, r := range ranges {
			want = append(want, got[r.Off:r.End()]...)
		}
		if !bytes.Equal(all, want) {
			t.Errorf("%s: StreamRanges differs from ReadAt", c.rel)
		}
		// Every tensor of the merged model is the original's.
		mr, err := gguf.NewReader(m, m.Size())
		if err != nil {
			t.Fatal(err)
		}
		for i := range src.Tensors {
			a, _ := io.ReadAll(src.TensorData(i))
			b, _ := io.ReadAll(mr.TensorData(i))
			if !bytes.Equal(a, b) || mr.Tensors[i].Name != src.Tensors[i].Name {
				t.Fatalf("%s: tensor %s differs", c.rel, src.Tensors[i].Name)
			}
		}
	}
}

// TestMergeErrors: files that are not one split model are refused with a
// message naming the file and the key.
func TestMergeErrors(t *testing.T) {
	src := testfiles.Reader(t, shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf"))
	dir := t.TempDir()
	res, err := split.Write(context.Background(), copyPlan(src, "src"), filepath.Join(dir, "m"), split.Limit{Bytes: 1_000_000}, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := shards(t, res.Files)
	for _, c := range []struct {
		name   string
		shards []split.Shard
		want   string
	}{
		{"second first", []split.Shard{all[1], all[0], all[2], all[3], all[4]}, "open the first one"},
		{"missing file", all[:4], "says the model has 5 files, 4 given"},
		{"swapped", []split.Shard{all[0], all[2], all[1], all[3], all[4]}, "split.no is 2, expected 1"},
		{"not split", []split.Shard{{Name: "plain.gguf", R: src.ReaderAt(), File: src.File}}, "not part of a split model"},
	} {
		_, err := split.Merge(c.shards)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// The second file again, claiming to be the third.
	again := *all[1].File
	again.Metadata = again.Metadata.Clone()
	again.Metadata.Set(gguf.KeySplitNo, gguf.Uint16(2))
	if _, err := split.Merge([]split.Shard{all[0], all[1], {Name: "again", R: all[1].R, File: &again}, all[3], all[4]}); err == nil || !strings.Contains(err.Error(), "is in both") {
		t.Errorf("a tensor twice: %v", err)
	}
	// A wrong total.
	bad := *all[0].File
	bad.Metadata = bad.Metadata.Clone()
	bad.Metadata.Set(gguf.KeySplitTensors, gguf.Int32(7))
	if _, err := split.Merge([]split.Shard{{Name: "first", R: all[0].R, File: &bad}, all[1], all[2], all[3], all[4]}); err == nil || !strings.Contains(err.Error(), "split.tensors.count says 7") {
		t.Errorf("wrong total: %v", err)
	}
	// A key of the wrong type, as llama.cpp's loader refuses it.
	bad.Metadata.Set(gguf.KeySplitCount, gguf.Uint32(4))
	if _, err := split.Merge([]split.Shard{{Name: "first", R: all[0].R, File: &bad}, all[1], all[2], all[3], all[4]}); !errors.Is(err, split.ErrBadKey) {
		t.Errorf("split.count u32: %v", err)
	}
}

// failing produces half a tensor, then fails.
type failing struct{ size int64 }

func (f failing) Input() *plan.Input   { return nil }
func (f failing) Ranges() []plan.Range { return nil }
func (f failing) Describe() string     { return "fails" }
func (f failing) Produce(_ context.Context, _ func() (io.Reader, error), w io.Writer) error {
	if _, err := w.Write(make([]byte, f.size/2)); err != nil {
		return err
	}
	return errors.New("producer failed")
}

// TestWriteAtomic: a failure in the last file leaves no file at all, even
// the ones already complete.
func TestWriteAtomic(t *testing.T) {
	src := testfiles.Reader(t, shared.Path(t, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf"))
	p := copyPlan(src, "src")
	last := &p.Tensors[len(p.Tensors)-1]
	last.Src = failing{last.Info.Size()}
	dir := t.TempDir()
	if _, err := split.Write(context.Background(), p, filepath.Join(dir, "m"), split.Limit{Bytes: 1_000_000}, plan.Options{}); err == nil {
		t.Fatal("no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d files after a failure", len(entries))
	}
}

// TestPartitionTooSmall: as llama-gguf-split, a first tensor bigger than
// the split size is refused; a later one gets a file of its own.
func TestPartitionTooSmall(t *testing.T) {
	ts := []gguf.TensorInfo{{Name: "a", Type: gguf.TypeF32, Dims: []uint64{100}}, {Name: "b", Type: gguf.TypeF32, Dims: []uint64{1000}}, {Name: "c", Type: gguf.TypeF32, Dims: []uint64{10}}}
	starts, err := split.Partition(ts, split.Limit{Bytes: 1000})
	if err != nil || fmt.Sprint(starts) != "[0 1 2]" {
		t.Errorf("Partition = %v, %v; want [0 1 2]", starts, err)
	}
	if _, err := split.Partition(ts[1:], split.Limit{Bytes: 1000}); err == nil {
		t.Error("a first tensor over the limit was accepted")
	}
}

// TestShardsByteIdenticalToLlamaGGUFSplit regenerates the three models the
// reference data stores as llama-gguf-split files (package synthetic makes
// them byte for byte as the README's sha256 sums say), splits them as
// `llama-gguf-split --split --split-max-size 3M` did, and compares every
// file's size and sha256 with the README's list.
func TestShardsByteIdenticalToLlamaGGUFSplit(t *testing.T) {
	readme := shared.Path(t, "refdata", "synthetic", "README.txt")
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^models/(syn-[\w.-]+-\d{5}-of-\d{5}\.gguf) (\d+) ([0-9a-f]{64})$`).FindAllStringSubmatch(string(text), -1) {
		want[m[1]] = m[2] + " " + m[3]
	}
	if len(want) != 9 {
		t.Fatalf("the README lists %d split files, want 9", len(want))
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"syn-dense-256-F32", "syn-dense-512-tied-Q4_0", "syn-moe-256-Q2_K"} {
		if testing.Short() && tag != "syn-dense-256-F32" {
			continue
		}
		path, err := synthetic.Build(dir, tag, shared.Path(t, "models", "stories260K-f32.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := split.Write(context.Background(), copyPlan(testfiles.Reader(t, path), tag), filepath.Join(dir, "out", tag), split.Limit{Bytes: 3_000_000}, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%d %x", len(data), sha256.Sum256(data))
			if w := want[filepath.Base(f)]; got != w {
				t.Errorf("%s: %s, llama-gguf-split wrote %q", filepath.Base(f), got, w)
			}
			delete(want, filepath.Base(f))
		}
	}
	if !testing.Short() && len(want) != 0 {
		t.Errorf("files not written: %v", want)
	}
}

// TestPartitionTensors: --split-max-tensors N puts N tensors in every file
// but the last, as llama-gguf-split does; with a byte limit too, either
// limit starts a new file.
func TestPartitionTensors(t *testing.T) {
	var ts []gguf.TensorInfo
	for i := range 7 {
		ts = append(ts, gguf.TensorInfo{Name: fmt.Sprint(i), Type: gguf.TypeF32, Dims: []uint64{100}})
	}
	for _, c := range []struct {
		lim  split.Limit
		want string
	}{
		{split.Limit{Tensors: 3}, "[0 3 6]"},
		{split.Limit{Tensors: 7}, "[0]"},
		{split.Limit{Tensors: 5, Bytes: 832}, "[0 2 4 6]"},
		{split.Limit{Tensors: 2, Bytes: 1 << 20}, "[0 2 4 6]"},
	} {
		starts, err := split.Partition(ts, c.lim)
		if err != nil || fmt.Sprint(starts) != c.want {
			t.Errorf("Partition(%+v) = %v, %v; want %s", c.lim, starts, err, c.want)
		}
	}
	if _, err := split.Partition(ts, split.Limit{}); err == nil {
		t.Error("no limit accepted")
	}
}
