package split

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
)

// Shard is one opened file of a split model.
type Shard struct {
	// Name is the file's path or URL, for messages.
	Name string
	// R reads the file; if it implements plan.RangeStreamer, the model's
	// StreamRanges uses it.
	R io.ReaderAt
	// File is its decoded header.
	File *gguf.File
}

// piece maps a tensor of the merged file to its bytes in a shard.
type piece struct {
	off   int64 // in the merged file
	size  int64
	shard int
	src   int64 // in the shard's file
}

// Model is a split model seen as the one file llama-gguf-split --merge
// would write. It is an io.ReaderAt of that file (and a plan.RangeStreamer),
// safe for concurrent ReadAt when the shards' readers are.
type Model struct {
	shards []Shard
	layout *gguf.File
	header []byte // the merged header and its padding
	pieces []piece
}

// Merge checks that shards are the files of one split model, in order, as
// llama.cpp's loader does (split.no of each, split.count, the total against
// split.tensors.count, no tensor twice) and returns the merged model.
func Merge(shards []Shard) (*Model, error) {
	if len(shards) == 0 {
		return nil, errors.New("split: no files")
	}
	first, ok, err := ReadInfo(shards[0].File.Metadata)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", shards[0].Name, err)
	case !ok:
		return nil, fmt.Errorf("%s: not part of a split model (no %s above 1)", shards[0].Name, gguf.KeySplitCount)
	case first.No != 0:
		return nil, fmt.Errorf("%s is file %d of %d of a split model: open the first one", shards[0].Name, first.No+1, first.Count)
	case first.Count != len(shards):
		return nil, fmt.Errorf("%s says the model has %d files, %d given", shards[0].Name, first.Count, len(shards))
	}
	md := shards[0].File.Metadata.Clone()
	// What llama-gguf-split --merge does: set split.count to 0 (ggml's set
	// removes the key and appends it), so the merged file is not split.
	md.Delete(gguf.KeySplitCount)
	md.Set(gguf.KeySplitCount, gguf.Uint16(0))

	var infos []gguf.TensorInfo
	var srcs []piece
	seen := map[string]string{}
	for i, s := range shards {
		info, ok, err := ReadInfo(s.File.Metadata)
		if i > 0 {
			switch {
			case err != nil:
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			case !ok:
				return nil, fmt.Errorf("%s: %s is missing: not a file of this split model", s.Name, gguf.KeySplitCount)
			case info.No != i:
				return nil, fmt.Errorf("%s: %s is %d, expected %d", s.Name, gguf.KeySplitNo, info.No, i)
			case info.Count != first.Count:
				return nil, fmt.Errorf("%s: %s is %d, the first file says %d", s.Name, gguf.KeySplitCount, info.Count, first.Count)
			}
		}
		for j := range s.File.Tensors {
			t := s.File.Tensors[j]
			if prev, dup := seen[t.Name]; dup {
				return nil, fmt.Errorf("tensor %q is in both %s and %s", t.Name, prev, s.Name)
			}
			seen[t.Name] = s.Name
			t.Dims = ggmlDims(t.Dims)
			infos = append(infos, t)
			srcs = append(srcs, piece{size: t.Size(), shard: i, src: s.File.DataOffset + int64(s.File.Tensors[j].Offset)})
		}
	}
	if len(infos) != first.Tensors {
		return nil, fmt.Errorf("%s: the %d files hold %d tensors, %s says %d", shards[0].Name, len(shards), len(infos), gguf.KeySplitTensors, first.Tensors)
	}
	layout, err := gguf.Layout(3, md, infos)
	if err != nil {
		return nil, fmt.Errorf("%s: merging: %w", shards[0].Name, err)
	}
	var hdr bytes.Buffer
	if _, err := gguf.NewWriterLayout(&hdr, layout); err != nil {
		return nil, err
	}
	for i := range srcs {
		srcs[i].off = layout.DataOffset + int64(layout.Tensors[i].Offset)
	}
	return &Model{shards: shards, layout: layout, header: hdr.Bytes(), pieces: srcs}, nil
}

// File returns the merged file's header.
func (m *Model) File() *gguf.File { return m.layout }

// Size returns the merged file's size.
func (m *Model) Size() int64 { return m.layout.FileSize() }

// Shards returns the files, in order.
func (m *Model) Shards() []Shard { return m.shards }

// segment is a part of a range of the merged file: header bytes, padding
// (zeros) or bytes of a shard.
type segment struct {
	mem   []byte // header bytes, or nil
	zeros int64  // padding, when mem is nil and shard < 0
	shard int
	r     plan.Range // in the shard, when shard >= 0
}

func (s segment) len() int64 {
	switch {
	case s.mem != nil:
		return int64(len(s.mem))
	case s.shard < 0:
		return s.zeros
	}
	return s.r.Len
}

// segments maps a range of the merged file to where its bytes are.
func (m *Model) segments(r plan.Range) ([]segment, error) {
	if r.Off < 0 || r.Len < 0 || r.End() > m.Size() {
		return nil, fmt.Errorf("split: range [%d, %d) is outside the %d-byte merged file", r.Off, r.End(), m.Size())
	}
	var out []segment
	off, end := r.Off, r.End()
	if off < int64(len(m.header)) {
		k := min(end, int64(len(m.header)))
		out = append(out, segment{mem: m.header[off:k], shard: -1})
		off = k
	}
	// The first tensor that ends after off.
	i := sort.Search(len(m.pieces), func(i int) bool { return m.pieces[i].off+m.pieces[i].size > off })
	for off < end {
		if i == len(m.pieces) || off < m.pieces[i].off {
			next := end
			if i < len(m.pieces) {
				next = min(end, m.pieces[i].off)
			}
			out = append(out, segment{zeros: next - off, shard: -1})
			off = next
			continue
		}
		p := m.pieces[i]
		if p.size == 0 {
			i++
			continue
		}
		k := min(end, p.off+p.size)
		out = append(out, segment{shard: p.shard, r: plan.Range{Off: p.src + off - p.off, Len: k - off}})
		off = k
		i++
	}
	return out, nil
}

// ReadAt implements io.ReaderAt over the merged file.
func (m *Model) ReadAt(p []byte, off int64) (int, error) {
	if off >= m.Size() {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), m.Size()-off))
	segs, err := m.segments(plan.Range{Off: off, Len: int64(n)})
	if err != nil {
		return 0, err
	}
	k := 0
	for _, s := range segs {
		l := int(s.len())
		switch {
		case s.mem != nil:
			copy(p[k:], s.mem)
		case s.shard < 0:
			clear(p[k : k+l])
		default:
			got, err := m.shards[s.shard].R.ReadAt(p[k:k+l], s.r.Off)
			if got < l {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return k + got, fmt.Errorf("%s: %w", m.shards[s.shard].Name, err)
			}
		}
		k += l
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// StreamRanges implements plan.RangeStreamer: the bytes of ranges of the
// merged file, in order. Each shard's ranges are read through one stream
// (the shard's own StreamRanges when it has one, so a remote shard fetches
// ahead), opened when first needed and closed when its last range is read.
func (m *Model) StreamRanges(ctx context.Context, ranges []plan.Range) io.ReadCloser {
	sr := &streamReader{m: m, ctx: ctx, streams: make([]*shardStream, len(m.shards))}
	for _, r := range ranges {
		segs, err := m.segments(r)
		if err != nil {
			sr.err = err
			return sr
		}
		sr.segs = append(sr.segs, segs...)
	}
	for _, s := range sr.segs {
		if s.shard >= 0 {
			if sr.streams[s.shard] == nil {
				sr.streams[s.shard] = &shardStream{}
			}
			ss := sr.streams[s.shard]
			ss.ranges = append(ss.ranges, s.r)
			ss.left += s.r.Len
		}
	}
	return sr
}

type shardStream struct {
	ranges []plan.Range
	left   int64 // bytes not yet read
	rc     io.ReadCloser
}

type streamReader struct {
	m       *Model
	ctx     context.Context
	segs    []segment
	k       int   // current segment
	done    int64 // bytes of it delivered
	streams []*shardStream
	err     error
}

// Read delivers the next bytes of the merged ranges.
func (r *streamReader) Read(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && r.err == nil {
		if r.k == len(r.segs) {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		s := r.segs[r.k]
		want := min(int64(len(p)), s.len()-r.done)
		var k int
		switch {
		case s.mem != nil:
			k = copy(p[:want], s.mem[r.done:])
		case s.shard < 0:
			clear(p[:want])
			k = int(want)
		default:
			k, r.err = r.fromShard(s.shard, p[:want])
		}
		n, p, r.done = n+k, p[k:], r.done+int64(k)
		if r.done == s.len() {
			r.k, r.done = r.k+1, 0
		}
		if k == 0 && r.err == nil {
			break
		}
	}
	if r.err != nil {
		return n, r.err
	}
	return n, nil
}

// fromShard reads the next bytes of a shard's stream.
func (r *streamReader) fromShard(i int, p []byte) (int, error) {
	ss := r.streams[i]
	if ss.rc == nil {
		sh := r.m.shards[i]
		if rs, ok := sh.R.(plan.RangeStreamer); ok {
			ss.rc = rs.StreamRanges(r.ctx, ss.ranges)
		} else {
			ss.rc = io.NopCloser(sectionsReader(sh.R, ss.ranges))
		}
	}
	k, err := io.ReadFull(ss.rc, p)
	ss.left -= int64(k)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.ErrUnexpectedEOF
		}
		return k, fmt.Errorf("%s: %w", r.m.shards[i].Name, err)
	}
	if ss.left == 0 {
		// Its last range is read: a stream that checks the whole file
		// reports a mismatch only at its end, so read that too.
		var one [1]byte
		if _, err := ss.rc.Read(one[:]); err != nil && err != io.EOF {
			return k, fmt.Errorf("%s: %w", r.m.shards[i].Name, err)
		}
		ss.rc.Close()
		ss.rc = nil
	}
	return k, nil
}

// sectionsReader reads ranges of r one after the other.
func sectionsReader(r io.ReaderAt, ranges []plan.Range) io.Reader {
	rs := make([]io.Reader, len(ranges))
	for i, g := range ranges {
		rs[i] = io.NewSectionReader(r, g.Off, g.Len)
	}
	return io.MultiReader(rs...)
}

// Close closes the shard streams still open.
func (r *streamReader) Close() error {
	for _, ss := range r.streams {
		if ss != nil && ss.rc != nil {
			ss.rc.Close()
			ss.rc = nil
		}
	}
	if r.err == nil {
		r.err = errors.New("split: stream closed")
	}
	return nil
}
