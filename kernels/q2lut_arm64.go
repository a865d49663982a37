//go:build arm64 && !purego

package kernels

//go:noescape
func q2lutBlocksNEON(grp, tab, a *byte, nb int, acc *float32)

// q2lutBlocksAsm is q2lutBlocksGo in NEON (TBL lookups of 16 rows per
// instruction, the float steps of 4 rows per instruction): the same bits.
func q2lutBlocksAsm(g, tab, a []byte, nb int, acc []float32) {
	_, _, _, _ = g[nb*q2lutGroupBytes-1], tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1], acc[q2lutRows-1]
	q2lutBlocksNEON(&g[0], &tab[0], &a[0], nb, &acc[0])
}

//go:noescape
func q2lutTablesNEON(tab, a *byte, nb int)

// q2lutTablesAsm is buildQ2LUTTables in NEON.
func q2lutTablesAsm(tab, a []byte, nb int) {
	_, _ = tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1]
	q2lutTablesNEON(&tab[0], &a[0], nb)
}

// q2lutGroupNEON is the group function of the NEON sums.
func q2lutGroupNEON(n int, g, a, tab []byte, out []float32) {
	q2lutChunks(q2lutBlocksAsm, n, g, a, tab, out)
}

// installQ2LUT installs the q2lut kernel of kernel set name: the NEON sums
// with the neon and dotprod sets (TBL is ARMv8.0), whose Q2_K kernel (which
// SelectKernels gives the tail rows) computes the portable kernel's float
// steps, as the NEON sums do.
func installQ2LUT(name string) {
	q2lutAsm = name == "neon" || name == "dotprod"
	q2lutKernel.group = q2lutGroupGo
	if q2lutAsm {
		q2lutKernel.group = q2lutGroupNEON
	}
}
