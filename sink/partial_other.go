//go:build !(linux || darwin || freebsd)

package sink

import "os"

// noFollow is 0 where there is no O_NOFOLLOW: OpenPartial's Lstat checks
// refuse a symbolic link instead.
const noFollow = 0

// lockFile does nothing where there is no flock.
func lockFile(*os.File) error { return nil }

// hasHole cannot tell holes here: it reports none.
func hasHole(*os.File, int64, int64) bool { return false }
