//go:build amd64 && !purego

package kernels

// narrowerPack installs set (installed) without its 512-bit group kernels
// and returns the name to measure it by and a function that puts them
// back; restore is nil where the set has none.
func narrowerPack(set string) (name string, restore func()) {
	if set != "vnni" || !hasVNNI512 {
		return "", nil
	}
	hasVNNI512 = false
	_ = SelectKernels(set)
	return "vnni256", func() {
		hasVNNI512 = true
		_ = SelectKernels(set)
	}
}
