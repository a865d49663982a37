//go:build arm64 && !purego

package kernels

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func vdotsF16NEON(v, a *byte, vstride, m int, lanes *[8][4]float32)

//go:noescape
func madQ8_0RowsNEON(out *float32, v *byte, vstride, nb, npos int, p *float32)

// keyScoresFast leaves the keys to the one-row kernels (arm64's are NEON
// already, and a call per key costs less there than on amd64).
func keyScoresFast(gguf.Type, int, []byte, int, []byte, float32, []float32) (float32, bool) {
	return 0, false
}

// valueDotsF16Fast computes ValueDotsF16 for the leading multiple of 8
// rows of out, eight rows at a time: their four lanes over the multiple
// of 8 leading positions in NEON (dotF16NEON's sums), the rest and the
// final adds as dotF16Arm does them. It returns how many rows it did.
func valueDotsF16Fast(pa, v []byte, vstride, n int, out []float32) int {
	m := n &^ 7
	rows := len(out) &^ 7
	if !useNEON || m == 0 || rows == 0 {
		return 0
	}
	pa = pa[:2*n]
	_ = v[(rows-1)*vstride+2*n-1]
	var lanes [8][4]float32
	for d := 0; d < rows; d += 8 {
		vdotsF16NEON(&v[d*vstride], &pa[0], vstride, m, &lanes)
		for r := range lanes {
			o := (d + r) * vstride
			out[d+r] = f16Sums(&lanes[r], v[o+2*m:o+2*n], pa[2*m:])
		}
	}
	return rows
}

// madQ8_0RowsFast is MadQ8_0RowsAdd in NEON: per block of 32 outputs,
// eight vectors of sums over every row, each product d*q then w*(d*q)
// rounded and added as MadQ8_0 does (FMUL, FMUL, FADD: no FMLA).
func madQ8_0RowsFast(out []float32, v []byte, vstride int, p []float32) bool {
	n, nb := len(p), len(out)/32
	if !useNEON || n == 0 || nb == 0 || len(out)%32 != 0 {
		return false
	}
	_ = v[(n-1)*vstride+nb*q8_0Bytes-1]
	madQ8_0RowsNEON(&out[0], &v[0], vstride, nb, n, &p[0])
	return true
}
