//go:build !(amd64 || arm64) || purego

package engine

// q2lutBlocksAsm is q2lutBlocksGo where there is no q2lut assembly
// (q2lutAsm stays false).
func q2lutBlocksAsm(g, tab, a []byte, nb int, acc []float32) { q2lutBlocksGo(g, tab, a, nb, acc) }

// q2lutTablesAsm is buildQ2LUTTablesGo there.
func q2lutTablesAsm(tab, a []byte, nb int) { buildQ2LUTTablesGo(tab, a, nb) }

// installQ2LUT installs the portable q2lut kernel whatever the set.
func installQ2LUT(string) {}
