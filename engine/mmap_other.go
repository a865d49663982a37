//go:build !unix

package engine

import (
	"errors"
	"os"
)

// mapFile reads the whole file into memory where the platform has no mmap.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	return readAll(f, size)
}

// adviseRandom does nothing: the file is in memory already.
func adviseRandom([]byte) {}

// lockMemory refuses: without mmap the weights are read into memory, which
// this platform cannot lock from Go.
func lockMemory([]byte) error { return errors.New("not supported on this platform") }
