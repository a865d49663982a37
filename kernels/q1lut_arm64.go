//go:build arm64 && !purego

package kernels

//go:noescape
func q1lutGroupNEON(grp, tab *byte, nb int, out *float32)

// q1lutNEON is the kernel of the arm64 sets: byte tables (q1lutTablesLH)
// looked up with TBL, which every ARMv8 CPU has (the seeds' iPad A7 has no
// dotprod), and the generic float steps of their Q1_0 row kernels.
var q1lutNEON = &q1lutKernel{tabBytes: q1lutTabBytesLH, tables: q1lutTablesLH, group: q1lutGroupAsm}

// q1lutGroupAsm is q1lutGroupNEON with its bounds checked.
func q1lutGroupAsm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroupNEON, 1, q1lutTabBlockLH, n, g, tab, out)
}

// installQ1LUT installs the lookup kernel of kernel set name: the NEON one
// with both arm64 sets (TBL is ARMv8.0; their Q1_0 row kernels take the
// generic float steps, as it does), the portable one with the portable
// set.
func installQ1LUT(name string) {
	q1lutSet = q1lutGo
	if name == "neon" || name == "dotprod" {
		q1lutSet = q1lutNEON
	}
}
