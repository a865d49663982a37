//go:build (!amd64 && !arm64 && !arm) || purego

package kernels

// installTernary installs the portable kernels of the ternary layouts with
// every set: there is no assembly for them here.
func installTernary(string) {
	for e, k := range terKernels {
		k.dot = terPortable(e)
	}
}
