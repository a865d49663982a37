package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/internal/fixture"
)

// TestOutputNotRegular: -o into a FIFO streams the build in order, also
// when a file output would be written at offsets (a piped source with
// tensors reordered); the FIFO stays a FIFO. -o through a symlink replaces
// the link's target and keeps the link.
func TestOutputNotRegular(t *testing.T) {
	dir := t.TempDir()
	data := fixture.MoE().Build()
	model := filepath.Join(dir, "moe.gguf")
	os.WriteFile(model, data, 0o644)
	want := filepath.Join(dir, "want.gguf")
	mustRun(t, nil, "build", model, "--experts-last", "-o", want)
	wantBytes, _ := os.ReadFile(want)

	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	mustRun(t, bytes.NewReader(data), "build", "-", "--experts-last", "-o", fifo)
	select {
	case b := <-got:
		if !bytes.Equal(b, wantBytes) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of -o FILE", len(b), len(wantBytes))
		}
	case <-time.After(30 * time.Second):
		t.Error("the FIFO was never written")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}

	target := filepath.Join(dir, "target.gguf")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.gguf")
	os.Symlink("target.gguf", link)
	mustRun(t, nil, "quantize", model, link, "--type", "Q8_0")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	mustRun(t, nil, "quantize", model, filepath.Join(dir, "direct.gguf"), "--type", "Q8_0")
	a, _ := os.ReadFile(target)
	b, _ := os.ReadFile(filepath.Join(dir, "direct.gguf"))
	if !bytes.Equal(a, b) {
		t.Error("the symlink's target does not hold the output")
	}
}
