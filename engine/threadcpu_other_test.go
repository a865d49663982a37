//go:build !linux

package engine

import "time"

// threadCPU is 0 where the thread's CPU time is not read (the benchmarks
// then report no cpu-ns/op).
func threadCPU() time.Duration { return 0 }
