//go:build !unix

package vocabselect

import "time"

// cpuTime is not measured here; the benchmarks then report wall-clock
// speeds only.
func cpuTime() time.Duration { return 0 }
