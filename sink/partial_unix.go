//go:build linux || darwin || freebsd

package sink

import (
	"os"

	"golang.org/x/sys/unix"
)

// noFollow makes an open fail on a symbolic link.
const noFollow = unix.O_NOFOLLOW

// lockFile takes an exclusive advisory lock on f, failing at once if
// another process holds one; closing f releases it.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// hasHole reports whether f's range [off, off+n) holds a hole (SEEK_HOLE:
// bytes never written, which read as zeros). A file system that cannot
// tell reports none.
func hasHole(f *os.File, off, n int64) bool {
	h, err := unix.Seek(int(f.Fd()), off, unix.SEEK_HOLE)
	return err == nil && h < off+n
}
