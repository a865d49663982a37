package plan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/ggufkit/gguf/gguf"
)

// Options tune Execute.
type Options struct {
	// Progress, if set, is called with the bytes processed so far and their
	// total: the input bytes the producers read (each range as often as it
	// is read), plus the output bytes of tensors made from no input. Input
	// rather than output bytes, so that the rate a caller derives is the
	// speed a file is processed at (a quantized output is a fraction of its
	// input). It is called with 0 before the first byte is written, then
	// about every MiB, inside big tensors too, and at the end with the
	// total, always on the goroutine running the execution.
	Progress func(done, total int64)
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
	order := make([]int, len(p.Tensors))
	for i := range order {
		order[i] = i
	}
	ex, err := p.openFetchers(ctx, order, opts)
	if err != nil {
		return nil, err
	}
	defer ex.close()
	cw := newOutputWriter(w, ex.tr)
	gw, err := gguf.NewWriterLayout(cw, layout)
	if err != nil {
		return nil, err
	}
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
		ex.produced(t)
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
	tr       *tracker
}

// openFetchers opens one fetcher per input, fed the input's ranges in the
// order the tensors will be produced (order lists tensor indexes), and
// reports the start of the execution.
func (p *Plan) openFetchers(ctx context.Context, order []int, opts Options) (*execution, error) {
	ex := &execution{fetchers: map[*Input]fetcher{}, tr: &tracker{fn: opts.Progress}}
	ranges := map[*Input][]Range{}
	var inputs []*Input
	for _, i := range order {
		t := &p.Tensors[i]
		in := t.Src.Input()
		if in == nil {
			ex.tr.total += t.Info.Size()
			continue
		}
		if _, ok := ranges[in]; !ok {
			inputs = append(inputs, in)
		}
		for _, r := range t.Src.Ranges() {
			ranges[in] = append(ranges[in], r)
			ex.tr.total += r.Len
		}
	}
	for _, in := range inputs {
		f, err := newFetcher(ctx, in, ranges[in], opts)
		if err != nil {
			ex.close()
			return nil, err
		}
		ex.fetchers[in] = f
	}
	ex.tr.report()
	return ex, nil
}

// produced counts a tensor made from no input once it is written.
func (ex *execution) produced(t *Tensor) {
	if t.Src.Input() == nil {
		ex.tr.add(t.Info.Size())
	}
}

// tracker counts the bytes an execution has processed (see
// Options.Progress) and reports them about every MiB.
type tracker struct {
	fn                func(done, total int64)
	done, total, last int64
}

func (t *tracker) add(n int64) {
	t.done += n
	if t.done-t.last >= 1<<20 {
		t.report()
	}
}

func (t *tracker) report() {
	if t.fn != nil {
		t.last = t.done
		t.fn(t.done, t.total)
	}
}

// counted is an input range being read, counted as it is read.
type counted struct {
	r  io.Reader
	tr *tracker
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.tr.add(int64(n))
	return n, err
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
		r, err := f.next(ranges[k-1])
		if err != nil {
			return nil, err
		}
		return &counted{r: r, tr: ex.tr}, nil
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
	ex.tr.done = ex.tr.total
	ex.tr.report()
	return res
}

// outputWriter buffers small writes (rows, padding) into 1 MiB writes.
// ReadFrom of a local file's range flushes and hands the file to the
// destination a chunk at a time, so kernel copies still work and progress
// is reported inside big tensors.
type outputWriter struct {
	w   io.Writer
	buf *bufio.Writer
	tr  *tracker
	// copyBuf serves ReadFrom of other readers.
	copyBuf []byte
}

func newOutputWriter(w io.Writer, tr *tracker) *outputWriter {
	return &outputWriter{w: w, buf: bufio.NewWriterSize(w, 1<<20), tr: tr}
}

func (p *outputWriter) Write(b []byte) (int, error) { return p.buf.Write(b) }

// kernelChunk is the most one kernel copy moves between progress reports.
const kernelChunk = 8 << 20

func (p *outputWriter) ReadFrom(r io.Reader) (int64, error) {
	rf, isRF := p.w.(io.ReaderFrom)
	limit, fr, ok := fileRange(r)
	if !ok || !isRF {
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
	var total int64
	for total < limit {
		want := min(limit-total, kernelChunk)
		n, err := rf.ReadFrom(&io.LimitedReader{R: fr.R, N: want})
		fr.N -= n
		if lr, ok := r.(*io.LimitedReader); ok {
			lr.N -= n
		}
		total += n
		p.tr.add(n)
		if err != nil || n < want {
			// A file that ends early shows up as a short tensor.
			return total, err
		}
	}
	return total, nil
}

// fileRange finds under r a range of a local file the destination can
// copy in the kernel: r is, or limits, the counted range of a bare file
// that fileFetcher returns. limit is how much of it r lets through.
func fileRange(r io.Reader) (limit int64, fr *io.LimitedReader, ok bool) {
	limit = math.MaxInt64
	if lr, ok := r.(*io.LimitedReader); ok {
		limit, r = lr.N, lr.R
	}
	c, ok := r.(*counted)
	if !ok {
		return 0, nil, false
	}
	fr, ok = c.r.(*io.LimitedReader)
	if !ok {
		return 0, nil, false
	}
	if _, ok := fr.R.(*os.File); !ok {
		return 0, nil, false
	}
	return min(limit, fr.N), fr, true
}

// Flush writes out what is buffered.
func (p *outputWriter) Flush() error { return p.buf.Flush() }

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
	// A bare LimitedReader over the file: outputWriter.ReadFrom finds it
	// under the counting wrapper and hands the file to the output file,
	// which turns it into copy_file_range. A file that ends early shows up
	// as a short tensor, which Execute reports.
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
