package source

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/split"
)

// Options configure how sources are opened.
type Options struct {
	// Stdin is read for the source "-"; nil means os.Stdin.
	Stdin io.Reader
	// Token authenticates to the Hub; "" means the environment's (see
	// hfremote.TokenFromEnv). It overrides Remote.Token.
	Token string
	// Concurrency is the number of range requests a remote file keeps in
	// flight during a build; 0 means hfremote's default (4).
	Concurrency int
	// Stats, if set, also receives the counts of every remote file opened,
	// to total a run over several sources.
	Stats *hfremote.Stats
	// Remote is the base of the options remote files are opened with
	// (endpoint, HTTP client, retries); Token, Concurrency and Stats above
	// take precedence.
	Remote hfremote.Options
	// Check, if set, sees a remote file once it is resolved, before any of
	// its bytes are read: an error (a pinned sha256 the Hub's does not
	// match) fails the open having downloaded nothing.
	Check func(*hfremote.File) error
}

func (o Options) remote() hfremote.Options {
	r := o.Remote
	if o.Token != "" {
		r.Token, r.Anonymous = o.Token, false
	}
	if o.Concurrency > 0 {
		r.Concurrency = o.Concurrency
	}
	if o.Stats != nil {
		r.Stats = o.Stats
	}
	return r
}

// Source is an opened GGUF source.
type Source struct {
	// Name is the source as the user wrote it.
	Name string
	// Reader is set for random-access sources: files, remote files and
	// split models (whose Reader reads the merged file).
	Reader *gguf.Reader
	// Stream is set for sequential sources (stdin).
	Stream *gguf.StreamReader

	// raw reads a source of another format than GGUF (OpenRaw), of rawSize
	// bytes.
	raw     io.ReaderAt
	rawSize int64

	mu      sync.Mutex
	closers []io.Closer
	remotes []*remoteFile
	locals  []string // identities of the local files opened
	files   int
}

// File returns the decoded header; nil for a source opened by OpenRaw.
func (s *Source) File() *gguf.File {
	switch {
	case s.Reader != nil:
		return s.Reader.File
	case s.Stream != nil:
		return s.Stream.File
	}
	return nil
}

// Size returns the size of the source file, or -1 when unknown (a stream).
// For a split model it is the size of the merged file.
func (s *Source) Size() int64 {
	if s.Reader != nil {
		return s.Reader.Size()
	}
	if s.raw != nil {
		return s.rawSize
	}
	return -1
}

// Files returns the number of files the model is stored in: 1, or the
// number of files of a split model.
func (s *Source) Files() int { return max(s.files, 1) }

// Remote reports whether the source is read over the network.
func (s *Source) Remote() bool { return len(s.remotes) > 0 }

// Identity names the bytes a source reads, so that a resumed output
// notices a changed source: for each remote file its commit and ETag (the
// Hub's sha256 for LFS files), for each local file its path, size,
// modification time and device and inode (a file rewritten in place keeps
// its size but not its modification time; one replaced by another gets a
// new inode). It is "" for stdin.
func (s *Source) Identity() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Clone(s.locals)
	for _, r := range s.remotes {
		ids = append(ids, r.f.Name()+" "+r.f.Commit()+" "+r.f.ETag())
	}
	// A split model's files are opened concurrently, in any order.
	slices.Sort(ids)
	return strings.Join(ids, "\n")
}

// Close releases the source.
func (s *Source) Close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.closers = nil
	return first
}

// Stats are the costs of reading a remote source so far.
type Stats struct {
	hfremote.StatsSnapshot
	// Files is the number of remote files read (every file of a split
	// model counts).
	Files int
	// Verified is how many of them a build read whole and found equal to
	// the checksum the Hub published.
	Verified int
}

// String formats the counts in one line, for --stats.
func (s Stats) String() string {
	files := ""
	if s.Files > 1 {
		files = fmt.Sprintf("%d files, ", s.Files)
	}
	verified := ""
	if s.Verified > 0 {
		verified = fmt.Sprintf(", %d verified against the Hub's sha256", s.Verified)
	}
	return files + s.StatsSnapshot.String() + verified
}

// Stats returns what reading the source has cost; zero for a local source.
func (s *Source) Stats() Stats {
	var st Stats
	for _, r := range s.remotes {
		f := r.f.Stats()
		st.Requests += f.Requests
		st.HubRequests += f.HubRequests
		st.Bytes += f.Bytes
		st.WastedBytes += f.WastedBytes
		st.Retries += f.Retries
		st.ReResolves += f.ReResolves
		st.Files++
		if r.Verified() != "" {
			st.Verified++
		}
	}
	return st
}

// PlanInput returns the source as a plan input.
func (s *Source) PlanInput() *plan.Input {
	in := &plan.Input{Name: s.Name, File: s.File()}
	if s.Reader != nil {
		in.ReaderAt = s.Reader.ReaderAt()
	} else if s.raw != nil {
		in.ReaderAt = s.raw
	} else {
		in.Stream, in.StreamPos = s.Stream.Raw()
	}
	return in
}

// Pin is what a remote file resolved to.
type Pin struct {
	Name   string // the file as opened
	Commit string // the commit every read is pinned to ("" off the Hub)
	SHA256 string // the sha256 the Hub published ("" if none)
	Size   int64
}

// Pins returns what the source's remote files resolved to (nil for a
// local source), in the order opened.
func (s *Source) Pins() []Pin {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []Pin
	for _, r := range s.remotes {
		ps = append(ps, Pin{Name: r.f.Name(), Commit: r.f.Commit(), SHA256: r.f.SHA256(), Size: r.f.Size()})
	}
	return ps
}

// FetchCost returns the range requests and bytes a build reading ranges of
// a single remote file would cost from here on (the bytes read with the
// header are not fetched again); ok is false for local sources and split
// models, where it is not counted.
func (s *Source) FetchCost(ranges []plan.Range) (requests int, bytes int64, ok bool, err error) {
	s.mu.Lock()
	remotes := s.remotes
	s.mu.Unlock()
	if len(remotes) != 1 || s.Files() != 1 {
		return 0, 0, false, nil
	}
	requests, bytes, err = remotes[0].cost(ranges)
	return requests, bytes, err == nil, err
}

// Open opens spec and decodes its GGUF header (see the package doc for the
// forms of spec).
func Open(ctx context.Context, spec string, opts Options) (*Source, error) {
	if spec == "-" {
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		sr, err := gguf.NewStreamReader(in)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return &Source{Name: spec, Stream: sr}, nil
	}
	s := &Source{Name: spec}
	var first *gguf.Reader
	var err error
	var sibling func(name string) (split.Shard, error)
	if hfremote.IsRemote(spec) {
		first, sibling, err = s.openRemote(ctx, spec, opts.remote(), opts.Check)
	} else {
		first, sibling, err = s.openLocal(spec)
	}
	if err == nil {
		err = s.openModel(first, sibling)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenRaw opens spec, a local path or a remote file (not stdin, not a
// split model), as a file of another format than GGUF: header decodes its
// header from r (for a remote file each ReadAt is then one range request,
// as the GGUF decoder's are), and the Source has no File; its PlanInput
// reads its bytes (fetched ahead, in order, for a remote file), and it
// counts in Stats, Identity and Pins as a GGUF source does.
func OpenRaw(ctx context.Context, spec string, opts Options, header func(r io.ReaderAt, size int64) error) (*Source, error) {
	if spec == "-" {
		return nil, fmt.Errorf("stdin: this input must be a file or a remote file")
	}
	s := &Source{Name: spec}
	err := s.openRaw(ctx, spec, opts, header)
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Source) openRaw(ctx context.Context, spec string, opts Options, header func(r io.ReaderAt, size int64) error) error {
	if !hfremote.IsRemote(spec) {
		f, size, err := s.openFile(spec, "a file")
		if err != nil {
			return err
		}
		s.raw, s.rawSize = f, size
	} else {
		o := opts.remote()
		f, err := hfremote.Open(ctx, spec, o)
		if err != nil {
			return err
		}
		if opts.Check != nil {
			if err := opts.Check(f); err != nil {
				f.Close()
				return err
			}
		}
		rf := newRemoteFile(ctx, f, hfremote.RangeOptions{Concurrency: o.Concurrency})
		s.track(rf, rf)
		s.raw, s.rawSize = rf, f.Size()
		defer rf.headerDone()
	}
	if err := header(s.raw, s.rawSize); err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	return nil
}

// track records what Close must close (and, for remote files, what Stats
// counts); the files of a split model are opened concurrently.
func (s *Source) track(c io.Closer, rf *remoteFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, c)
	if rf != nil {
		s.remotes = append(s.remotes, rf)
	}
}

func shard(name string, r *gguf.Reader) split.Shard {
	return split.Shard{Name: name, R: r.ReaderAt(), File: r.File}
}

// openFile opens local file p (what: what it must be, for the error a
// directory gets), recording it for Close and Identity.
func (s *Source) openFile(p, what string) (*os.File, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	s.track(f, nil)
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	s.locals = append(s.locals, fmt.Sprintf("%s %d %d %s", p, st.Size(), st.ModTime().UnixNano(), fileID(st)))
	s.mu.Unlock()
	if st.IsDir() {
		return nil, 0, fmt.Errorf("%s: is a directory, not %s", p, what)
	}
	return f, st.Size(), nil
}

// openLocal opens a local file; sibling opens another file of a split
// model, named relative to it.
func (s *Source) openLocal(spec string) (*gguf.Reader, func(string) (split.Shard, error), error) {
	open := func(p string) (*gguf.Reader, error) {
		f, size, err := s.openFile(p, "a GGUF file")
		if err != nil {
			return nil, err
		}
		r, err := gguf.NewReader(f, size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return r, nil
	}
	first, err := open(spec)
	dir := filepath.Dir(spec)
	return first, func(name string) (split.Shard, error) {
		p := filepath.Join(dir, name)
		r, err := open(p)
		if err != nil {
			return split.Shard{}, err
		}
		return shard(p, r), nil
	}, err
}

// openRemote opens a remote file; sibling opens another file of its repo
// (or next to its URL) at the same pinned commit.
func (s *Source) openRemote(ctx context.Context, spec string, o hfremote.Options, check func(*hfremote.File) error) (*gguf.Reader, func(string) (split.Shard, error), error) {
	ropt := hfremote.RangeOptions{Concurrency: o.Concurrency}
	decode := func(f *hfremote.File) (*gguf.Reader, error) {
		rf := newRemoteFile(ctx, f, ropt)
		s.track(rf, rf)
		r, err := gguf.NewReader(rf, f.Size())
		rf.headerDone()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		return r, nil
	}
	f, err := hfremote.Open(ctx, spec, o)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(f); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	first, err := decode(f)
	return first, func(name string) (split.Shard, error) {
		g, err := f.OpenSibling(ctx, name)
		if err != nil {
			return split.Shard{}, err
		}
		r, err := decode(g)
		if err != nil {
			return split.Shard{}, err
		}
		return shard(g.Name(), r), nil
	}, err
}

// openModel sets the source's reader: the file itself, or, for the first
// file of a split model, the merged model over all its files.
func (s *Source) openModel(first *gguf.Reader, sibling func(string) (split.Shard, error)) error {
	info, isSplit, err := split.ReadInfo(first.Metadata)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	if !isSplit {
		s.files, s.Reader = 1, first
		return nil
	}
	prefix, no, count, named := split.ParseName(fileName(s.Name))
	switch {
	case info.No != 0 && named:
		return fmt.Errorf("%s is file %d of %d of a split model: open the first one, %s", s.Name, info.No+1, info.Count, split.Name(prefix, 0, count))
	case info.No != 0:
		return fmt.Errorf("%s is file %d of %d of a split model: open the first one", s.Name, info.No+1, info.Count)
	case !named || no != 0 || count != info.Count:
		return fmt.Errorf("%s is file 1 of %d of a split model, but its name is not PREFIX-00001-of-%05d.gguf, so the others cannot be found", s.Name, info.Count, info.Count)
	}
	shards := make([]split.Shard, info.Count)
	shards[0] = shard(s.Name, first)
	// The other files' headers are small (split keys and tensor infos):
	// open a few at once, each a resolve and one read when remote.
	var g errgroup.Group
	g.SetLimit(4)
	for k := 1; k < info.Count; k++ {
		g.Go(func() (err error) {
			shards[k], err = sibling(split.Name(prefix, k, count))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	m, err := split.Merge(shards)
	if err != nil {
		return err
	}
	s.files = info.Count
	s.Reader, err = gguf.NewReader(m, m.Size())
	return err
}

// fileName is the last element of a path or URL, without a query.
func fileName(spec string) string {
	if hfremote.IsRemote(spec) {
		if u, err := url.Parse(spec); err == nil && u.Path != "" {
			return path.Base(u.Path)
		}
		return path.Base(spec)
	}
	return filepath.Base(spec)
}
