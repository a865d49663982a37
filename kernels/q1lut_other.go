//go:build !(amd64 || arm64 || arm) || purego

package kernels

// installQ1LUT installs the portable lookup kernel with every set: where
// there is no assembly the Q1_0 row kernel is the portable one, whose
// float steps it takes, and the lookups are faster than its SWAR sums
// (BenchmarkQ1LUT: go/portable against row/portable).
func installQ1LUT(string) { q1lutSet = q1lutGo }
