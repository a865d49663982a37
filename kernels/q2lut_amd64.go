//go:build amd64 && !purego

package kernels

//go:noescape
func q2lutTablesAVX2(tab, a *byte, nb int)

//go:noescape
func q2lutLanesAVX2(grp, tab, a *byte, nb int, acc *[8 * q2lutRows]float32)

// q2lutTablesAsm is buildQ2LUTTables in AVX2.
func q2lutTablesAsm(tab, a []byte, nb int) {
	_, _ = tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1]
	q2lutTablesAVX2(&tab[0], &a[0], nb)
}

// q2lutGroupAVX2 is the group function of the sets with AVX2: the float
// steps of their Q2_K kernel (dotQ2_KAVX2, ggml's AVX2 q2_K_q8_K), so each
// row is that kernel's result bit for bit. That kernel keeps 8 float lanes,
// lane l taking every block's code bytes k = l mod 8 (columns with
// col%32 in 4l..4l+3) and its sub-blocks 2l, 2l+1's mins, each block
// added to them as FMAs (mins first); its result is the lanes' sum in
// ggml's hsum_float_8 order. q2lutLanesAVX2 keeps those lanes for the 16
// rows in acc, laid out as its class loop computes them (lanes 2c, 2c+1
// of rows 4q..4q+3 at 32c+8q: lane 2c's four, then lane 2c+1's).
func q2lutGroupAVX2(n int, g, a, tab []byte, out []float32) {
	nb := n / 256
	_, _, _, _ = g[nb*q2lutGroupBytes-1], tab[nb*q2lutTabBytes-1], a[nb*q8_KBytes-1], out[q2lutRows-1]
	var acc [8 * q2lutRows]float32
	q2lutLanesAVX2(&g[0], &tab[0], &a[0], nb, &acc)
	for r := range q2lutRows {
		lane := acc[8*(r/4)+r%4:]
		v := func(l int) float32 { return lane[32*(l/2)+4*(l%2)] }
		out[r] = ((v(0) + v(4)) + (v(2) + v(6))) + ((v(1) + v(5)) + (v(3) + v(7)))
	}
}

// installQ2LUT installs the q2lut kernel of the kernel set just installed:
// the AVX2 one with every set whose kernels are AVX2 (useAVX2: avx2 and
// vnni), the portable one otherwise, each with the float steps of the
// set's Q2_K kernel.
func installQ2LUT(string) {
	q2lutAsm = useAVX2
	q2lutKernel.group = q2lutGroupGo
	if q2lutAsm {
		q2lutKernel.group = q2lutGroupAVX2
	}
}
