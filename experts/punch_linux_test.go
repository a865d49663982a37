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
