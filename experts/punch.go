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
	var r Region
	r.ExpertStart, r.ExpertEnd = span(f)
	r.Start = (r.ExpertStart + pageSize - 1) / pageSize * pageSize
	r.End = r.ExpertEnd / pageSize * pageSize
	return r, nil
}

// PunchResult says what Punch or Unpunch did.
type PunchResult struct {
	Region
	Tensors int   // expert tensors verified
	Holes   int64 // bytes in holes in the region afterwards
	// Restored is the bytes Unpunch wrote back: 0 when the file had no
	// holes in its expert region (nothing to restore).
	Restored int64
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
	idx, err := checkTable(file, cache)
	if err != nil {
		return nil, err
	}
	for _, i := range idx {
		t := &file.Tensors[i]
		j := cache.TensorIndex(t.Name)
		a, err := sumOf(file.ReaderAt(), file.TensorFileOffset(i), t.Size())
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", t.Name, err)
		}
		b, err := sumOf(cache.ReaderAt(), cache.TensorFileOffset(j), t.Size())
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
// Unpunch can restore it), cache is another file than path (not the only
// copy) and the padding between them is zeros. The file
// keeps its size; the punched bytes read as zeros. Memory: a 32 KiB copy
// buffer.
func Punch(path string, cache io.ReaderAt, cacheSize int64) (*PunchResult, error) {
	f, fr, cr, err := open(path, cache, cacheSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := notSameFile(f, cr.ReaderAt()); err != nil {
		return nil, err
	}
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

// Unpunch writes the expert bytes of cache back into the holes of path's
// expert region (and zeros into the padding between tensors there), then
// checks every expert tensor's sha256 against the cache. Before it writes
// a byte, CheckCache checks the cache against every expert byte path still
// holds, so a wrong cache is refused whether the file was punched or not.
// A file without holes there is left as it is (Restored 0: nothing to
// restore).
func Unpunch(path string, cache io.ReaderAt, cacheSize int64) (*PunchResult, error) {
	f, fr, cr, err := open(path, cache, cacheSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if Describe(fr.File) == nil {
		return nil, fmt.Errorf("the model has no expert tensors (*_exps) to restore")
	}
	if err := CheckCache(f, fr, cr, true); err != nil {
		return nil, err
	}
	res := &PunchResult{Tensors: len(expertTensors(fr.File))}
	if h, err := Punched(f, fr.File); err != nil || h == 0 {
		return res, err
	}
	if res.Region, err = PunchRegion(fr.File, int64(os.Getpagesize())); err != nil {
		return nil, err
	}
	holes, err := holeRanges(f, res.ExpertStart, res.ExpertEnd)
	if err != nil {
		return nil, err
	}
	for _, h := range holes {
		if err := restore(f, fr, cr, h[0], h[1]); err != nil {
			return nil, err
		}
		res.Restored += h[1] - h[0]
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if _, err := matchCache(fr, cr); err != nil {
		return nil, fmt.Errorf("after restoring: %w", err)
	}
	res.Holes, err = HoleBytes(f, res.Start, res.End)
	return res, err
}

// restore writes [start, end) of f (in its expert region) from the cache:
// each expert tensor's bytes from the cache's same tensor, zeros between
// them, compareChunk bytes at a time.
func restore(f *os.File, fr, cr *gguf.Reader, start, end int64) error {
	idx := expertTensors(fr.File)
	buf := make([]byte, compareChunk)
	for p := start; p < end; {
		b := buf[:min(end-p, compareChunk)]
		clear(b)
		for _, i := range idx {
			t := &fr.Tensors[i]
			off := fr.TensorFileOffset(i)
			x, y := max(off, p), min(off+t.Size(), p+int64(len(b)))
			if x >= y {
				continue
			}
			coff := cr.TensorFileOffset(cr.TensorIndex(t.Name))
			if _, err := cr.ReaderAt().ReadAt(b[x-p:y-p], coff+x-off); err != nil {
				return fmt.Errorf("restoring %q: %w", t.Name, err)
			}
		}
		if _, err := f.WriteAt(b, p); err != nil {
			return fmt.Errorf("restoring bytes %d-%d: %w", p, p+int64(len(b)), err)
		}
		p += int64(len(b))
	}
	return nil
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
