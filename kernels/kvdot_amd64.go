//go:build amd64 && !purego

package kernels

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func scoresF16AVX(k, q *byte, kstride, hd, npos int, scale float32, out *float32) float32

//go:noescape
func scoresQ8_0AVX2(k, q *byte, kstride, nb, npos int, scale float32, out *float32) float32

//go:noescape
func vdotsF16Lanes(v, a *byte, vstride, m int, lanes *[8][4]float32)

//go:noescape
func madQ8_0RowsAVX2(out *float32, v *byte, vstride, nb, npos int, p *float32)

// keyScoresFast is KeyScores in one assembly loop: F16 keys (heads of a
// multiple of 4) four at a time with dotF16Asm's lanes and final adds,
// Q8_0 keys with dotQ8_0AVX2's blocks and sum (the avx2 and vnni sets'
// Q8_0 dot).
func keyScoresFast(t gguf.Type, hd int, k []byte, kstride int, qa []byte, scale float32, sc []float32) (float32, bool) {
	n := len(sc)
	if !useAVX2 || n == 0 {
		return 0, false
	}
	switch {
	case t == gguf.TypeF16 && hd%4 == 0 && hd > 0:
		_, _ = k[(n-1)*kstride+2*hd-1], qa[2*hd-1]
		return scoresF16AVX(&k[0], &qa[0], kstride, hd, n, scale, &sc[0]), true
	case t == gguf.TypeQ8_0 && hd >= 32:
		nb := hd / 32
		_, _ = k[(n-1)*kstride+nb*q8_0Bytes-1], qa[nb*q8_0Bytes-1]
		return scoresQ8_0AVX2(&k[0], &qa[0], kstride, nb, n, scale, &sc[0]), true
	}
	return 0, false
}

// valueDotsF16Fast computes ValueDotsF16 for the leading multiple of 8
// rows of out, eight rows at a time: their four lanes each over the
// multiple of 4 leading positions in assembly (dotF16Lanes' sums), the
// rest and the final adds as dotF16Asm does them. It returns how many rows
// it did.
func valueDotsF16Fast(pa, v []byte, vstride, n int, out []float32) int {
	m := n &^ 3
	rows := len(out) &^ 7
	if !useAVX2 || m == 0 || rows == 0 {
		return 0
	}
	pa = pa[:2*n]
	_ = v[(rows-1)*vstride+2*n-1]
	var lanes [8][4]float32
	for d := 0; d < rows; d += 8 {
		vdotsF16Lanes(&v[d*vstride], &pa[0], vstride, m, &lanes)
		for r := range lanes {
			o := (d + r) * vstride
			out[d+r] = f16Sums(&lanes[r], v[o+2*m:o+2*n], pa[2*m:])
		}
	}
	return rows
}

// madQ8_0RowsFast is MadQ8_0RowsAdd in assembly (madQ8_0RowsBy): per
// block of 32 outputs, four vectors of sums over every row, each product
// d*q then w*(d*q) rounded and added as MadQ8_0 does (no fused
// multiply-add).
func madQ8_0RowsFast(out []float32, v []byte, vstride int, p []float32) bool {
	return useAVX2 && madQ8_0RowsBy(out, v, vstride, p, madQ8_0RowsAVX2)
}
