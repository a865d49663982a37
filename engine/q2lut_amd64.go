//go:build amd64 && !purego

package engine

//go:noescape
func q2lutTablesAVX2(tab, a *byte, nb int)

//go:noescape
func q2lutBlocksAVX2(grp, tab, a *byte, nb int, acc *float32)

// q2lutBlocksAsm is q2lutBlocksGo in AVX2 (VPSHUFB table lookups, 16 rows
// and two code bytes per instruction, and the float steps of 8 rows per
// instruction): the same bits.
func q2lutBlocksAsm(g, tab, a []byte, nb int, acc []float32) {
	_, _, _, _ = g[nb*q2lutGroupBytes-1], tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1], acc[q2lutRows-1]
	q2lutBlocksAVX2(&g[0], &tab[0], &a[0], nb, &acc[0])
}

// q2lutTablesAsm is buildQ2LUTTables in AVX2.
func q2lutTablesAsm(tab, a []byte, nb int) {
	_, _ = tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1]
	q2lutTablesAVX2(&tab[0], &a[0], nb)
}

// installQ2LUT installs the q2lut kernel of kernel set name: the AVX2
// sums with the avx2 set. Tail rows always run the portable Q2_K kernel,
// which sums in the reference order (the AVX2 Q2_K kernel follows ggml's
// lanes instead).
func installQ2LUT(name string) {
	q2lutAsm = name == "avx2"
	q2lutKernel.dot = dotQ2_KGo
}
