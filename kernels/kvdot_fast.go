//go:build (amd64 || arm64) && !purego

package kernels

// madQ8_0RowsBy runs MadQ8_0RowsAdd with the assembly kernel asm over
// whole blocks of 32 outputs, having checked the bounds it reads; false:
// nothing to do that way (no rows, or outputs not whole blocks).
func madQ8_0RowsBy(out []float32, v []byte, vstride int, p []float32, asm func(out *float32, v *byte, vstride, nb, n int, p *float32)) bool {
	n, nb := len(p), len(out)/32
	if n == 0 || nb == 0 || len(out)%32 != 0 {
		return false
	}
	_ = v[(n-1)*vstride+nb*q8_0Bytes-1]
	asm(&out[0], &v[0], vstride, nb, n, &p[0])
	return true
}
