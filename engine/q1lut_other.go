//go:build !(amd64 || arm64) || purego

package engine

// installQ1LUT installs no table-lookup kernel where there is no assembly:
// the portable Q1_0 row kernel is faster than the portable lookups.
func installQ1LUT(string) { q1lutSet = nil }
