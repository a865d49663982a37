//go:build amd64 && !purego

package kernels

// installTernary installs the portable kernels of the ternary layouts with
// every amd64 set. (A stand-in so that this branch builds alone: the AVX2
// kernels replace this file.)
func installTernary(string) {
	for e, k := range terKernels {
		k.dot = terPortable(e)
	}
}
