package engine

import "github.com/ggufkit/gguf/internal/osmem"

// PeakRSS returns the process's peak resident set size in bytes, 0 where
// the platform does not say: the runtime's memory as the commands report
// it. osmem measures it; the runtime names it so that its callers outside
// the module need not reach an internal package.
func PeakRSS() int64 { return osmem.PeakRSS() }

// MajorFaults returns the process's major page faults so far (page-ins
// from storage, the cost of weights that do not fit in RAM), 0 where the
// platform does not count them; measured by osmem.
func MajorFaults() int64 { return osmem.MajorFaults() }
