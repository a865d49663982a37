package split

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/sink"
)

// File is one file of a split model to write.
type File struct {
	// Name is its path.
	Name string
	// Layout is its header and tensor table.
	Layout *gguf.File
	// First is the index in the plan of its first tensor.
	First int
}

// Plan lays out the files of p split within lim (see Partition), named from prefix (see Name). The first file gets all of p's
// metadata and every file the split keys, last, in llama-gguf-split's order;
// split keys p already has (a merged model) are replaced.
func Plan(p *plan.Plan, prefix string, lim Limit) (merged *gguf.File, files []File, err error) {
	merged, err = p.Layout()
	if err != nil {
		return nil, nil, err
	}
	if len(merged.Tensors) > math.MaxInt32 {
		return nil, nil, fmt.Errorf("%d tensors: more than split.tensors.count (i32) can say", len(merged.Tensors))
	}
	starts, err := Partition(merged.Tensors, lim)
	if err != nil {
		return nil, nil, err
	}
	for k, first := range starts {
		end := len(merged.Tensors)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		md := &gguf.Metadata{}
		if k == 0 {
			md = p.Metadata.Clone()
			for _, key := range []string{gguf.KeySplitNo, gguf.KeySplitCount, gguf.KeySplitTensors} {
				md.Delete(key)
			}
		} else if merged.Alignment != gguf.DefaultAlignment {
			// Each file is read with its own alignment: say it in every one.
			md.Set(gguf.KeyAlignment, gguf.Uint32(uint32(merged.Alignment)))
		}
		md.Set(gguf.KeySplitNo, gguf.Uint16(uint16(k)))
		md.Set(gguf.KeySplitTensors, gguf.Int32(int32(len(merged.Tensors))))
		md.Set(gguf.KeySplitCount, gguf.Uint16(uint16(len(starts))))
		infos := make([]gguf.TensorInfo, end-first)
		for i := range infos {
			infos[i] = merged.Tensors[first+i]
			infos[i].Dims = ggmlDims(infos[i].Dims)
		}
		l, err := gguf.Layout(3, md, infos)
		if err != nil {
			return nil, nil, fmt.Errorf("file %d: %w", k+1, err)
		}
		files = append(files, File{Name: Name(prefix, k, len(starts)), Layout: l, First: first})
	}
	return merged, files, nil
}

// Result reports what Write did.
type Result struct {
	// Plan is the executor's report for the whole model.
	Plan *plan.Result
	// Files are the files written, in order, and Sizes their sizes.
	Files []string
	Sizes []int64
}

// Write executes p once and writes it as the files Plan lays out, each
// through a temporary file: the files are renamed into place only when all
// are complete, so a failure leaves none of them.
func Write(ctx context.Context, p *plan.Plan, prefix string, lim Limit, opts plan.Options) (*Result, error) {
	merged, files, err := Plan(p, prefix, lim)
	if err != nil {
		return nil, err
	}
	outs := make([]*sink.Output, len(files))
	defer func() {
		for _, o := range outs {
			if o != nil {
				o.Abort()
			}
		}
	}()
	d := &demux{skip: merged.DataOffset, outs: make([]io.Writer, len(files))}
	res := &Result{}
	for k, f := range files {
		o, err := sink.Create(f.Name, false)
		if err != nil {
			return nil, err
		}
		outs[k] = o
		var hdr bytes.Buffer
		if _, err := gguf.NewWriterLayout(&hdr, f.Layout); err != nil {
			return nil, err
		}
		if _, err := o.Write(hdr.Bytes()); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		// The file's data is the merged data section from its first
		// tensor's offset: the same tensors padded to the same alignment.
		end := merged.DataSize
		if k+1 < len(files) {
			end = int64(merged.Tensors[files[k+1].First].Offset)
		}
		start := int64(0)
		if f.First < len(merged.Tensors) {
			start = int64(merged.Tensors[f.First].Offset)
		}
		if f.Layout.DataSize != end-start || f.Layout.Alignment != merged.Alignment {
			return nil, fmt.Errorf("split: file %d's data (%d bytes, alignment %d) does not match the model's bytes [%d, %d) (alignment %d)",
				k+1, f.Layout.DataSize, f.Layout.Alignment, start, end, merged.Alignment)
		}
		d.outs[k], d.ends = o, append(d.ends, end)
		res.Files = append(res.Files, f.Name)
		res.Sizes = append(res.Sizes, f.Layout.FileSize())
	}
	if res.Plan, err = p.Execute(ctx, d, opts); err != nil {
		return nil, err
	}
	// Everything is written: publish. Commit syncs each file first; if one
	// fails, the files already renamed are removed so that no partial set
	// remains under the final names.
	for k, o := range outs {
		if err := o.Commit(); err != nil {
			for _, done := range outs[:k] {
				done.Withdraw()
			}
			return nil, err
		}
	}
	return res, nil
}

// demux routes the bytes of the merged file written by the executor: the
// merged header is dropped (each file got its own), tensor data goes to the
// file that holds it.
type demux struct {
	skip int64 // merged header bytes still to drop
	outs []io.Writer
	ends []int64 // data-section offset where each file's data ends
	cur  int
	pos  int64 // data-section offset of the next byte
}

var errTooMuch = errors.New("split: more data than the files hold")

// next moves to the file that takes the byte at pos and returns its room.
func (d *demux) next() (int64, error) {
	for d.cur < len(d.ends) && d.pos >= d.ends[d.cur] {
		d.cur++
	}
	if d.cur == len(d.ends) {
		return 0, errTooMuch
	}
	return d.ends[d.cur] - d.pos, nil
}

// Write routes bytes of the merged file to the files that hold them.
func (d *demux) Write(p []byte) (int, error) {
	n := 0
	if d.skip > 0 {
		k := int(min(d.skip, int64(len(p))))
		d.skip -= int64(k)
		n, p = k, p[k:]
	}
	for len(p) > 0 {
		room, err := d.next()
		if err != nil {
			return n, err
		}
		k, err := d.outs[d.cur].Write(p[:min(int64(len(p)), room)])
		n, p, d.pos = n+k, p[k:], d.pos+int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadFrom hands tensor data to the file's own ReadFrom, so that a local
// copy stays a kernel copy (the executor gives one tensor's bytes at a time,
// as an *io.LimitedReader over the input file).
func (d *demux) ReadFrom(r io.Reader) (int64, error) {
	if d.skip > 0 {
		return io.Copy(struct{ io.Writer }{d}, r)
	}
	var total int64
	for {
		room, err := d.next()
		if err != nil {
			var one [1]byte
			if k, _ := io.ReadFull(r, one[:]); k > 0 {
				return total, errTooMuch
			}
			return total, nil
		}
		src := r
		if lr, ok := r.(*io.LimitedReader); !ok || lr.N > room {
			src = io.LimitReader(r, room)
		}
		var n int64
		if rf, ok := d.outs[d.cur].(io.ReaderFrom); ok {
			n, err = rf.ReadFrom(src)
		} else {
			n, err = io.Copy(d.outs[d.cur], src)
		}
		total, d.pos = total+n, d.pos+n
		if err != nil || n < room {
			return total, err
		}
	}
}
