package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// createTemp opens an unnamed file in dir (O_TMPFILE) when the file system
// supports it, else a hidden named temporary. It is opened for reading too:
// a spool (Options.Spool) is read back at Commit.
func createTemp(dir, base string) (*os.File, bool, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "."+base+".tmp")), true, nil
	}
	f, err := createTempNamed(dir, base)
	return f, false, err
}

// linkTemp gives the unnamed file f a temporary name next to final, then
// renames it over final (linkat cannot replace an existing file).
func linkTemp(f *os.File, final string) error {
	dir, base := filepath.Split(final)
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for i := 0; ; i++ {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), i))
		err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
		if err == unix.EEXIST && i < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("naming the output: %w", err)
		}
		if err := os.Rename(tmp, final); err != nil {
			os.Remove(tmp)
			return rootCause(err)
		}
		return nil
	}
}

// startWriteback asks the kernel to start writing a range of f to disk,
// without waiting for it.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
