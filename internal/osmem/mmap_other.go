//go:build !unix

package osmem

import (
	"errors"
	"os"
)

// Map reads the first size bytes of f into memory (ReadAll) where the
// platform has no mmap; mapped is false.
func Map(f *os.File, size int64) ([]byte, func() error, bool, error) {
	b, unmap, err := ReadAll(f, size)
	return b, unmap, false, err
}

// DropPages does nothing: without mappings nothing is file-backed.
func DropPages([]byte, bool) {}

// AdviseRandom does nothing: the file is in memory already.
func AdviseRandom([]byte) {}

// Lock refuses: without mmap the weights are read into memory, which this
// platform cannot lock from Go.
func Lock([]byte) error { return errors.New("not supported on this platform") }

// Unlock has nothing to undo.
func Unlock([]byte) error { return nil }
