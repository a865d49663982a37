//go:build arm && !purego

package kernels

//go:noescape
func q1lutGroupNEONv7(grp, tab *byte, nb int, out *float32)

// q1lutNEON is the kernel of the armv7 neon set: arm64's byte tables
// (q1lutTablesLH) looked up with VTBL, and the generic float steps of the
// set's Q1_0 row kernel (the portable one, dotQ1_0Go).
var q1lutNEON = &q1lutKernel{tabBytes: q1lutTabBytesLH, tables: q1lutTablesLH, group: q1lutGroupAsm}

// q1lutGroupAsm is q1lutGroupNEONv7 with its bounds checked.
func q1lutGroupAsm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroupNEONv7, 1, q1lutTabBlockLH, n, g, tab, out)
}

// installQ1LUT installs the lookup kernel of kernel set name: the NEON one
// with the neon set, the portable one with the portable set (both take the
// float steps of the portable Q1_0 row kernel, which both sets run).
func installQ1LUT(name string) {
	q1lutSet = q1lutGo
	if name == "neon" {
		q1lutSet = q1lutNEON
	}
}
