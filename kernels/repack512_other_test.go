//go:build !amd64 || purego

package kernels

// narrowerPack: only amd64's vnni set has wider group kernels.
func narrowerPack(string) (string, func()) { return "", nil }
