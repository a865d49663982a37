//go:build !linux && !darwin

package pager

import (
	"errors"
	"os"
)

// openDirect refuses: the platform has no uncached reads this package knows.
func openDirect(string) (*os.File, error) {
	return nil, errors.New("not supported on this platform")
}
