package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/term"
)

// ErrTerminal is returned when binary output would go to a terminal.
var ErrTerminal = errors.New("refusing to write binary data to a terminal (redirect stdout, or use --force)")

// Output is a destination being written.
type Output struct {
	w       io.Writer
	file    *os.File // the temporary file, nil for stdout
	final   string
	anon    bool  // the temporary has no name yet (Linux O_TMPFILE)
	size    int64 // bytes written
	started int64 // bytes whose writeback has been started
	once    sync.Once
	done    bool
}

// live holds the temporaries in progress, so an interrupt handler can remove
// them (see RemoveAll).
var live sync.Map

// Create opens path for writing. For "-" it writes to stdout, refusing a
// terminal unless force is set.
func Create(path string, force bool) (*Output, error) {
	if path == "-" {
		if !force && term.IsTerminal(int(os.Stdout.Fd())) {
			return nil, ErrTerminal
		}
		return &Output{w: os.Stdout}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	f, anon, err := createTemp(dir, base)
	if err != nil {
		return nil, err
	}
	o := &Output{w: f, file: f, final: path, anon: anon}
	live.Store(o, struct{}{})
	return o, nil
}

// Write writes to the output.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.wrote(int64(n))
	return n, err
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

// WriterAt returns the output's temporary file, for writes at offsets, or
// nil when the output is stdout. What is written through it is committed
// (synced and renamed) like what Write writes.
func (o *Output) WriterAt() io.WriterAt {
	if o.file == nil {
		return nil
	}
	return o.file
}

// Name returns the final path, or "-" for stdout.
func (o *Output) Name() string {
	if o.file == nil {
		return "-"
	}
	return o.final
}

// Commit syncs the temporary file and renames it to the final name. For
// stdout it flushes nothing and returns nil.
func (o *Output) Commit() error {
	if o.file == nil {
		return nil
	}
	defer live.Delete(o)
	if err := o.file.Sync(); err != nil {
		o.Abort()
		return fmt.Errorf("%s: sync: %w", o.final, err)
	}
	if o.anon {
		// Give the unnamed file a name only now, then move it into place.
		if err := linkTemp(o.file, o.final); err != nil {
			o.Abort()
			return fmt.Errorf("%s: %w", o.final, err)
		}
		o.file.Close()
		o.done = true
		syncDir(o.final)
		return nil
	}
	if err := o.file.Close(); err != nil {
		o.Abort()
		return fmt.Errorf("%s: close: %w", o.final, err)
	}
	if err := os.Rename(o.file.Name(), o.final); err != nil {
		o.Abort()
		return fmt.Errorf("%s: %w", o.final, err)
	}
	o.done = true
	syncDir(o.final)
	return nil
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
	return n, err
}
