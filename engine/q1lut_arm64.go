//go:build arm64 && !purego

package engine

// installQ1LUT installs the lookup kernel of kernel set name.
func installQ1LUT(string) { q1lutSet = nil }
