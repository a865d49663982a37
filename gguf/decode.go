package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// maxNesting bounds nested arrays so a hostile file cannot exhaust the stack.
const maxNesting = 32

// byteSource feeds the header decoder. take returns the next n bytes, valid
// until the next call; hint is the decoder's estimate of how many more header
// bytes follow these n, so a source that reads in windows (a remote file) can
// size its next read.
type byteSource interface {
	take(n int64, hint int64) ([]byte, error)
	pos() int64
	// remaining returns the bytes left in the file, or -1 when unknown (a stream).
	remaining() int64
	// avail returns how many of the next n bytes exist (at most n), without
	// consuming them; a stream reads ahead to find out.
	avail(n int64) int64
}

// decoder reads a GGUF header from a byteSource.
type decoder struct {
	src byteSource
	// What is known of the header bytes still to come, kept up to date so
	// that window-reading sources can fetch the rest in few reads.
	strBytes, strCount int64 // string bytes and strings seen, for averages
	kvLeft             int64 // metadata entries after the current one
	tensorsLeft        int64 // tensor infos not yet finished
	infoStart          int64 // file offset of the first tensor info
	infosDone          int64 // tensor infos finished
	infoEnd            int64 // file offset just after the last finished one
}

// Estimates for parts of a header not yet seen. A metadata entry is usually a
// key of 20-40 bytes and a number; the rare big ones (tokenizer arrays)
// cannot be foreseen and are estimated from their count once met. A tensor
// info is a name of ~24 bytes with its length, 2 dimensions, type and offset;
// once some are decoded their measured average replaces the guess.
const (
	kvGuess         = 64
	tensorInfoGuess = 64
)

// errAt wraps a problem as a FormatError at offset off.
func errAt(off int64, sentinel error, format string, args ...any) error {
	return &FormatError{Offset: off, What: fmt.Sprintf(format, args...), Err: sentinel}
}

func (d *decoder) avgString() int64 {
	if d.strCount == 0 {
		return 16
	}
	return 8 + d.strBytes/d.strCount + 1
}

// restHint estimates the header bytes after the current item: the metadata
// entries left at a typical size and the tensor infos left at the average
// size of those decoded so far.
func (d *decoder) restHint() int64 {
	per := int64(tensorInfoGuess)
	if d.infosDone > 0 {
		per = (d.infoEnd-d.infoStart)/d.infosDone + 1
	}
	return d.kvLeft*kvGuess + d.tensorsLeft*per
}

func (d *decoder) take(n, hint int64) ([]byte, error) {
	b, err := d.src.take(n, hint)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAt(d.src.pos(), ErrTruncated, "file is truncated: needed %d more bytes", n)
		}
		return nil, err
	}
	return b, nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.take(4, d.restHint())
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.take(8, d.restHint())
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// checkCount refuses a count of items of at least minSize bytes each that
// cannot fit in the bytes left, before anything is allocated.
func (d *decoder) checkCount(at int64, what string, n uint64, minSize int64) error {
	rem := d.src.remaining()
	if rem < 0 {
		if n > 1<<62 {
			return errAt(at, nil, "%s: count %d is impossible", what, n)
		}
		return nil
	}
	hi, need := bits.Mul64(n, uint64(minSize))
	if hi != 0 || need > uint64(rem) {
		return errAt(at, ErrTruncated, "%s: count %d needs at least %d bytes but only %d remain: the file is truncated or the count is corrupt", what, n, uint64(minSize)*min(n, 1<<40), rem)
	}
	return nil
}

// str reads a length-prefixed string.
func (d *decoder) str(what string) (string, error) {
	at := d.src.pos()
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	if err := d.checkCount(at, what+" length", n, 1); err != nil {
		return "", err
	}
	b, err := d.take(int64(n), d.restHint())
	if err != nil {
		return "", err
	}
	d.strBytes += int64(n)
	d.strCount++
	return string(b), nil
}

// capFor returns a safe initial capacity for n decoded items, so allocation
// follows the data that really exists. In a file of known size checkCount has
// already bounded n by the bytes left, so up to 1 Mi items are made at once
// (a tokenizer's arrays without regrowth). In a stream nothing bounds a
// claimed count until the data arrives: a 40-byte input claiming 10^16
// tensors would cost ~100 MB of preallocation per read, so there the slices
// start at 1 Ki items and grow as items arrive.
func (d *decoder) capFor(n uint64) int {
	maxPrealloc := uint64(1 << 20)
	if d.src.remaining() < 0 {
		maxPrealloc = 1 << 10
	}
	return int(min(n, maxPrealloc))
}

// value reads a value of type t (not an array header).
func (d *decoder) scalar(t ValueType, b []byte) Value {
	switch t {
	case TypeUint8:
		return Uint8(b[0])
	case TypeInt8:
		return Int8(int8(b[0]))
	case TypeUint16:
		return Uint16(binary.LittleEndian.Uint16(b))
	case TypeInt16:
		return Int16(int16(binary.LittleEndian.Uint16(b)))
	case TypeUint32:
		return Uint32(binary.LittleEndian.Uint32(b))
	case TypeInt32:
		return Int32(int32(binary.LittleEndian.Uint32(b)))
	case TypeFloat32:
		return Float32(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case TypeUint64:
		return Uint64(binary.LittleEndian.Uint64(b))
	case TypeInt64:
		return Int64(int64(binary.LittleEndian.Uint64(b)))
	case TypeFloat64:
		return Float64(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	panic("unreachable")
}

func (d *decoder) value(key string, t ValueType, depth int) (Value, error) {
	at := d.src.pos()
	switch t {
	case TypeString:
		s, err := d.str("value of " + key)
		if err != nil {
			return Value{}, err
		}
		return String(s), nil
	case TypeBool:
		b, err := d.take(1, d.restHint())
		if err != nil {
			return Value{}, err
		}
		if b[0] > 1 {
			return Value{}, errAt(at, nil, "key %q: bool value is %d, want 0 or 1", key, b[0])
		}
		return Bool(b[0] == 1), nil
	case TypeArray:
		return d.array(key, depth+1)
	}
	if !t.Valid() {
		return Value{}, errAt(at-4, nil, "key %q has invalid GGUF value type %d", key, uint32(t))
	}
	b, err := d.take(int64(valueTypeSizes[t]), d.restHint())
	if err != nil {
		return Value{}, err
	}
	return d.scalar(t, b), nil
}

func (d *decoder) array(key string, depth int) (Value, error) {
	at := d.src.pos()
	if depth > maxNesting {
		return Value{}, errAt(at, nil, "key %q: arrays nested deeper than %d", key, maxNesting)
	}
	et32, err := d.u32()
	if err != nil {
		return Value{}, err
	}
	et := ValueType(et32)
	if !et.Valid() {
		return Value{}, errAt(at, nil, "key %q: array has invalid element type %d", key, et32)
	}
	n, err := d.u64()
	if err != nil {
		return Value{}, err
	}
	if err := d.checkCount(at+4, fmt.Sprintf("key %q array", key), n, et.minEncodedSize()); err != nil {
		return Value{}, err
	}
	switch et {
	case TypeString:
		return d.stringArray(key, n)
	case TypeArray:
		vals := make([]Value, 0, d.capFor(n))
		for range n {
			v, err := d.array(key, depth+1)
			if err != nil {
				return Value{}, err
			}
			vals = append(vals, v)
		}
		return Value{typ: TypeArray, elem: TypeArray, v: vals}, nil
	case TypeBool:
		out := make([]bool, 0, d.capFor(n))
		err := d.fixedArray(n, 1, func(b []byte) error {
			for _, c := range b {
				if c > 1 {
					return errAt(d.src.pos(), nil, "key %q: bool value is %d, want 0 or 1", key, c)
				}
				out = append(out, c == 1)
			}
			return nil
		})
		return Value{typ: TypeArray, elem: et, v: out}, err
	}
	return d.numericArray(et, n)
}

// fixedArray delivers n elements of size sz in chunks, so a large array is
// read with few source calls and an exact size hint.
func (d *decoder) fixedArray(n uint64, sz int64, each func([]byte) error) error {
	const chunk = 1 << 16
	for n > 0 {
		k := min(n, chunk)
		b, err := d.take(int64(k)*sz, int64(n-k)*sz+d.restHint())
		if err != nil {
			return err
		}
		if err := each(b); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

func (d *decoder) numericArray(et ValueType, n uint64) (Value, error) {
	sz := int64(valueTypeSizes[et])
	var out any
	var err error
	le := binary.LittleEndian
	switch et {
	case TypeUint8:
		s := make([]uint8, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error { s = append(s, b...); return nil })
		out = s
	case TypeInt8:
		s := make([]int8, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for _, c := range b {
				s = append(s, int8(c))
			}
			return nil
		})
		out = s
	case TypeUint16, TypeInt16:
		s := make([]uint16, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 2 {
				s = append(s, le.Uint16(b[i:]))
			}
			return nil
		})
		if et == TypeInt16 {
			t := make([]int16, len(s))
			for i, x := range s {
				t[i] = int16(x)
			}
			out = t
		} else {
			out = s
		}
	case TypeUint32:
		s := make([]uint32, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 4 {
				s = append(s, le.Uint32(b[i:]))
			}
			return nil
		})
		out = s
	case TypeInt32:
		s := make([]int32, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 4 {
				s = append(s, int32(le.Uint32(b[i:])))
			}
			return nil
		})
		out = s
	case TypeFloat32:
		s := make([]float32, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 4 {
				s = append(s, math.Float32frombits(le.Uint32(b[i:])))
			}
			return nil
		})
		out = s
	case TypeUint64:
		s := make([]uint64, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 8 {
				s = append(s, le.Uint64(b[i:]))
			}
			return nil
		})
		out = s
	case TypeInt64:
		s := make([]int64, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 8 {
				s = append(s, int64(le.Uint64(b[i:])))
			}
			return nil
		})
		out = s
	case TypeFloat64:
		s := make([]float64, 0, d.capFor(n))
		err = d.fixedArray(n, sz, func(b []byte) error {
			for i := 0; i < len(b); i += 8 {
				s = append(s, math.Float64frombits(le.Uint64(b[i:])))
			}
			return nil
		})
		out = s
	}
	if err != nil {
		return Value{}, err
	}
	return Value{typ: TypeArray, elem: et, v: out}, nil
}

// stringArray reads n strings. From a windowSource the strings alias its
// buffers, which are never written again once filled: a vocabulary of
// 150,000 tokens costs one allocation (the slice), not 150,000, and no copy.
func (d *decoder) stringArray(key string, n uint64) (Value, error) {
	out := make([]string, 0, d.capFor(n))
	ws, _ := d.src.(*windowSource)
	var hint int64
	// The strings still to come are estimated at the average length of this
	// array's strings so far (other strings, such as keys, say little).
	var arrBytes, arrCount int64
	avg := func() int64 {
		if arrCount < 16 {
			return d.avgString()
		}
		return 8 + arrBytes/arrCount + 1
	}
	for i := uint64(0); i < n; i++ {
		if ws != nil {
			// Fast path: whole strings straight from the window.
			buf := ws.buf[ws.off:]
			k, kb := int64(0), int64(0)
			for i < n && len(buf) >= 8 {
				l := binary.LittleEndian.Uint64(buf)
				if l > uint64(len(buf)-8) {
					break
				}
				out = append(out, unsafe.String(unsafe.SliceData(buf[8:]), int(l)))
				buf = buf[8+l:]
				kb += int64(l)
				k++
				i++
			}
			d.strBytes, d.strCount = d.strBytes+kb, d.strCount+k
			arrBytes, arrCount = arrBytes+kb, arrCount+k
			ws.off = len(ws.buf) - len(buf)
			if i == n {
				break
			}
		}
		if i%4096 == 0 || ws != nil {
			hi, lo := bits.Mul64(n-i, uint64(avg()))
			hint = int64(min(lo, 1<<62)) + d.restHint()
			if hi != 0 {
				hint = 1 << 62
			}
		}
		at := d.src.pos()
		b, err := d.take(8, hint)
		if err != nil {
			return Value{}, err
		}
		l := binary.LittleEndian.Uint64(b)
		if rem := d.src.remaining(); l > 1<<62 || (rem >= 0 && l > uint64(rem)) {
			return Value{}, d.checkCount(at, fmt.Sprintf("key %q string %d length", key, i), l, 1)
		}
		b, err = d.take(int64(l), hint)
		if err != nil {
			return Value{}, err
		}
		if ws != nil {
			out = append(out, unsafe.String(unsafe.SliceData(b), len(b)))
		} else {
			out = append(out, string(b)) // a stream's buffer is reused: copy
		}
		d.strBytes, d.strCount = d.strBytes+int64(l), d.strCount+1
		arrBytes, arrCount = arrBytes+int64(l), arrCount+1
	}
	return Value{typ: TypeArray, elem: TypeString, v: out}, nil
}

// decodeHeader reads a whole GGUF header: magic, version, counts, metadata,
// tensor infos. fileSize is the size of the file, or -1 for a stream.
func decodeHeader(src byteSource, fileSize int64) (*File, error) {
	d := &decoder{src: src}
	first, err := src.take(4, 1<<10)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAt(0, ErrNotGGUF, "file is too short to be GGUF (%d bytes)", src.avail(4))
		}
		return nil, err
	}
	if string(first) != Magic {
		return nil, d.badMagic(first)
	}
	version, err := d.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case version == 0:
		return nil, errAt(4, ErrUnsupportedVersion, "bad GGUF version 0")
	case version&0xFFFF == 0:
		return nil, errAt(4, ErrBigEndian, "GGUF version field reads %#x: the file is big-endian (written for s390x); only little-endian files are supported", version)
	case version == 1:
		return nil, errAt(4, ErrUnsupportedVersion, "GGUF version 1 is not supported (v2 and v3 are)")
	case version > 3:
		return nil, errAt(4, ErrUnsupportedVersion, "GGUF version %d is newer than this tool supports (v2 and v3)", version)
	}
	nTensors, err := d.u64()
	if err != nil {
		return nil, err
	}
	if err := d.checkCount(8, "tensor count", nTensors, 24); err != nil {
		return nil, err
	}
	nKV, err := d.u64()
	if err != nil {
		return nil, err
	}
	if err := d.checkCount(16, "metadata key count", nKV, 13); err != nil {
		return nil, err
	}
	d.tensorsLeft, d.kvLeft = int64(nTensors), int64(nKV)

	f := &File{Version: version, Metadata: &Metadata{}}
	md := f.Metadata
	md.kvs = make([]KV, 0, d.capFor(nKV))
	md.index = make(map[string]int, d.capFor(nKV))
	for i := uint64(0); i < nKV; i++ {
		at := src.pos()
		d.kvLeft = int64(nKV - i - 1)
		key, err := d.str(fmt.Sprintf("key %d", i))
		if err != nil {
			return nil, err
		}
		if p := nameProblem(true, key); p != "" {
			return nil, errAt(at, nil, "key %d %s", i, p)
		}
		if _, dup := md.index[key]; dup {
			return nil, errAt(at, nil, "duplicate metadata key %q", key)
		}
		t, err := d.u32()
		if err != nil {
			return nil, err
		}
		v, err := d.value(key, ValueType(t), 0)
		if err != nil {
			return nil, err
		}
		md.index[key] = len(md.kvs)
		md.kvs = append(md.kvs, KV{key, v})
	}

	f.Alignment = DefaultAlignment
	if v, ok := md.Get(KeyAlignment); ok {
		a, isU32 := v.Interface().(uint32)
		if !isU32 {
			return nil, errAt(src.pos(), nil, "%s is a %s, want u32", KeyAlignment, v.TypeString())
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, errAt(src.pos(), nil, "%s = %d is not a power of two", KeyAlignment, a)
		}
		f.Alignment = uint64(a)
	}

	f.Tensors = make([]TensorInfo, 0, d.capFor(nTensors))
	f.infoOffsets = make([]int64, 0, d.capFor(nTensors))
	names := make(map[string]int, d.capFor(nTensors))
	d.kvLeft, d.infoStart = 0, src.pos()
	for i := uint64(0); i < nTensors; i++ {
		at := src.pos()
		d.tensorsLeft = int64(nTensors - i)
		d.infosDone, d.infoEnd = int64(i), at
		name, err := d.str(fmt.Sprintf("tensor %d name", i))
		if err != nil {
			return nil, err
		}
		if p := nameProblem(false, name); p != "" {
			return nil, errAt(at, nil, "tensor %d name %s", i, p)
		}
		if len(name) >= MaxNameLen {
			return nil, errAt(at, nil, "tensor %d name %q is too long: %d bytes, at most %d", i, name, len(name), MaxNameLen-1)
		}
		if j, dup := names[name]; dup {
			return nil, errAt(at, nil, "duplicate tensor name %q (tensors %d and %d)", name, j, i)
		}
		names[name] = int(i)
		nd, err := d.u32()
		if err != nil {
			return nil, err
		}
		if nd > MaxDims {
			return nil, errAt(src.pos()-4, nil, "tensor %q has %d dimensions, at most %d", name, nd, MaxDims)
		}
		ti := TensorInfo{Name: name, Dims: make([]uint64, nd)}
		for j := range ti.Dims {
			if ti.Dims[j], err = d.u64(); err != nil {
				return nil, err
			}
		}
		typAt := src.pos()
		t, err := d.u32()
		if err != nil {
			return nil, err
		}
		ti.Type = Type(t)
		if ti.Offset, err = d.u64(); err != nil {
			return nil, err
		}
		if _, err := ti.check(); err != nil {
			return nil, errAt(typAt, nil, "%v", err)
		}
		f.Tensors = append(f.Tensors, ti)
		f.infoOffsets = append(f.infoOffsets, typAt+4)
	}
	d.tensorsLeft = 0
	f.HeaderSize = src.pos()
	f.DataOffset = int64(alignUp(uint64(f.HeaderSize), f.Alignment))
	if len(f.Tensors) == 0 {
		// A file without tensors ends after its header (gguf-py) or after
		// the header padded to the alignment (ggml's gguf_write_to_file).
		// As ggml reports it, the data section starts where the padding
		// that is there ends, so that a rewrite can keep whichever the
		// file has (File.HeaderPadded).
		f.DataOffset = f.HeaderSize + src.avail(f.DataOffset-f.HeaderSize)
	}
	if err := f.checkOffsets(fileSize); err != nil {
		return nil, err
	}
	return f, nil
}

// nameProblem applies llama.cpp's rules for the strings it looks things up
// by, returning what is wrong with name or "". It reads keys and tensor
// names as C strings, so a name holding a NUL byte is, to it, the part
// before the NUL: two such names can collide and none can be found by its
// full spelling. An empty key is refused by gguf_init_from_file ("key N is
// empty"); zero padding read where a key should start (n_kv claiming one
// pair too many) decodes as one. Empty tensor names are legal in ggml.
func nameProblem(isKey bool, name string) string {
	if isKey && name == "" {
		return "is empty"
	}
	if j := strings.IndexByte(name, 0); j >= 0 {
		return fmt.Sprintf("%s contains a NUL byte at position %d (llama.cpp reads names as C strings)", quoteName(name), j)
	}
	return ""
}

// quoteName quotes a name for a message, cut to its first 64 bytes so that a
// hostile 100 kB name does not make a 100 kB line.
func quoteName(name string) string {
	const show = 64
	if len(name) <= show {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(name[:show]), len(name))
}

// badMagic explains what a non-GGUF file is, when it can tell.
func (d *decoder) badMagic(first []byte) error {
	switch {
	case bytes.Equal(first, []byte("FUGG")):
		return errAt(0, ErrBigEndian, "magic reads \"FUGG\": a byte-swapped GGUF file")
	case bytes.Equal(first, []byte("vers")):
		return errAt(0, ErrLFSPointer, "this is a Git LFS pointer file (\"version https://git-lfs...\"), not the model: fetch the LFS object (git lfs pull, or download through the Hub's resolve URL)")
	case bytes.Equal(first, []byte("ggjt")), bytes.Equal(first, []byte("tjgg")), bytes.Equal(first, []byte("ggml")), bytes.Equal(first, []byte("lmgg")):
		return errAt(0, ErrNotGGUF, "this is an old GGML/GGJT model file, not GGUF: convert it with llama.cpp's convert scripts")
	}
	return errAt(0, ErrNotGGUF, "invalid magic %q, expected \"GGUF\"", first)
}

// checkOffsets validates tensor data placement as llama.cpp does: offsets
// equal the running padded sum in tensor-info order, and every tensor's data
// lies inside the file (when its size is known).
func (f *File) checkOffsets(fileSize int64) error {
	var expect uint64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset != expect {
			return errAt(f.infoOffsets[i]-8, nil, "tensor %q has data offset %d, expected %d (offsets must follow tensor-info order with %d-byte alignment)",
				t.Name, t.Offset, expect, f.Alignment)
		}
		size := uint64(t.Size())
		end := uint64(f.DataOffset) + t.Offset + size
		if fileSize >= 0 && end > uint64(fileSize) {
			return errAt(f.infoOffsets[i]-8, ErrTruncated, "tensor %q data [%d, %d) is not within the file (%d bytes): the file is truncated",
				t.Name, uint64(f.DataOffset)+t.Offset, end, fileSize)
		}
		expect = alignUp(t.Offset+size, f.Alignment)
		if expect > 1<<62 {
			return errAt(f.infoOffsets[i]-8, nil, "tensor %q: data section size overflows", t.Name)
		}
	}
	f.DataSize = int64(expect)
	return nil
}
