//go:build !linux && !darwin

package osmem

import (
	"errors"
	"os"
)

// OpenDirect refuses: the platform has no uncached reads this package
// knows.
func OpenDirect(string) (*os.File, error) {
	return nil, errors.New("not supported on this platform")
}
