//go:build !unix

package engine

import (
	"errors"
	"os"
)

// mapFile reads the whole file into memory where the platform has no mmap.
func mapFile(f *os.File, size int64) ([]byte, func() error, bool, error) {
	b, unmap, err := readAll(f, size)
	return b, unmap, false, err
}

// releasePages does nothing: without mappings nothing is file-backed.
func releasePages([]byte, bool) {}

// adviseRandom does nothing: the file is in memory already.
func adviseRandom([]byte) {}

// lockMemory refuses: without mmap the weights are read into memory, which
// this platform cannot lock from Go.
func lockMemory([]byte) error { return errors.New("not supported on this platform") }

// unlockMemory has nothing to undo.
func unlockMemory([]byte) error { return nil }
