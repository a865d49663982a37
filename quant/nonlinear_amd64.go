//go:build amd64 && !purego

package quant

//go:noescape
func mxfp4BlocksAVX2(y *byte, x *float32, nb int) int

// mxfp4Blocks quantizes leading whole MXFP4 blocks with the AVX2 kernel and
// returns how many; it stops before a block whose exponent needs the log2f
// path, and does none without AVX2.
func mxfp4Blocks(y []byte, x []float32) int {
	nb := min(len(x)/32, len(y)/17)
	if !useAVX2 || nb == 0 {
		return 0
	}
	return mxfp4BlocksAVX2(&y[0], &x[0], nb)
}
