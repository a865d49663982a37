//go:build amd64 && !purego

package quant

//go:noescape
func q8_0BlocksAVX2(y *byte, x *float32, nb int) int

//go:noescape
func symBlocksAVX2(y *byte, x *float32, nb int, bits int)

//go:noescape
func minBlocksAVX2(y *byte, x *float32, nb int, bits int) int

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

// symBlocks quantizes every whole Q4_0 (bits 4) or Q5_0 (bits 5) block of
// x into y with the AVX2 kernel and returns how many (none without AVX2).
func symBlocks(y []byte, x []float32, bits int) int {
	nb := min(len(x)/32, len(y)/(18+4*(bits-4)))
	if !useAVX2 || nb == 0 {
		return 0
	}
	symBlocksAVX2(&y[0], &x[0], nb, bits)
	return nb
}

// minBlocks quantizes leading whole Q4_1 (bits 4) or Q5_1 (bits 5) blocks
// with the AVX2 kernel and returns how many; it stops before a block whose
// min or max is zero or infinite, and does none without AVX2.
func minBlocks(y []byte, x []float32, bits int) int {
	nb := min(len(x)/32, len(y)/(20+4*(bits-4)))
	if !useAVX2 || nb == 0 {
		return 0
	}
	return minBlocksAVX2(&y[0], &x[0], nb, bits)
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
