//go:build !(amd64 || arm64) || purego

package engine

// q2lutSumsAsm is q2lutSumsGo where there is no q2lut assembly (q2lutAsm
// stays false).
func q2lutSumsAsm(g, tab, a []byte, nb int, out []int32) { q2lutSumsGo(g, tab, a, nb, out) }

// q2lutTablesAsm is buildQ2LUTTablesGo there.
func q2lutTablesAsm(tab, a []byte, nb int) { buildQ2LUTTablesGo(tab, a, nb) }

// installQ2LUT installs the portable q2lut kernel whatever the set.
func installQ2LUT(string) {}
