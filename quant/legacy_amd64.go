//go:build amd64 && !purego

package quant

//go:noescape
func q8_0BlocksAVX2(y *byte, x *float32, nb int) int

//go:noescape
func q4_0BlocksAVX2(y *byte, x *float32, nb int)

// q8_0Blocks quantizes leading whole Q8_0 blocks of x into y with the AVX2
// kernel and returns how many; it stops before a block holding a NaN, and
// does none without AVX2.
func q8_0Blocks(y []byte, x []float32) int {
	nb := min(len(x)/32, len(y)/34)
	if !useAVX2 || nb == 0 {
		return 0
	}
	return q8_0BlocksAVX2(&y[0], &x[0], nb)
}

// q4_0Blocks quantizes every whole Q4_0 block of x into y with the AVX2
// kernel and returns how many (none without AVX2).
func q4_0Blocks(y []byte, x []float32) int {
	nb := min(len(x)/32, len(y)/18)
	if !useAVX2 || nb == 0 {
		return 0
	}
	q4_0BlocksAVX2(&y[0], &x[0], nb)
	return nb
}

//go:noescape
func q8_KBlocksAVX2(y *byte, x *float32, nb int)

// q8_KBlocks quantizes every whole Q8_K block of x into y with the AVX2
// kernel and returns how many (none without AVX2).
func q8_KBlocks(y []byte, x []float32) int {
	nb := min(len(x)/qkK, len(y)/292)
	if !useAVX2 || nb == 0 {
		return 0
	}
	q8_KBlocksAVX2(&y[0], &x[0], nb)
	return nb
}
