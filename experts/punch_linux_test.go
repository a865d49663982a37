package experts

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/plan"
)

// expertsLastFile writes a generated F32 MoE model (about 6 MiB of experts)
// with its experts last to dir/name and returns its bytes.
func expertsLastFile(t *testing.T, dir, name string, last bool) (string, []byte) {
	t.Helper()
	m := fixture.Model{Name: "punch", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 3}
	data := m.Build()
	if last {
		r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		p := plan.Identity(&plan.Input{Name: "m", File: r.File, ReaderAt: bytes.NewReader(data)})
		Last(p)
		var out bytes.Buffer
		if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
			t.Fatal(err)
		}
		data = out.Bytes()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func blocks(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestPunchUnpunch: punching frees the page-aligned interior of the expert
// region (the file keeps its size, the header and non-expert bytes, and
// reads zeros there), HoleBytes sees exactly that, and unpunch restores
// the file byte for byte from the cache.
func TestPunchUnpunch(t *testing.T) {
	dir := t.TempDir()
	path, orig := expertsLastFile(t, dir, "m.gguf", true)
	cache := bytes.NewReader(append([]byte(nil), orig...))
	before := blocks(t, path)
	res, err := Punch(path, cache, cache.Size())
	if errors.Is(err, ErrNoHoles) {
		t.Skipf("no hole support here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pg := int64(os.Getpagesize())
	if res.Start%pg != 0 || res.End%pg != 0 || res.Start < res.ExpertStart || res.Start-res.ExpertStart >= pg || res.ExpertEnd-res.End >= pg {
		t.Fatalf("region %+v", res.Region)
	}
	if res.Holes != res.Len() || res.Tensors != 6 {
		t.Errorf("holes %d of %d, %d tensors", res.Holes, res.Len(), res.Tensors)
	}
	got, _ := os.ReadFile(path)
	if len(got) != len(orig) || !bytes.Equal(got[:res.Start], orig[:res.Start]) || !bytes.Equal(got[res.End:], orig[res.End:]) {
		t.Error("bytes outside the punched range changed")
	}
	if len(bytes.Trim(got[res.Start:res.End], "\x00")) != 0 {
		t.Error("the punched range does not read as zeros")
	}
	if after := blocks(t, path); before-after < res.Len()*9/10 {
		t.Errorf("allocated %d -> %d bytes, punched %d", before, after, res.Len())
	}
	if _, err := Punch(path, cache, cache.Size()); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Errorf("punching twice: %v", err)
	}
	res, err = Unpunch(path, cache, cache.Size())
	if err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if !bytes.Equal(got, orig) || res.Holes != 0 {
		t.Errorf("unpunch: identical %v, %d bytes of holes", bytes.Equal(got, orig), res.Holes)
	}
}

// TestPunchRefusals: a cache that differs, a file whose experts are not
// last, a read-only file and a file system without hole support are
// refused, and the file is left whole.
func TestPunchRefusals(t *testing.T) {
	dir := t.TempDir()
	path, orig := expertsLastFile(t, dir, "m.gguf", true)
	r, _ := gguf.NewReader(bytes.NewReader(orig), int64(len(orig)))
	bad := append([]byte(nil), orig...)
	bad[r.TensorFileOffset(r.TensorIndex("blk.1.ffn_up_exps.weight"))+12345] ^= 1
	check := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
			t.Fatalf("%s: the file changed", what)
		}
		f, _ := os.Open(path)
		defer f.Close()
		if h, _ := HoleBytes(f, 0, int64(len(orig))); h != 0 {
			t.Fatalf("%s: %d bytes punched", what, h)
		}
	}
	_, err := Punch(path, bytes.NewReader(bad), int64(len(bad)))
	check("mismatch", err, `tensor "blk.1.ffn_up_exps.weight" differs from the cache's`)

	inter, data := expertsLastFile(t, dir, "i.gguf", false)
	_, err = Punch(inter, bytes.NewReader(data), int64(len(data)))
	if err == nil || !strings.Contains(err.Error(), "not last") {
		t.Errorf("interleaved: %v", err)
	}

	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err = Punch(path, bytes.NewReader(orig), int64(len(orig)))
	check("read-only", err, "is read-only")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}

	fallocate = func(int, uint32, int64, int64) error { return unix.EOPNOTSUPP }
	defer func() { fallocate = unix.Fallocate }()
	_, err = Punch(path, bytes.NewReader(orig), int64(len(orig)))
	if !errors.Is(err, ErrNoHoles) {
		t.Errorf("no hole support: %v", err)
	}
	check("no hole support", err, "cannot punch holes")
}

// TestCacheIsTheFile: a cache that is the file itself, by a symlink, a hard
// link or another spelling of its path, is refused by Punch (it would free
// the only copy of the experts) and by Unpunch (it would write back the
// holes' zeros), and the file is left as it was.
func TestCacheIsTheFile(t *testing.T) {
	dir := t.TempDir()
	path, orig := expertsLastFile(t, dir, "m.gguf", true)
	if err := os.Symlink("m.gguf", filepath.Join(dir, "sym.gguf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, filepath.Join(dir, "hard.gguf")); err != nil {
		t.Fatal(err)
	}
	openCache := func(p string) *os.File {
		t.Helper()
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, spelling := range []string{path, filepath.Join(dir, "sym.gguf"), filepath.Join(dir, "hard.gguf"), filepath.Join(dir, ".", "..", filepath.Base(dir), "m.gguf")} {
		_, err := Punch(path, openCache(spelling), int64(len(orig)))
		if err == nil || !strings.Contains(err.Error(), "the cache is the file itself") {
			t.Errorf("punch --from %s: %v", spelling, err)
		}
		f, _ := os.Open(path)
		h, _ := HoleBytes(f, 0, int64(len(orig)))
		f.Close()
		if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) || h != 0 {
			t.Fatalf("punch --from %s changed the file (%d bytes of holes)", spelling, h)
		}
	}
	if _, err := Punch(path, bytes.NewReader(orig), int64(len(orig))); errors.Is(err, ErrNoHoles) {
		t.Skipf("no hole support here: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	punched, _ := os.ReadFile(path)
	_, err := Unpunch(path, openCache(filepath.Join(dir, "hard.gguf")), int64(len(orig)))
	if err == nil || !strings.Contains(err.Error(), "the cache is the file itself") {
		t.Errorf("unpunch --from a hard link: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, punched) {
		t.Error("unpunch --from a hard link changed the file")
	}
}

// TestUnpunchChecksCache: before writing a byte, Unpunch compares every
// expert byte the file still holds (a never-punched file: all of them; a
// punched one: the edges and any page that is not a hole) and the tensor
// table with the cache's, and refuses any difference, leaving the file as
// it was; CheckCache's cheap form (a loader's) compares the edges only. A
// file without holes with the right cache is left untouched (nothing to
// restore); the right cache restores a punched file byte for byte, writing
// only its holes.
func TestUnpunchChecksCache(t *testing.T) {
	dir := t.TempDir()
	path, orig := expertsLastFile(t, dir, "m.gguf", true)
	r, err := gguf.NewReader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	pg := int64(os.Getpagesize())
	reg, err := PunchRegion(r.File, pg)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Len() < 4*pg {
		t.Fatalf("region %+v too small for the test", reg)
	}
	// the byte at off differs in the cache
	wrong := func(off int64) *bytes.Reader {
		b := append([]byte(nil), orig...)
		b[off] ^= 0x55
		return bytes.NewReader(b)
	}
	right := func() *bytes.Reader { return bytes.NewReader(orig) }
	mid := reg.Start + 2*pg // an interior page
	edge := reg.ExpertEnd - 1
	if reg.Start > reg.ExpertStart {
		edge = reg.ExpertStart
	}
	refused := func(what string, cache *bytes.Reader, want string, file []byte) {
		t.Helper()
		_, err := Unpunch(path, cache, cache.Size())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, file) {
			t.Fatalf("%s: the file changed", what)
		}
	}

	// Never punched: every expert byte is checked, the right cache writes nothing.
	refused("never punched, wrong interior byte", wrong(mid), "differs from the cache's", orig)
	dense := fixture.Dense().Build()
	refused("never punched, a dense cache", bytes.NewReader(dense), "the cache has no tensor", orig)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := Unpunch(path, right(), int64(len(orig)))
	if err != nil || res.Restored != 0 {
		t.Fatalf("never punched, the right cache: %+v %v", res, err)
	}
	if st, _ := os.Stat(path); !st.ModTime().Equal(old) {
		t.Error("nothing to restore, yet the file was written")
	}

	if _, err := Punch(path, right(), int64(len(orig))); errors.Is(err, ErrNoHoles) {
		t.Skipf("no hole support here: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	// An interrupted unpunch left one interior page written back: the file
	// holds it, so it is checked too.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(orig[mid:mid+pg], mid); err != nil {
		t.Fatal(err)
	}
	holes, _ := HoleBytes(f, reg.ExpertStart, reg.ExpertEnd)
	if holes != reg.Len()-pg {
		t.Fatalf("%d bytes of holes, want %d", holes, reg.Len()-pg)
	}
	punched, _ := os.ReadFile(path)
	refused("punched, wrong edge byte", wrong(edge), "differs from the cache's", punched)
	refused("punched, wrong byte in a held page", wrong(mid+10), "which the file still holds", punched)
	fr, _ := gguf.NewReader(f, int64(len(orig)))
	cheap := func(c *bytes.Reader) error {
		cr, err := gguf.NewReader(c, c.Size())
		if err != nil {
			t.Fatal(err)
		}
		return CheckCache(f, fr, cr, false)
	}
	if err := cheap(wrong(edge)); err == nil || !strings.Contains(err.Error(), "differs from the cache's") {
		t.Errorf("the loader's check, wrong edge byte: %v", err)
	}
	if err := cheap(wrong(mid + 10)); err != nil {
		t.Errorf("the loader's check reads more than the edges: %v", err)
	}

	res, err = Unpunch(path, right(), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) || res.Restored != holes || res.Holes != 0 {
		t.Errorf("unpunch: identical %v, restored %d of %d, %d bytes of holes left", bytes.Equal(got, orig), res.Restored, holes, res.Holes)
	}
}
