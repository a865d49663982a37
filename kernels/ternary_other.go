//go:build (!amd64 && !arm64 && !arm) || purego

package kernels

// installTernary installs the ternary-layout kernels of kernel set name:
// without assembly every set runs the portable ones.
func installTernary(string) {
	for e, k := range terKernels {
		k.dot = terPortable(e)
	}
}
