package split

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// MaxFiles is the most files a split model can have: split.count is a u16.
const MaxFiles = 1<<16 - 1

// Name returns the path of file no (counted from 0) of a model split in
// count files: PREFIX-0000(no+1)-of-0000count.gguf, as llama_split_path.
func Name(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

var nameRE = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// ParseName splits a path named by Name into its prefix, its number
// (counted from 0) and the file count; ok is false for other names.
func ParseName(path string) (prefix string, no, count int, ok bool) {
	dir, base := filepath.Split(path)
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		// URLs and hf:// paths use '/' whatever the OS.
		dir, base = path[:i+1], path[i+1:]
	}
	m := nameRE.FindStringSubmatch(base)
	if m == nil {
		return "", 0, 0, false
	}
	n, _ := strconv.Atoi(m[2])
	c, _ := strconv.Atoi(m[3])
	if n < 1 || n > c {
		return "", 0, 0, false
	}
	return dir + m[1], n - 1, c, true
}

// Info is what a file's metadata says about its place in a split model.
type Info struct {
	// No is split.no, the file's number counted from 0.
	No int
	// Count is split.count, the number of files; 0 in a merged file.
	Count int
	// Tensors is split.tensors.count, the model's total.
	Tensors int
}

// ErrBadKey reports a split key of the wrong type or value.
var ErrBadKey = errors.New("bad split key")

// ReadInfo reads the split keys of md. ok is false when the file is not
// part of a split model: split.count is absent, 0 (a merged file) or 1.
// Keys of the wrong type are an error, as in llama.cpp's loader.
func ReadInfo(md *gguf.Metadata) (info Info, ok bool, err error) {
	get := func(key string, want gguf.ValueType) (int, bool, error) {
		v, present := md.Get(key)
		if !present {
			return 0, false, nil
		}
		if v.Type() != want {
			return 0, true, fmt.Errorf("%w: %s is a %s, want %s", ErrBadKey, key, v.TypeString(), want)
		}
		n, _ := v.Int()
		if n < 0 {
			return 0, true, fmt.Errorf("%w: %s = %d", ErrBadKey, key, n)
		}
		return int(n), true, nil
	}
	count, hasCount, err := get(gguf.KeySplitCount, gguf.TypeUint16)
	if err != nil || !hasCount || count < 2 {
		return Info{Count: count}, false, err
	}
	info.Count = count
	var has bool
	if info.No, has, err = get(gguf.KeySplitNo, gguf.TypeUint16); err != nil {
		return info, false, err
	} else if !has {
		return info, false, fmt.Errorf("%w: %s is missing", ErrBadKey, gguf.KeySplitNo)
	}
	if info.Tensors, has, err = get(gguf.KeySplitTensors, gguf.TypeInt32); err != nil {
		return info, false, err
	} else if !has && info.No == 0 {
		return info, false, fmt.Errorf("%w: %s is missing", ErrBadKey, gguf.KeySplitTensors)
	}
	if info.No >= info.Count {
		return info, false, fmt.Errorf("%w: %s = %d but %s = %d", ErrBadKey, gguf.KeySplitNo, info.No, gguf.KeySplitCount, info.Count)
	}
	return info, true, nil
}

// ParseSize parses a --split-max-size value as llama-gguf-split does: a
// positive whole number of megabytes (M, 10^6 bytes) or gigabytes (G, 10^9).
func ParseSize(s string) (int64, error) {
	var unit int64
	switch {
	case strings.HasSuffix(s, "M"):
		unit = 1000 * 1000
	case strings.HasSuffix(s, "G"):
		unit = 1000 * 1000 * 1000
	default:
		return 0, fmt.Errorf("split size %q: want a number of megabytes or gigabytes, e.g. 500M or 4G", s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n <= 0 || n > 1<<62/unit {
		return 0, fmt.Errorf("split size %q: want a positive whole number before %s", s, s[len(s)-1:])
	}
	return n * unit, nil
}

// Limit is how much one file of a split model may hold, as
// llama-gguf-split's --split-max-size and --split-max-tensors say; a zero
// field is no limit.
type Limit struct {
	Bytes   int64
	Tensors int
}

// Partition assigns tensors, in order, to files within lim, as
// llama-gguf-split does: with lim.Bytes, sizes are counted padded to 32
// bytes (whatever the file's alignment), metadata is not counted, and a
// tensor that would overflow the current file starts the next one (so a
// file can exceed lim.Bytes only by holding one big tensor); with
// lim.Tensors, every file but the last holds that many tensors. It returns
// the index of each file's first tensor. A first tensor larger than
// lim.Bytes is an error, as it is for llama-gguf-split (it would leave the
// first file empty).
func Partition(tensors []gguf.TensorInfo, lim Limit) ([]int, error) {
	if lim.Bytes <= 0 && lim.Tensors <= 0 {
		return nil, fmt.Errorf("split: no limit on the size or tensor count of a file")
	}
	starts := []int{0}
	var cur int64
	for i := range tensors {
		n := alignUp(tensors[i].Size(), gguf.DefaultAlignment)
		first := starts[len(starts)-1]
		switch {
		case lim.Tensors > 0 && i-first == lim.Tensors:
			starts = append(starts, i)
			cur = 0
		case lim.Bytes > 0 && cur+n > lim.Bytes:
			if i == first {
				return nil, fmt.Errorf("tensor %q (%d bytes) is larger than the split size %d: a file would hold no tensor", tensors[i].Name, tensors[i].Size(), lim.Bytes)
			}
			starts = append(starts, i)
			cur = 0
		}
		cur += n
	}
	if len(starts) > MaxFiles {
		return nil, fmt.Errorf("%d files: more than split.count (u16) can say; use a larger split size", len(starts))
	}
	return starts, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// ggmlDims returns dims as ggml writes them in a tensor info: trailing
// dimensions of 1 dropped, at least one kept (ggml_n_dims).
func ggmlDims(dims []uint64) []uint64 {
	n := len(dims)
	for n > 1 && dims[n-1] == 1 {
		n--
	}
	if n == 0 {
		return []uint64{1}
	}
	return append([]uint64(nil), dims[:n]...)
}
