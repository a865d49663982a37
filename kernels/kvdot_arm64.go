//go:build arm64 && !purego

package kernels

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func vdotsF16NEON(v, a *byte, vstride, m int, lanes *[8][4]float32)

//go:noescape
func madQ8_0RowsNEON(out *float32, v *byte, vstride, nb, npos int, p *float32)

//go:noescape
func scoresF16NEON(k, q *byte, kstride, hd, n4 int, lanes *[4]float32)

// keyScoresFast is KeyScores for F16 keys (heads of a multiple of 8) in
// NEON, four keys at a time and up to 64 a call, each key's lanes summed
// as dotF16Arm sums them; Q8_0 keys stay with the one-row kernels (NEON
// already, and a call per key costs less here than on amd64).
func keyScoresFast(t gguf.Type, hd int, k []byte, kstride int, qa []byte, scale float32, sc []float32) (float32, bool) {
	n := len(sc)
	if !useNEON || t != gguf.TypeF16 || hd%8 != 0 || hd == 0 || n < 4 {
		return 0, false
	}
	_, _ = k[(n-1)*kstride+2*hd-1], qa[2*hd-1]
	var lanes [64][4]float32
	mx := negInf
	i := 0
	for i+4 <= n {
		g := min(len(lanes), (n-i)&^3)
		scoresF16NEON(&k[i*kstride], &qa[0], kstride, hd, g/4, &lanes[0])
		for j, s := range lanes[:g] {
			v := ((s[0] + s[1]) + (s[2] + s[3])) * scale
			sc[i+j] = v
			mx = max(mx, v)
		}
		i += g
	}
	dot := kernels[gguf.TypeF16].dot
	for ; i < n; i++ {
		v := dot(hd, k[i*kstride:i*kstride+2*hd], qa) * scale
		sc[i] = v
		mx = max(mx, v)
	}
	return mx, true
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

// madQ8_0RowsFast is MadQ8_0RowsAdd in NEON (madQ8_0RowsBy): per block
// of 32 outputs, eight vectors of sums over every row, each product d*q
// then w*(d*q) rounded and added as MadQ8_0 does (FMUL, FMUL, FADD: no
// FMLA).
func madQ8_0RowsFast(out []float32, v []byte, vstride int, p []float32) bool {
	return useNEON && madQ8_0RowsBy(out, v, vstride, p, madQ8_0RowsNEON)
}
