package experts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ggufkit/gguf/gguf"
)

// HoleBytes returns how many bytes of [start, end) of f are holes: what
// DataRanges does not cover. A file system without hole reporting says
// there are none.
func HoleBytes(f *os.File, start, end int64) (int64, error) {
	rs, err := DataRanges(f, start, end)
	if err != nil {
		return 0, err
	}
	holes := max(0, end-start)
	for _, r := range rs {
		holes -= r[1] - r[0]
	}
	return holes, nil
}

// holeRanges returns the ranges of [start, end) of f that are holes, in
// order: the complement of DataRanges.
func holeRanges(f *os.File, start, end int64) ([][2]int64, error) {
	rs, err := DataRanges(f, start, end)
	if err != nil {
		return nil, err
	}
	var out [][2]int64
	pos := start
	for _, r := range rs {
		if r[0] > pos {
			out = append(out, [2]int64{pos, r[0]})
		}
		pos = r[1]
	}
	if pos < end {
		out = append(out, [2]int64{pos, end})
	}
	return out, nil
}

// span returns the file offsets of the first expert byte of f and past its
// last one, wherever the expert tensors are.
func span(f *gguf.File) (start, end int64) {
	start = -1
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if !IsExpert(t.Name) {
			continue
		}
		off := f.DataOffset + int64(t.Offset)
		if start < 0 || off < start {
			start = off
		}
		end = max(end, off+t.Size())
	}
	return max(start, 0), end
}

// errSameFile refuses a cache that is the file itself: its experts are the
// only copy, so punching would lose them and unpunching has nothing to
// write back.
var errSameFile = errors.New("the cache is the file itself (the same inode, by another name, a symlink or a hard link): the experts must come from a separate copy")

// notSameFile refuses a cache that is f (compared as os.SameFile does, by
// device and inode). A cache that is not a local file (a URL, a buffer)
// cannot be f.
func notSameFile(f *os.File, cache io.ReaderAt) error {
	cf, ok := cache.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return nil
	}
	a, err := f.Stat()
	if err != nil {
		return err
	}
	b, err := cf.Stat()
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if os.SameFile(a, b) {
		return errSameFile
	}
	return nil
}

// checkTable checks that cache holds every expert tensor of file under the
// same name with the same type and shape (a repacked layout is in the
// name), each within both files' sizes, and returns file's expert indexes.
func checkTable(file, cache *gguf.Reader) ([]int, error) {
	idx := expertTensors(file.File)
	for _, i := range idx {
		t := &file.Tensors[i]
		if off := file.TensorFileOffset(i); off < 0 || off+t.Size() > file.Size() {
			return nil, fmt.Errorf("tensor %q is past the end of the file (%d bytes)", t.Name, file.Size())
		}
		j := cache.TensorIndex(t.Name)
		if j < 0 {
			return nil, fmt.Errorf("the cache has no tensor %q", t.Name)
		}
		c := &cache.Tensors[j]
		if c.Type != t.Type || c.Shape() != t.Shape() {
			return nil, fmt.Errorf("tensor %q is %s %s in the file, %s %s in the cache", t.Name, t.Type, t.Shape(), c.Type, c.Shape())
		}
		if off := cache.TensorFileOffset(j); off < 0 || off+c.Size() > cache.Size() {
			return nil, fmt.Errorf("tensor %q is past the end of the cache (%d bytes)", t.Name, cache.Size())
		}
	}
	return idx, nil
}

// compareChunk is the bytes compared at a time (two buffers of it).
const compareChunk = 1 << 20

// compareHeld compares the expert bytes of file within ranges (file
// offsets) with the same bytes of the cache's tensors; padding between
// tensors is not compared.
func compareHeld(file, cache *gguf.Reader, idx []int, ranges [][2]int64) error {
	buf := make([]byte, 2*compareChunk)
	for _, i := range idx {
		t := &file.Tensors[i]
		off := file.TensorFileOffset(i)
		coff := cache.TensorFileOffset(cache.TensorIndex(t.Name))
		for _, r := range ranges {
			for a, b := max(off, r[0]), min(off+t.Size(), r[1]); a < b; {
				n := min(b-a, compareChunk)
				x, y := buf[:n], buf[compareChunk:compareChunk+n]
				if _, err := file.ReaderAt().ReadAt(x, a); err != nil {
					return fmt.Errorf("reading %q: %w", t.Name, err)
				}
				if _, err := cache.ReaderAt().ReadAt(y, coff+a-off); err != nil {
					return fmt.Errorf("reading %q from the cache: %w", t.Name, err)
				}
				if !bytes.Equal(x, y) {
					k := a - off
					for x[0] == y[0] {
						x, y, k = x[1:], y[1:], k+1
					}
					return fmt.Errorf("tensor %q differs from the cache's at its byte %d (file offset %d), which the file still holds: the cache holds other experts", t.Name, k, off+k)
				}
				a += n
			}
		}
	}
	return nil
}

// CheckCache checks that cache can stand in for the expert bytes of a
// punched file f (decoded as file) before anything is read from it or
// written with it: cache is not f itself, it holds every expert tensor of
// file under the same name with the same type and shape, and the expert
// bytes f still holds equal the cache's. With all, those are every expert
// byte outside holes (found with SEEK_DATA: what unpunch checks before
// writing); otherwise only those of the expert region's two partial edge
// pages, which punching keeps (the cheap check a loader makes).
func CheckCache(f *os.File, file, cache *gguf.Reader, all bool) error {
	if err := notSameFile(f, cache.ReaderAt()); err != nil {
		return err
	}
	idx, err := checkTable(file, cache)
	if err != nil {
		return err
	}
	start, end := span(file.File)
	spans := [][2]int64{{start, end}}
	if !all {
		reg, err := PunchRegion(file.File, int64(os.Getpagesize()))
		if err != nil {
			return err
		}
		if reg.Start < reg.End {
			spans = [][2]int64{{reg.ExpertStart, reg.Start}, {reg.End, reg.ExpertEnd}}
		}
	}
	var held [][2]int64
	for _, s := range spans {
		rs, err := DataRanges(f, s[0], s[1])
		if err != nil {
			return err
		}
		held = append(held, rs...)
	}
	return compareHeld(file, cache, idx, held)
}
