package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"
)

// ErrTerminal is returned when binary output would go to a terminal.
var ErrTerminal = errors.New("refusing to write binary data to a terminal (redirect stdout, or use --force)")

// Output is a destination being written.
type Output struct {
	w       io.Writer
	file    *os.File  // the temporary file, nil for stdout and streams
	stream  *os.File  // a non-regular target written straight into
	spool   *os.File  // with Options.Spool: holds a stream's bytes until Commit
	dst     io.Writer // with Options.Spool: where Commit copies the spool
	name    string    // the path as given, for messages ("-" for stdout)
	final   string    // where the temporary is renamed (a symlink's target)
	anon    bool      // the temporary (or spool) has no name yet (Linux O_TMPFILE)
	size    int64     // bytes written
	started int64     // bytes whose writeback has been started
	once    sync.Once
	done    bool
}

// live holds the temporaries in progress, so an interrupt handler can remove
// them (see RemoveAll).
var live sync.Map

// Options are the rules an output path is checked against before anything
// is written.
type Options struct {
	// Force writes binary data to a terminal, and replaces an existing
	// file that Replace refuses.
	Force bool
	// Text marks an output meant for people to read: a terminal is a
	// fine place for it.
	Text bool
	// Inputs are the local files the run reads. The output may not be one
	// of them under any spelling (a symlink, a hard link, another path to
	// it: compared by device and inode, as os.SameFile does), whatever
	// Force says: replacing what the run is made of loses it.
	Inputs []string
	// Replace, if set, is asked about an existing regular file at the
	// output path: an error says why it must not be replaced, and refuses
	// it unless Force. nil replaces any file (the user named it).
	Replace func(path string) error
	// Spool holds back every byte from a target written straight into
	// (stdout, a device, a FIFO) until Commit: the output goes to a
	// temporary file (in os.TempDir) first and is copied at Commit, so a
	// check made before Commit, such as a sha256, decides whether the
	// reader gets anything.
	Spool bool
}

// Create opens path for writing with no rules but force: see CreateWith.
func Create(path string, force bool) (*Output, error) {
	return CreateWith(path, Options{Force: force})
}

// CreateWith opens path for writing. For "-" it writes to stdout, refusing
// a terminal unless o.Force or o.Text is set. A regular file (new or
// existing) is written as a temporary and renamed into place by Commit; a
// symlink is followed and its target replaced, as cp does, never the link
// itself. Anything else that exists (a character or block device such as
// /dev/null, a FIFO, a socket) is opened and written straight into, in
// order, like stdout: renaming over it would replace a device node or leave
// a FIFO's reader with nothing. An existing regular file is first checked
// against o.Inputs and o.Replace.
func CreateWith(path string, o Options) (*Output, error) {
	if path == "-" {
		if !o.Force && !o.Text && term.IsTerminal(int(os.Stdout.Fd())) {
			return nil, ErrTerminal
		}
		return spooled(&Output{w: os.Stdout, name: "-"}, o)
	}
	final, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(final); err == nil {
		switch {
		case st.IsDir():
			return nil, fmt.Errorf("%s: is a directory", path)
		case !st.Mode().IsRegular():
			out, err := openStream(path, final, o.Force || o.Text)
			if err != nil {
				return nil, err
			}
			return spooled(out, o)
		}
		if err := o.check(path, st); err != nil {
			return nil, err
		}
	}
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	f, anon, err := createTemp(dir, base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, rootCause(err))
	}
	out := &Output{w: f, file: f, name: path, final: final, anon: anon}
	live.Store(out, struct{}{})
	return out, nil
}

// check applies the rules to st, the existing regular file at path.
func (o Options) check(path string, st os.FileInfo) error {
	for _, in := range o.Inputs {
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			if in == path {
				return fmt.Errorf("%s: is an input of this run: write the output to another name", path)
			}
			return fmt.Errorf("%s: is the same file as %s, an input of this run: write the output to another name", path, in)
		}
	}
	if o.Replace != nil && !o.Force {
		if err := o.Replace(path); err != nil {
			return fmt.Errorf("%s: %w (--force replaces it)", path, err)
		}
	}
	return nil
}

// spooled gives out, which writes straight into stdout or a stream, a
// temporary file that holds its bytes until Commit when o.Spool is set.
func spooled(out *Output, o Options) (*Output, error) {
	if !o.Spool {
		return out, nil
	}
	f, anon, err := createTemp(os.TempDir(), "gguf-spool")
	if err != nil {
		if out.stream != nil {
			out.stream.Close()
		}
		return nil, fmt.Errorf("%s: a temporary file to check the output in before it is sent: %w", out.name, err)
	}
	out.dst, out.w, out.spool, out.anon = out.w, f, f, anon
	live.Store(out, struct{}{})
	return out, nil
}

// maxLinks bounds the symlinks followed from an output path, as the
// kernel's ELOOP limit does.
const maxLinks = 40

// resolve follows path's symlinks to the file they name, which need not
// exist yet (a dangling link creates its target, as cp does). Paths
// without a symlink come back unchanged.
func resolve(path string) (string, error) {
	for i := 0; ; i++ {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		if i == maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(path, "/proc/") && !filepath.IsAbs(target) {
			// A magic link (/proc/self/fd/N to "pipe:[123]") names no
			// path: opening the link itself reaches the open file.
			return path, nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
}

// openStream opens a non-regular file for writing straight into it,
// refusing a terminal unless force is set.
func openStream(name, path string, force bool) (*Output, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if !force && term.IsTerminal(int(f.Fd())) {
		f.Close()
		return nil, ErrTerminal
	}
	return &Output{w: f, stream: f, name: name}, nil
}

// rootCause strips the paths from a *PathError or *LinkError, whose paths
// may be temporary names nobody asked for.
func rootCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Write writes to the output.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.wrote(int64(n))
	return n, o.fail(err)
}

// fail names the output as given in an error from writing it, not its
// temporary.
func (o *Output) fail(err error) error {
	if err == nil || o.file == nil && o.stream == nil && o.spool == nil {
		return err
	}
	return fmt.Errorf("%s: %w", o.name, rootCause(err))
}

// writebackChunk is how much written data may wait in the page cache before
// its write to disk is started. Starting writeback as the file grows
// overlaps the disk with the rest of the build, so the final fsync finds
// little left to do (a plain copy followed by sync writes everything at the
// end instead).
const writebackChunk = 32 << 20

// wrote records n more bytes and starts writeback of full chunks.
func (o *Output) wrote(n int64) {
	o.size += n
	if o.file != nil && o.size-o.started >= writebackChunk {
		startWriteback(o.file, o.started, o.size-o.started)
		o.started = o.size
	}
}

// WriterAt returns the output for writes at offsets, or nil when it must
// be written in order (stdout, a device, a FIFO). What is written through
// it is committed (synced and renamed) like what Write writes.
func (o *Output) WriterAt() io.WriterAt {
	if o.file == nil {
		return nil
	}
	return writerAt{o}
}

// writerAt writes at offsets into the temporary file.
type writerAt struct{ o *Output }

func (w writerAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.o.file.WriteAt(p, off)
	return n, w.o.fail(err)
}

// Name returns the path as given, or "-" for stdout.
func (o *Output) Name() string { return o.name }

// Renamed reports whether Commit put a new file in place (false for
// stdout, devices and FIFOs, which were written into).
func (o *Output) Renamed() bool { return o.file != nil }

// Commit syncs the temporary file and renames it to the final name. For
// stdout it flushes nothing and returns nil; a device or FIFO is closed.
// A spooled output (Options.Spool) is copied to its target first.
func (o *Output) Commit() error {
	if o.spool != nil {
		if o.done {
			return nil
		}
		_, err := io.Copy(o.dst, io.NewSectionReader(o.spool, 0, o.size))
		o.dropSpool()
		if o.stream != nil {
			if cerr := o.stream.Close(); err == nil {
				err = cerr
			}
		}
		return o.fail(err)
	}
	if o.stream != nil {
		o.done = true
		return o.fail(o.stream.Close())
	}
	if o.file == nil {
		return nil
	}
	defer live.Delete(o)
	if err := o.file.Sync(); err != nil {
		o.Abort()
		return fmt.Errorf("%s: sync: %w", o.name, rootCause(err))
	}
	if o.anon {
		// Give the unnamed file a name only now, then move it into place.
		if err := linkTemp(o.file, o.final); err != nil {
			o.Abort()
			return fmt.Errorf("%s: %w", o.name, err)
		}
		o.file.Close()
		o.done = true
		syncDir(o.final)
		return nil
	}
	if err := o.file.Close(); err != nil {
		o.Abort()
		return fmt.Errorf("%s: close: %w", o.name, rootCause(err))
	}
	if err := os.Rename(o.file.Name(), o.final); err != nil {
		o.Abort()
		return fmt.Errorf("%s: %w", o.name, rootCause(err))
	}
	o.done = true
	syncDir(o.final)
	return nil
}

// Withdraw removes an output Commit renamed into place, when a set of
// outputs (split files) must be published together and a later one failed.
// What it replaced is gone; a device, FIFO or stdout is left alone.
func (o *Output) Withdraw() {
	if o.file != nil && o.done {
		os.Remove(o.final)
	}
}

// syncDir syncs the directory of path so a rename survives a power cut.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

// createTempNamed is the portable temporary: a hidden name next to the
// output, readable like a normal output file once renamed.
func createTempNamed(dir, base string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// Abort removes the temporary file. It is safe to call after Commit (it
// does nothing then), so `defer out.Abort()` is the usual pattern.
func (o *Output) Abort() {
	if o.spool != nil {
		if !o.done {
			o.dropSpool()
			if o.stream != nil {
				o.stream.Close()
			}
		}
		return
	}
	if o.stream != nil && !o.done {
		o.done = true
		o.stream.Close()
		return
	}
	if o.file == nil || o.done {
		return
	}
	o.once.Do(func() {
		o.file.Close()
		if !o.anon {
			os.Remove(o.file.Name())
		}
		live.Delete(o)
	})
}

// dropSpool closes and removes a spooled output's temporary file.
func (o *Output) dropSpool() {
	o.once.Do(func() {
		o.done = true
		o.spool.Close()
		if !o.anon {
			os.Remove(o.spool.Name())
		}
		live.Delete(o)
	})
}

// RemoveAll aborts every output in progress: called on SIGINT/SIGTERM.
func RemoveAll() {
	live.Range(func(k, _ any) bool {
		k.(*Output).Abort()
		return true
	})
}

// ReadFrom lets the kernel copy file-to-file (copy_file_range) or
// file-to-pipe when the source allows it.
func (o *Output) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := o.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{o.w}, r)
	}
	o.wrote(n)
	return n, o.fail(err)
}
