package experts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ggufkit/gguf/gguf"
)

// ErrNoHoles is returned where the file system (or the OS) cannot punch
// holes or report them.
var ErrNoHoles = errors.New("the file system cannot punch holes (fallocate PUNCH_HOLE)")

// Region is the part of an experts-last file that punching frees: the
// page-aligned interior of its expert tensors' bytes. The partial pages at
// either end are kept (the first one also holds non-expert bytes).
type Region struct {
	ExpertStart, ExpertEnd int64 // file offsets of the first and past the last expert byte
	Start, End             int64 // the punched range: ExpertStart, ExpertEnd rounded in to pages
}

// Len returns the bytes of the punched range.
func (r Region) Len() int64 { return max(0, r.End-r.Start) }

// PunchRegion returns the region of f that Punch frees, with pages of
// pageSize bytes. f must be experts-last.
func PunchRegion(f *gguf.File, pageSize int64) (Region, error) {
	info := Describe(f)
	if info == nil {
		return Region{}, fmt.Errorf("the model has no expert tensors (*_exps) to punch")
	}
	if !info.Last {
		return Region{}, fmt.Errorf("the experts are not last (gguf build --experts-last first): punching would free non-expert bytes")
	}
	r := Region{ExpertStart: info.NonExpertEnd}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if IsExpert(t.Name) {
			r.ExpertEnd = max(r.ExpertEnd, f.DataOffset+int64(t.Offset)+t.Size())
		}
	}
	r.Start = (r.ExpertStart + pageSize - 1) / pageSize * pageSize
	r.End = r.ExpertEnd / pageSize * pageSize
	return r, nil
}

// PunchResult says what Punch or Unpunch did.
type PunchResult struct {
	Region
	Tensors int   // expert tensors verified
	Holes   int64 // bytes in holes in the region afterwards
}

// expertTensors returns the indexes of f's expert tensors.
func expertTensors(f *gguf.File) []int {
	var out []int
	for i := range f.Tensors {
		if IsExpert(f.Tensors[i].Name) {
			out = append(out, i)
		}
	}
	return out
}

// sumOf returns the sha256 of n bytes of r at off.
func sumOf(r io.ReaderAt, off, n int64) ([32]byte, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, off, n)); err != nil {
		return [32]byte{}, err
	}
	var s [32]byte
	h.Sum(s[:0])
	return s, nil
}

// matchCache checks that cache holds every expert tensor of file with the
// same type, shape and bytes (sha256), and returns file's expert indexes.
func matchCache(file, cache *gguf.Reader) ([]int, error) {
	idx := expertTensors(file.File)
	for _, i := range idx {
		t := &file.Tensors[i]
		j := cache.TensorIndex(t.Name)
		if j < 0 {
			return nil, fmt.Errorf("the cache has no tensor %q", t.Name)
		}
		c := &cache.Tensors[j]
		if c.Type != t.Type || c.Shape() != t.Shape() {
			return nil, fmt.Errorf("tensor %q is %s %s in the file, %s %s in the cache", t.Name, t.Type, t.Shape(), c.Type, c.Shape())
		}
		a, err := sumOf(file.ReaderAt(), file.TensorFileOffset(i), t.Size())
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", t.Name, err)
		}
		b, err := sumOf(cache.ReaderAt(), cache.TensorFileOffset(j), c.Size())
		if err != nil {
			return nil, fmt.Errorf("reading %q from the cache: %w", t.Name, err)
		}
		if a != b {
			return nil, fmt.Errorf("tensor %q differs from the cache's (sha256 %x, cache %x)", t.Name, a[:8], b[:8])
		}
	}
	return idx, nil
}

// gaps returns the ranges of [start, end) that no expert tensor covers
// (alignment padding), in order.
func gaps(f *gguf.File, idx []int, start, end int64) [][2]int64 {
	var out [][2]int64
	pos := start
	for _, i := range idx {
		t := &f.Tensors[i]
		off := f.DataOffset + int64(t.Offset)
		if off > pos {
			out = append(out, [2]int64{pos, min(off, end)})
		}
		pos = max(pos, off+t.Size())
	}
	if pos < end {
		out = append(out, [2]int64{pos, end})
	}
	return out
}

// writable opens path for punching: refused when it is read-only (by its
// mode bits, which root would otherwise ignore) or not a regular file.
func writable(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Mode().Perm()&0o222 == 0 {
		return nil, fmt.Errorf("the file is read-only (chmod u+w it to punch or unpunch it)")
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

// open opens path for punching and decodes it and the cache.
func open(path string, cache io.ReaderAt, cacheSize int64) (*os.File, *gguf.Reader, *gguf.Reader, error) {
	f, err := writable(path)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	fr, err := gguf.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	cr, err := gguf.NewReader(cache, cacheSize)
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("cache: %w", err)
	}
	return f, fr, cr, nil
}

// Punch frees the page-aligned interior of path's expert region (an
// experts-last GGUF) with fallocate(PUNCH_HOLE|KEEP_SIZE), once every
// expert tensor's sha256 equals that of the same tensor in cache (so
// Unpunch can restore it) and the padding between them is zeros. The file
// keeps its size; the punched bytes read as zeros. Memory: a 32 KiB copy
// buffer.
func Punch(path string, cache io.ReaderAt, cacheSize int64) (*PunchResult, error) {
	f, fr, cr, err := open(path, cache, cacheSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reg, err := PunchRegion(fr.File, int64(os.Getpagesize()))
	if err != nil {
		return nil, err
	}
	if h, err := HoleBytes(f, reg.Start, reg.End); err != nil {
		return nil, err
	} else if h > 0 {
		return nil, fmt.Errorf("the expert region already has %d bytes punched (gguf unpunch it first)", h)
	}
	idx, err := matchCache(fr, cr)
	if err != nil {
		return nil, err
	}
	for _, g := range gaps(fr.File, idx, reg.ExpertStart, reg.ExpertEnd) {
		b := make([]byte, g[1]-g[0])
		if _, err := f.ReadAt(b, g[0]); err != nil {
			return nil, err
		}
		if len(bytes.Trim(b, "\x00")) != 0 {
			return nil, fmt.Errorf("the padding at bytes %d-%d is not zeros, so it could not be restored", g[0], g[1])
		}
	}
	res := &PunchResult{Region: reg, Tensors: len(idx)}
	if reg.Len() > 0 {
		if err := punchHole(f, reg.Start, reg.Len()); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	res.Holes, err = HoleBytes(f, reg.Start, reg.End)
	return res, err
}

// Unpunch writes the expert tensors of cache back into path's punched
// region (and zeros into the padding between them), then checks every
// expert tensor's sha256 against the cache.
func Unpunch(path string, cache io.ReaderAt, cacheSize int64) (*PunchResult, error) {
	f, fr, cr, err := open(path, cache, cacheSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reg, err := PunchRegion(fr.File, int64(os.Getpagesize()))
	if err != nil {
		return nil, err
	}
	idx := expertTensors(fr.File)
	for _, i := range idx {
		t := &fr.Tensors[i]
		j := cr.TensorIndex(t.Name)
		if j < 0 || cr.Tensors[j].Type != t.Type || cr.Tensors[j].Shape() != t.Shape() {
			return nil, fmt.Errorf("the cache has no tensor %q of type %s and shape %s", t.Name, t.Type, t.Shape())
		}
	}
	for _, i := range idx {
		t := &fr.Tensors[i]
		j := cr.TensorIndex(t.Name)
		w := io.NewOffsetWriter(f, fr.TensorFileOffset(i))
		if _, err := io.Copy(w, cr.TensorData(j)); err != nil {
			return nil, fmt.Errorf("restoring %q: %w", t.Name, err)
		}
	}
	for _, g := range gaps(fr.File, idx, reg.ExpertStart, reg.ExpertEnd) {
		if _, err := f.WriteAt(make([]byte, g[1]-g[0]), g[0]); err != nil {
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if _, err := matchCache(fr, cr); err != nil {
		return nil, fmt.Errorf("after restoring: %w", err)
	}
	res := &PunchResult{Region: reg, Tensors: len(idx)}
	res.Holes, err = HoleBytes(f, reg.Start, reg.End)
	return res, err
}

// Punched returns the bytes in holes in the expert region of f, the open
// file of gf: nonzero after Punch. A file whose experts are not last (or
// that has none) was never punched: 0.
func Punched(f *os.File, gf *gguf.File) (int64, error) {
	if info := Describe(gf); info == nil || !info.Last {
		return 0, nil
	}
	reg, err := PunchRegion(gf, int64(os.Getpagesize()))
	if err != nil {
		return 0, err
	}
	return HoleBytes(f, reg.ExpertStart, reg.ExpertEnd)
}
