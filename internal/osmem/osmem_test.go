package osmem

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// writeFile writes n patterned bytes to a temporary file and opens it.
func writeFile(t *testing.T, n int) (*os.File, []byte) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	path := t.TempDir() + "/f"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// TestAlignedBytes: every size has the length asked for, zero included,
// and every non-empty one starts on an 8-byte boundary (an empty one has
// no bytes to align: on 32-bit ARM Go's zero-size base is 4-aligned).
// The buffers escape, as the callers' do (they keep them in a model or a
// pool): one that stays in a function can live on its stack, which is
// only 4-aligned on 32-bit ARM.
func TestAlignedBytes(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 4097} {
		b := AlignedBytes(n)
		kept = append(kept, b)
		if len(b) != n {
			t.Fatalf("AlignedBytes(%d) has %d bytes", n, len(b))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); n > 0 && p%8 != 0 {
			t.Fatalf("AlignedBytes(%d) starts at %#x", n, p)
		}
	}
}

// kept makes TestAlignedBytes's buffers escape to the heap.
var kept [][]byte

// TestMapAndReadAll: a mapping and a read give the file's bytes; on a
// platform with mmap the mapping is real; a size no file has is an error,
// not a panic.
func TestMapAndReadAll(t *testing.T) {
	page := os.Getpagesize()
	f, data := writeFile(t, 3*page+123)
	b, unmap, mapped, err := Map(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, data) {
		t.Fatal("the mapping differs from the file")
	}
	if want := runtime.GOOS == "linux" || runtime.GOOS == "darwin"; mapped != want {
		t.Errorf("mapped = %v on %s", mapped, runtime.GOOS)
	}
	if err := unmap(); err != nil {
		t.Fatal(err)
	}
	r, release, err := ReadAll(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r, data) || uintptr(unsafe.Pointer(&r[0]))%8 != 0 {
		t.Fatal("ReadAll differs from the file or is not 8-byte aligned")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadAll(f, -1); err == nil {
		t.Fatal("ReadAll of -1 bytes: no error")
	}
	if b, unmap, mapped, err := Map(f, 0); err != nil || len(b) != 0 || mapped || unmap() != nil {
		t.Fatalf("Map of 0 bytes: %d bytes, mapped %v, %v", len(b), mapped, err)
	}
}

// TestDropPagesRefaults: dropped pages of a file mapping (and of an
// unaligned slice of it, whose edge pages are kept) read back as the file,
// and random-access advice changes no byte.
func TestDropPagesRefaults(t *testing.T) {
	page := os.Getpagesize()
	f, data := writeFile(t, 5*page+77)
	b, unmap, _, err := Map(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	AdviseRandom(b[1:])
	DropPages(b[100:len(b)-100], false)
	DropPages(b[:10], false) // no whole page inside: nothing to do
	DropPages(nil, false)
	if !bytes.Equal(b, data) {
		t.Fatal("the mapping differs from the file after DropPages")
	}
}

// TestLock locks and unlocks a buffer, where the locked-memory limit
// allows it.
func TestLock(t *testing.T) {
	b := AlignedBytes(os.Getpagesize())
	if err := Lock(b); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOMEM) || runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
			t.Skipf("mlock: %v", err)
		}
		t.Fatal(err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
	if Lock(nil) != nil || Unlock(nil) != nil {
		t.Fatal("locking nothing failed")
	}
}

// TestPeakRSS: the peak resident set grows by what the process touches.
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("PeakRSS is 0 or approximate on %s", runtime.GOOS)
	}
	before := PeakRSS()
	if before <= 0 {
		t.Fatalf("PeakRSS = %d", before)
	}
	const n = 64 << 20
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	after := PeakRSS()
	runtime.KeepAlive(b)
	if after < before+n/4 {
		t.Fatalf("PeakRSS went from %d to %d after touching %d bytes", before, after, n)
	}
}

// TestMajorFaults: the counter never goes back.
func TestMajorFaults(t *testing.T) {
	a := MajorFaults()
	b := MajorFaults()
	if a < 0 || b < a {
		t.Fatalf("MajorFaults went %d then %d", a, b)
	}
}

// TestOpenDirect reads whole pages of a file without the page cache and
// gets its bytes; a filesystem without direct I/O (tmpfs) skips.
func TestOpenDirect(t *testing.T) {
	page := os.Getpagesize()
	_, data := writeFile(t, 4*page)
	path := t.TempDir() + "/g"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenDirect(path)
	if err != nil {
		t.Skipf("no direct I/O here: %v", err)
	}
	defer f.Close()
	raw := AlignedBytes(3 * page)
	start := (page - int(uintptr(unsafe.Pointer(&raw[0])))%page) % page
	buf := raw[start : start+2*page]
	if n, err := f.ReadAt(buf, int64(page)); n != len(buf) {
		t.Skipf("direct read refused here: %v", err)
	}
	if !bytes.Equal(buf, data[page:3*page]) {
		t.Fatal("the direct read differs from the file")
	}
}
