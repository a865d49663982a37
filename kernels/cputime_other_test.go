//go:build !linux

package kernels

import "testing"

// loopCPU runs f b.N times (b.Loop); only Linux reports its thread's CPU
// time.
func loopCPU(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}
