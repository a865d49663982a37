package gguf

import (
	"errors"
	"fmt"
	"io"
)

// Layout plans a GGUF file: it validates the tensors as llama.cpp's loader
// would, assigns each its data offset (the running sum of padded sizes, in
// the given order) and computes the header size and data offset. The
// alignment comes from general.alignment in md (which must then be a u32
// power of two), else DefaultAlignment. Keys and tensor names that
// llama.cpp's loader refuses (an empty key, a NUL byte in a name) are
// refused here too. The returned File shares nothing with the arguments.
//
// A file without tensors gets no padding after its header, as gguf-py
// writes it (the vocab-only files of llama.cpp's repository are such), and
// the smallest file that loads. ggml's own writer pads it to the
// alignment; call File.PadHeader for that form (a rewrite of a padded file
// does, to stay byte-identical).
func Layout(version uint32, md *Metadata, tensors []TensorInfo) (*File, error) {
	if version != 2 && version != 3 {
		return nil, fmt.Errorf("gguf: cannot write version %d (2 or 3)", version)
	}
	f := &File{Version: version, Metadata: md.Clone(), Alignment: DefaultAlignment}
	if v, ok := md.Get(KeyAlignment); ok {
		a, isU32 := v.Interface().(uint32)
		if !isU32 || a == 0 || a&(a-1) != 0 {
			return nil, fmt.Errorf("gguf: %s must be a u32 power of two, got %s %s", KeyAlignment, v.TypeString(), v.Format(1))
		}
		f.Alignment = uint64(a)
	}
	for i, kv := range md.KVs() {
		if p := nameProblem(true, kv.Key); p != "" {
			return nil, fmt.Errorf("gguf: metadata key %d %s", i, p)
		}
	}
	f.Tensors = make([]TensorInfo, len(tensors))
	names := make(map[string]bool, len(tensors))
	var off uint64
	for i, t := range tensors {
		t.Dims = append([]uint64(nil), t.Dims...)
		size, err := t.check()
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		if p := nameProblem(false, t.Name); p != "" {
			return nil, fmt.Errorf("gguf: tensor %d name %s", i, p)
		}
		if names[t.Name] {
			return nil, fmt.Errorf("gguf: duplicate tensor name %q", t.Name)
		}
		names[t.Name] = true
		t.Offset = off
		f.Tensors[i] = t
		off = alignUp(off+uint64(size), f.Alignment)
	}
	f.DataSize = int64(off)
	hdr, err := appendHeader(nil, f)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f.HeaderSize = int64(len(hdr))
	f.DataOffset = f.HeaderSize
	if len(f.Tensors) > 0 {
		f.DataOffset = int64(alignUp(uint64(f.HeaderSize), f.Alignment))
	}
	return f, nil
}

// FileSize returns the size of the file f describes when written by Writer.
func (f *File) FileSize() int64 { return f.DataOffset + f.DataSize }

// Writer writes a GGUF file front to back to any io.Writer (a pipe works):
// the header first, with every offset computed up front, then each tensor's
// bytes in order, through Write. Padding is inserted between tensors. Data
// that does not match the declared sizes is refused.
type Writer struct {
	w    io.Writer
	f    *File
	cur  int   // index of the tensor being written
	done int64 // bytes of the current tensor written
	n    int64 // bytes written to w
	err  error
}

// NewWriter plans the file (see Layout) and writes its header and the
// padding after it to w.
func NewWriter(w io.Writer, version uint32, md *Metadata, tensors []TensorInfo) (*Writer, error) {
	f, err := Layout(version, md, tensors)
	if err != nil {
		return nil, err
	}
	return NewWriterLayout(w, f)
}

// NewWriterLayout writes the header of a file planned by Layout.
func NewWriterLayout(w io.Writer, f *File) (*Writer, error) {
	hdr, err := appendHeader(make([]byte, 0, f.HeaderSize), f)
	if err != nil {
		return nil, err
	}
	if int64(len(hdr)) != f.HeaderSize || f.DataOffset < f.HeaderSize {
		return nil, fmt.Errorf("gguf: layout is stale: header encodes to %d bytes, layout says %d", len(hdr), f.HeaderSize)
	}
	gw := &Writer{w: w, f: f}
	if err := gw.write(hdr); err != nil {
		return nil, err
	}
	if err := gw.pad(f.DataOffset - f.HeaderSize); err != nil {
		return nil, err
	}
	gw.skipEmpty()
	return gw, nil
}

// File returns the layout being written.
func (w *Writer) File() *File { return w.f }

// Written returns the number of bytes written so far.
func (w *Writer) Written() int64 { return w.n }

// Current returns the index of the tensor whose bytes Write expects next,
// or len(File().Tensors) when all are written.
func (w *Writer) Current() int { return w.cur }

func (w *Writer) write(p []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(p)
	w.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	w.err = err
	return err
}

var zeros [4096]byte

// pad writes n zero bytes.
func (w *Writer) pad(n int64) error {
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if err := w.write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// skipEmpty advances past zero-size tensors.
func (w *Writer) skipEmpty() {
	for w.cur < len(w.f.Tensors) && w.f.Tensors[w.cur].Size() == 0 {
		w.cur++
	}
}

// ErrTooMuchData is returned by Write when more bytes arrive than the
// declared tensors hold.
var ErrTooMuchData = errors.New("gguf: more tensor data than the tensor table declares")

// Write accepts tensor data in order; a write may span tensor boundaries.
func (w *Writer) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if w.err != nil {
			return total, w.err
		}
		if w.cur >= len(w.f.Tensors) {
			return total, ErrTooMuchData
		}
		t := &w.f.Tensors[w.cur]
		size := t.Size()
		k := int(min(int64(len(p)), size-w.done))
		if err := w.write(p[:k]); err != nil {
			return total, err
		}
		total += k
		p = p[k:]
		w.done += int64(k)
		if w.done == size {
			if err := w.finishTensor(); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// ReadFrom copies tensor data from r until r ends, across tensor
// boundaries, adding padding as tensors complete. When r is an
// *io.LimitedReader that fits in the current tensor it is handed to the
// underlying writer as is, so a file-to-file copy can use copy_file_range.
// More data than the tensor table declares is an error.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if w.err != nil {
			return total, w.err
		}
		if w.cur >= len(w.f.Tensors) {
			var one [1]byte
			if k, _ := io.ReadFull(r, one[:]); k > 0 {
				return total, ErrTooMuchData
			}
			return total, nil
		}
		t := &w.f.Tensors[w.cur]
		want := t.Size() - w.done
		src := r
		if lr, ok := r.(*io.LimitedReader); !ok || lr.N > want {
			src = io.LimitReader(r, want)
		}
		n, err := io.Copy(w.w, src)
		w.n += n
		w.done += n
		total += n
		if err != nil {
			w.err = err
			return total, err
		}
		if w.done < t.Size() {
			return total, nil // r ended inside this tensor
		}
		if err := w.finishTensor(); err != nil {
			return total, err
		}
	}
}

func (w *Writer) finishTensor() error {
	size := w.f.Tensors[w.cur].Size()
	pad := int64(alignUp(uint64(size), w.f.Alignment)) - size
	if err := w.pad(pad); err != nil {
		return err
	}
	w.cur++
	w.done = 0
	w.skipEmpty()
	return nil
}

// Close checks that every tensor received exactly its declared bytes. It
// does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.cur < len(w.f.Tensors) {
		t := &w.f.Tensors[w.cur]
		return fmt.Errorf("gguf: tensor %q got %d of its %d bytes (%d tensors not written)", t.Name, w.done, t.Size(), len(w.f.Tensors)-w.cur)
	}
	return nil
}
