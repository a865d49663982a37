package sink

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func names(t *testing.T, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestCommitAndAbort: nothing is visible under the final name before
// Commit; Abort leaves nothing at all; Commit replaces an existing file.
func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.gguf")
	os.WriteFile(final, []byte("old"), 0o644)

	o, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("partial"))
	if got, _ := os.ReadFile(final); string(got) != "old" {
		t.Fatalf("final name changed before commit: %q", got)
	}
	o.Abort()
	if n := names(t, dir); len(n) != 1 || n[0] != "out.gguf" {
		t.Fatalf("after abort: %v", n)
	}

	o, err = Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte(strings.Repeat("x", 3<<20)))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	o.Abort() // after commit: no effect
	got, _ := os.ReadFile(final)
	if len(got) != 3<<20 {
		t.Fatalf("committed %d bytes", len(got))
	}
	st, _ := os.Stat(final)
	if st.Mode().Perm()&0o044 == 0 {
		t.Errorf("output mode %v is not readable by others", st.Mode())
	}
	if n := names(t, dir); len(n) != 1 {
		t.Fatalf("leftovers: %v", n)
	}
}

func TestRemoveAll(t *testing.T) {
	dir := t.TempDir()
	o, err := Create(filepath.Join(dir, "a.gguf"), false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("x"))
	RemoveAll()
	if err := o.Commit(); err == nil {
		t.Error("commit after RemoveAll succeeded")
	}
	if n := names(t, dir); len(n) != 0 {
		t.Fatalf("leftovers: %v", n)
	}
}

func TestCreateDirectory(t *testing.T) {
	if _, err := Create(t.TempDir(), false); err == nil {
		t.Fatal("a directory accepted as output")
	}
}

// readFIFO starts a reader of the FIFO at path and returns what it read
// once the writer closes it.
func readFIFO(t *testing.T, path string) <-chan []byte {
	got := make(chan []byte, 1)
	t.Cleanup(func() {
		// Unblock a reader still waiting for a writer (the FIFO was
		// never opened for writing).
		if f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	return got
}

// received waits for a FIFO reader's bytes; a writer that never opened the
// FIFO fails the test rather than hanging it.
func received(t *testing.T, got <-chan []byte) []byte {
	select {
	case b := <-got:
		return b
	case <-time.After(30 * time.Second):
		t.Error("the FIFO's reader got no writer")
		return nil
	}
}

// TestFIFO: a FIFO is written into, never renamed over: its reader gets
// every byte and the FIFO is still a FIFO.
func TestFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	got := readFIFO(t, path)
	o, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if o.WriterAt() != nil {
		t.Error("a FIFO offers writes at offsets")
	}
	o.Write([]byte("hello"))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := received(t, got); string(b) != "hello" {
		t.Errorf("reader got %q", b)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st.Mode(), err)
	}
}

// TestDevice: a character device (a copy of /dev/null's node) stays a
// device. Making the node needs root.
func TestDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "null")
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skip("mknod needs root:", err)
	}
	o, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write(bytes.Repeat([]byte("x"), 1<<20))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device was replaced: %v %v", st.Mode(), err)
	}
	if n := names(t, filepath.Dir(path)); len(n) != 1 {
		t.Errorf("leftovers: %v", n)
	}
}

// TestSymlink: a symlink to a regular file stays a link and its target is
// replaced; a dangling link creates its target; a link to a FIFO (through
// /proc/self/fd's magic links too) writes into the FIFO.
func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.gguf")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.gguf")
	os.Symlink("real.gguf", link)
	dangling := filepath.Join(dir, "dangling.gguf")
	os.Symlink("new.gguf", dangling)
	for _, c := range []struct{ link, target string }{{link, target}, {dangling, filepath.Join(dir, "new.gguf")}} {
		o, err := Create(c.link, false)
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("new"))
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(c.link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced: %v", c.link, err)
		}
		if b, _ := os.ReadFile(c.target); string(b) != "new" {
			t.Errorf("%s: target holds %q", c.target, b)
		}
		if o.Name() != c.link {
			t.Errorf("name %q, want %q", o.Name(), c.link)
		}
	}

	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := readFIFO(t, fifo)
	// Hold the FIFO open so /proc/self/fd/N names it, then link to that.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	magic := filepath.Join(dir, "stdout")
	os.Symlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), magic)
	o, err := Create(magic, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("through the fd"))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b := received(t, got); string(b) != "through the fd" {
		t.Errorf("reader got %q", b)
	}
	if st, err := os.Lstat(magic); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to /proc/self/fd was replaced: %v", err)
	}
}

// TestErrorsNameTheOutput: errors name the output as given, never its
// temporary.
func TestErrorsNameTheOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.gguf")
	_, err := Create(path, false)
	if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v", err)
	}
	o, err := Create("/dev/full", false)
	if err != nil {
		t.Skip(err)
	}
	defer o.Abort()
	if _, err := o.Write([]byte("x")); err == nil || !strings.Contains(err.Error(), "/dev/full") {
		t.Errorf("write error %v", err)
	}
}

// TestCreateRules: an output that is an input of the run under another
// spelling (a symlink, a hard link, a relative path) is refused even with
// Force and left as it was; Replace refuses an existing file unless Force
// and says so; a new name is not asked about.
func TestCreateRules(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "model.gguf")
	os.WriteFile(in, []byte("input"), 0o644)
	link, hard := filepath.Join(dir, "link"), filepath.Join(dir, "hard")
	os.Symlink("model.gguf", link)
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, out := range []string{in, link, hard, "./model.gguf"} {
		_, err := CreateWith(out, Options{Force: true, Inputs: []string{"-", "hf://x/y/z.gguf", in}})
		if err == nil || !strings.Contains(err.Error(), "an input of this run") {
			t.Errorf("%s: error %v", out, err)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "input" {
		t.Errorf("the input holds %q", b)
	}
	if n := names(t, dir); len(n) != 3 {
		t.Errorf("leftovers: %v", n)
	}

	old := filepath.Join(dir, "old.txt")
	os.WriteFile(old, []byte("notes"), 0o644)
	notMine := func(string) error { return fmt.Errorf("exists and is not a trace") }
	if _, err := CreateWith(old, Options{Replace: notMine}); err == nil || !strings.Contains(err.Error(), "exists and is not a trace (--force replaces it)") {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "notes" {
		t.Errorf("the refused file holds %q", b)
	}
	for _, c := range []struct {
		path string
		o    Options
	}{{old, Options{Replace: notMine, Force: true}}, {filepath.Join(dir, "new.txt"), Options{Replace: notMine}}} {
		o, err := CreateWith(c.path, c.o)
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("trace"))
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(c.path); string(b) != "trace" {
			t.Errorf("%s holds %q", c.path, b)
		}
	}
}

// TestSpool: with Spool a FIFO's reader gets nothing before Commit (a
// check that fails aborts with nothing sent), then every byte at Commit;
// the spool leaves no file.
func TestSpool(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	path := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	// A non-blocking reader sees what is in the FIFO at any moment.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	pending := func() string {
		b := make([]byte, 64)
		n, _ := unix.Read(fd, b)
		return string(b[:max(n, 0)])
	}
	for _, commit := range []bool{false, true} {
		o, err := CreateWith(path, Options{Spool: true})
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("checked"))
		if b := pending(); b != "" {
			t.Fatalf("the reader got %q before Commit", b)
		}
		want := ""
		if commit {
			if err := o.Commit(); err != nil {
				t.Fatal(err)
			}
			want = "checked"
		} else {
			o.Abort()
		}
		if b := pending(); b != want {
			t.Errorf("commit %v: the reader got %q, want %q", commit, b, want)
		}
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("leftovers: %v", n)
	}
}
