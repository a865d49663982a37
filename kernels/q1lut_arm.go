//go:build arm && !purego

package kernels

//go:noescape
func q1lutGroupNEONv7(grp, tab *byte, nb int, dw *float32, sumf *[q1lutRows]float32)

// q1lutNEON is the kernel of the armv7 neon set: arm64's byte tables
// (q1lutTablesLH) looked up with VTBL, and the generic float steps of the
// set's Q1_0 row kernel (the portable one, dotQ1_0Go).
var q1lutNEON = &q1lutKernel{tabBytes: q1lutTabBytesLH, tables: q1lutTablesLH, group: q1lutGroupAsm}

// q1lutChunk is the blocks whose weight scales q1lutGroupAsm converts
// at a time (armv7 NEON need not convert f16): 2 KiB of stack.
const q1lutChunk = 32

// q1lutGroupAsm is q1lutGroupNEONv7 with its bounds checked, over chunks
// of blocks whose weight scales it converts first.
func q1lutGroupAsm(n int, g, a, tab []byte, out []float32) {
	nb := n / 128
	if nb == 0 {
		clear(out[:q1lutRows])
		return
	}
	_, _, _ = g[nb*q1lutBlockBytes-1], tab[nb*q1lutTabBlockLH-1], out[q1lutRows-1]
	var sumf [q1lutRows]float32
	var dw [q1lutChunk * q1lutRows]float32
	for b0 := 0; b0 < nb; b0 += q1lutChunk {
		c := min(q1lutChunk, nb-b0)
		for b := 0; b < c; b++ {
			gb := g[(b0+b)*q1lutBlockBytes:]
			for r := range q1lutRows {
				dw[q1lutRows*b+r] = f16tab[le16(gb[2*r:])]
			}
		}
		q1lutGroupNEONv7(&g[b0*q1lutBlockBytes], &tab[b0*q1lutTabBlockLH], c, &dw[0], &sumf)
	}
	copy(out, sumf[:])
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
