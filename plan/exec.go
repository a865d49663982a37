package plan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/ggufkit/gguf/gguf"
)

// Options tune Execute.
type Options struct {
	// Progress, if set, is called with the bytes written so far as the
	// output grows (about every MiB) and once at the end.
	Progress func(written, total int64)
	// SpoolDir is where a stream input spools bytes needed out of order
	// ("" = the system temporary directory).
	SpoolDir string
	// Have, if set, names the tensors (by index) whose bytes and padding
	// the output already holds, from an interrupted run: ExecuteAt neither
	// fetches nor writes them. Execute ignores it.
	Have func(tensor int) bool
	// Wrote, if set, is called by ExecuteAt once a tensor and its padding
	// are written (a resumable output journals them); an error stops the
	// execution.
	Wrote func(tensor int) error
}

// Result reports what Execute did.
type Result struct {
	Layout  *gguf.File
	Written int64
	// Read is the number of input bytes consumed, per input name.
	Read map[string]int64
	// Spooled is the number of stream bytes that had to be kept on disk
	// because the output needs them after the point where they arrive.
	Spooled int64
}

// Execute lays the plan out and writes the file to w in one pass, front
// to back (w may be a pipe).
func (p *Plan) Execute(ctx context.Context, w io.Writer, opts Options) (*Result, error) {
	layout, err := p.Layout()
	if err != nil {
		return nil, err
	}
	total := layout.FileSize()
	cw := newProgressWriter(w, total, opts.Progress)
	gw, err := gguf.NewWriterLayout(cw, layout)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(p.Tensors))
	for i := range order {
		order[i] = i
	}
	ex, err := p.openFetchers(ctx, order, opts)
	if err != nil {
		return nil, err
	}
	defer ex.close()
	for _, i := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := &p.Tensors[i]
		if err := t.Src.Produce(ctx, ex.next(t), gw); err != nil {
			return nil, fmt.Errorf("tensor %q (%s): %w", t.Info.Name, t.Src.Describe(), err)
		}
		if gw.Current() <= i {
			return nil, fmt.Errorf("tensor %q (%s): producer wrote fewer bytes than the tensor's %d", t.Info.Name, t.Src.Describe(), layout.Tensors[i].Size())
		}
	}
	if err := gw.Close(); err != nil {
		return nil, err
	}
	if err := cw.Flush(); err != nil {
		return nil, err
	}
	return ex.result(layout, gw.Written(), opts), nil
}

// execution holds the fetchers of a plan's inputs while it runs.
type execution struct {
	fetchers map[*Input]fetcher
}

// openFetchers opens one fetcher per input, fed the input's ranges in the
// order the tensors will be produced (order lists tensor indexes).
func (p *Plan) openFetchers(ctx context.Context, order []int, opts Options) (*execution, error) {
	ex := &execution{fetchers: map[*Input]fetcher{}}
	ranges := map[*Input][]Range{}
	var inputs []*Input
	for _, i := range order {
		in := p.Tensors[i].Src.Input()
		if in == nil {
			continue
		}
		if _, ok := ranges[in]; !ok {
			inputs = append(inputs, in)
		}
		ranges[in] = append(ranges[in], p.Tensors[i].Src.Ranges()...)
	}
	for _, in := range inputs {
		f, err := newFetcher(ctx, in, ranges[in], opts)
		if err != nil {
			ex.close()
			return nil, err
		}
		ex.fetchers[in] = f
	}
	return ex, nil
}

// next returns the function a producer calls for its next range.
func (ex *execution) next(t *Tensor) func() (io.Reader, error) {
	in := t.Src.Input()
	if in == nil {
		return nil
	}
	f := ex.fetchers[in]
	ranges := t.Src.Ranges()
	k := 0
	return func() (io.Reader, error) {
		if k >= len(ranges) {
			return nil, fmt.Errorf("plan: producer of %q read more ranges than it declared", t.Info.Name)
		}
		k++
		return f.next(ranges[k-1])
	}
}

func (ex *execution) close() {
	for _, f := range ex.fetchers {
		f.close()
	}
}

// result reports a finished execution.
func (ex *execution) result(layout *gguf.File, written int64, opts Options) *Result {
	res := &Result{Layout: layout, Read: map[string]int64{}, Written: written}
	for in, f := range ex.fetchers {
		res.Read[in.Name] += f.consumed()
		if s, ok := f.(*streamFetcher); ok {
			res.Spooled += s.spooled
		}
	}
	if opts.Progress != nil {
		opts.Progress(written, layout.FileSize())
	}
	return res
}

// progressWriter buffers small writes (rows, padding) into 1 MiB writes,
// counts bytes and reports progress about every MiB. ReadFrom flushes and
// hands the reader to the destination, so kernel copies still work.
type progressWriter struct {
	w     io.Writer
	buf   *bufio.Writer
	n     int64
	last  int64
	total int64
	fn    func(int64, int64)
	// copyBuf serves ReadFrom of non-file readers.
	copyBuf []byte
}

func newProgressWriter(w io.Writer, total int64, fn func(int64, int64)) *progressWriter {
	return &progressWriter{w: w, buf: bufio.NewWriterSize(w, 1<<20), total: total, fn: fn}
}

func (p *progressWriter) tick() {
	if p.fn != nil && p.n-p.last >= 1<<20 {
		p.last = p.n
		p.fn(p.n, p.total)
	}
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.buf.Write(b)
	p.n += int64(n)
	p.tick()
	return n, err
}

func (p *progressWriter) ReadFrom(r io.Reader) (int64, error) {
	if !fromFile(r) {
		// Only a file source gains from the destination's ReadFrom (a kernel
		// copy); anything else goes through the buffer, with no allocation.
		if p.copyBuf == nil {
			p.copyBuf = make([]byte, 256<<10)
		}
		return io.CopyBuffer(struct{ io.Writer }{p}, r, p.copyBuf)
	}
	if err := p.buf.Flush(); err != nil {
		return 0, err
	}
	var n int64
	var err error
	if rf, ok := p.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{p.w}, r)
	}
	p.n += n
	p.tick()
	return n, err
}

// fromFile reports whether r reads a file directly, the case a destination
// file's ReadFrom turns into copy_file_range.
func fromFile(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	_, ok := r.(*os.File)
	return ok
}

// Flush writes out what is buffered.
func (p *progressWriter) Flush() error { return p.buf.Flush() }

// fetcher delivers an input's ranges in order.
type fetcher interface {
	next(r Range) (io.Reader, error)
	consumed() int64
	close()
}

func newFetcher(ctx context.Context, in *Input, ranges []Range, opts Options) (fetcher, error) {
	switch {
	case in.Stream != nil:
		return newStreamFetcher(in, ranges, opts)
	case in.ReaderAt == nil:
		return nil, fmt.Errorf("plan: input %q has no reader", in.Name)
	}
	if rs, ok := in.ReaderAt.(RangeStreamer); ok {
		return &streamerFetcher{rc: rs.StreamRanges(ctx, ranges), want: ranges}, nil
	}
	if f, ok := in.ReaderAt.(*os.File); ok {
		return &fileFetcher{f: f}, nil
	}
	return &readerAtFetcher{r: in.ReaderAt}, nil
}

// fileFetcher reads a local file by seeking it and limiting the read, the
// form os.File.ReadFrom turns into copy_file_range on Linux.
type fileFetcher struct {
	f *os.File
	n int64
}

func (f *fileFetcher) next(r Range) (io.Reader, error) {
	if _, err := f.f.Seek(r.Off, io.SeekStart); err != nil {
		return nil, err
	}
	f.n += r.Len
	// A bare LimitedReader over the file: gguf.Writer.ReadFrom hands it to
	// the output file, which turns it into copy_file_range. A file that ends
	// early shows up as a short tensor, which Execute reports.
	return &io.LimitedReader{R: f.f, N: r.Len}, nil
}
func (f *fileFetcher) consumed() int64 { return f.n }
func (f *fileFetcher) close()          {}

type readerAtFetcher struct {
	r io.ReaderAt
	n int64
}

func (f *readerAtFetcher) next(r Range) (io.Reader, error) {
	f.n += r.Len
	return &exactReader{lr: &io.LimitedReader{R: io.NewSectionReader(f.r, r.Off, r.Len), N: r.Len}, r: r}, nil
}
func (f *readerAtFetcher) consumed() int64 { return f.n }
func (f *readerAtFetcher) close()          {}

// exactReader turns a range that ends early into an error instead of a
// silently short tensor.
type exactReader struct {
	lr *io.LimitedReader
	r  Range
}

func (e *exactReader) Read(p []byte) (int, error) {
	n, err := e.lr.Read(p)
	if err == io.EOF && e.lr.N > 0 {
		return n, fmt.Errorf("input ended %d bytes before the end of range [%d, %d): %w", e.lr.N, e.r.Off, e.r.End(), io.ErrUnexpectedEOF)
	}
	return n, err
}

// streamerFetcher reads the concatenated ranges of a RangeStreamer.
type streamerFetcher struct {
	rc   io.ReadCloser
	want []Range
	k    int
	n    int64
}

func (f *streamerFetcher) next(r Range) (io.Reader, error) {
	if f.k >= len(f.want) || f.want[f.k] != r {
		return nil, errors.New("plan: ranges requested out of the announced order")
	}
	f.k++
	f.n += r.Len
	return &exactReader{lr: &io.LimitedReader{R: f.rc, N: r.Len}, r: r}, nil
}
func (f *streamerFetcher) consumed() int64 { return f.n }
func (f *streamerFetcher) close()          { f.rc.Close() }

// streamFetcher serves ranges from a forward-only stream. Ranges that come
// after the stream position are read as the stream passes them; the bytes of
// ranges needed after the stream has passed them are written, as they go
// by, at their own offsets into a sparse spool file and read back from there.
type streamFetcher struct {
	r       io.Reader
	pos     int64
	spool   *os.File
	keep    []Range // merged, sorted ranges of the stream to spool
	ki      int     // first keep range not wholly behind pos
	want    []Range
	fromSrc []bool
	k       int
	n       int64
	spooled int64
	buf     []byte
}

func newStreamFetcher(in *Input, ranges []Range, opts Options) (*streamFetcher, error) {
	f := &streamFetcher{r: in.Stream, pos: in.StreamPos, want: ranges, fromSrc: make([]bool, len(ranges))}
	p := in.StreamPos
	var keep []Range
	for i, r := range ranges {
		if r.Off >= p {
			f.fromSrc[i] = true
			p = r.End()
		} else {
			keep = append(keep, r)
		}
	}
	f.keep = mergeRanges(keep)
	if len(f.keep) > 0 {
		sp, err := os.CreateTemp(opts.SpoolDir, "gguf-spool-*")
		if err != nil {
			return nil, fmt.Errorf("stream input needs a spool file for data used out of order: %w", err)
		}
		os.Remove(sp.Name()) // unlinked: the space is freed even if we crash
		f.spool = sp
	}
	return f, nil
}

func mergeRanges(rs []Range) []Range {
	if len(rs) == 0 {
		return nil
	}
	s := append([]Range(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Off < s[j].Off })
	out := s[:1]
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r.Off <= last.End() {
			last.Len = max(last.End(), r.End()) - last.Off
			continue
		}
		out = append(out, r)
	}
	return out
}

// pass records stream bytes b, which start at file offset f.pos, into the
// spool where they are needed later.
func (f *streamFetcher) pass(b []byte) error {
	start, end := f.pos, f.pos+int64(len(b))
	for f.ki < len(f.keep) && f.keep[f.ki].End() <= start {
		f.ki++
	}
	for j := f.ki; j < len(f.keep) && f.keep[j].Off < end; j++ {
		lo, hi := max(start, f.keep[j].Off), min(end, f.keep[j].End())
		if _, err := f.spool.WriteAt(b[lo-start:hi-start], lo); err != nil {
			return fmt.Errorf("writing spool: %w", err)
		}
		f.spooled += hi - lo
	}
	f.pos = end
	return nil
}

func (f *streamFetcher) skipTo(off int64) error {
	if f.buf == nil {
		f.buf = make([]byte, 1<<20)
	}
	for f.pos < off {
		k, err := f.r.Read(f.buf[:min(int64(len(f.buf)), off-f.pos)])
		if perr := f.pass(f.buf[:k]); perr != nil {
			return perr
		}
		if err == io.EOF && f.pos < off {
			return fmt.Errorf("stream ended at offset %d, before offset %d: %w", f.pos, off, io.ErrUnexpectedEOF)
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

func (f *streamFetcher) next(r Range) (io.Reader, error) {
	if f.k >= len(f.want) || f.want[f.k] != r {
		return nil, errors.New("plan: ranges requested out of the announced order")
	}
	fromSrc := f.fromSrc[f.k]
	f.k++
	f.n += r.Len
	if !fromSrc {
		return &exactReader{lr: &io.LimitedReader{R: io.NewSectionReader(f.spool, r.Off, r.Len), N: r.Len}, r: r}, nil
	}
	if err := f.skipTo(r.Off); err != nil {
		return nil, err
	}
	return &exactReader{lr: &io.LimitedReader{R: &teeStream{f: f}, N: r.Len}, r: r}, nil
}

// teeStream reads the stream forward, spooling what is needed later.
type teeStream struct{ f *streamFetcher }

func (t *teeStream) Read(p []byte) (int, error) {
	n, err := t.f.r.Read(p)
	if perr := t.f.pass(p[:n]); perr != nil {
		return n, perr
	}
	return n, err
}

func (f *streamFetcher) consumed() int64 { return f.n }
func (f *streamFetcher) close() {
	if f.spool != nil {
		f.spool.Close()
	}
}
