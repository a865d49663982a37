//go:build !(amd64 || arm64) || purego

package kernels

// q2lutTablesAsm is buildQ2LUTTablesGo where there is no q2lut assembly
// (q2lutAsm stays false).
func q2lutTablesAsm(tab, a []byte, nb int) { buildQ2LUTTablesGo(tab, a, nb) }

// installQ2LUT keeps the portable q2lut kernel whatever the set: the
// portable Q2_K kernel's float steps, which are the only Q2_K ones here.
func installQ2LUT(string) {}
