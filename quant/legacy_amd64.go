//go:build amd64 && !purego

package quant

//go:noescape
func q8BlocksAVX2(y *byte, x *float32, nb int, q81 bool) int

//go:noescape
func symBlocksAVX2(y *byte, x *float32, nb int, bits int)

//go:noescape
func minBlocksAVX2(y *byte, x *float32, nb int, bits int) int

// avx2Blocks runs a whole-block AVX2 kernel over the nb blocks that fit
// both x (of blockLen values) and y (of blockBytes bytes) and returns how
// many it did; none without AVX2. run returns the count it stopped at.
func avx2Blocks(y []byte, x []float32, blockLen, blockBytes int, run func(y *byte, x *float32, nb int) int) int {
	nb := min(len(x)/blockLen, len(y)/blockBytes)
	if !useAVX2 || nb == 0 {
		return 0
	}
	return run(&y[0], &x[0], nb)
}

// q8Blocks quantizes leading whole Q8_0 (q81 false) or Q8_1 blocks of x
// into y with the AVX2 kernel and returns how many; it stops before a block
// holding a NaN.
func q8Blocks(y []byte, x []float32, q81 bool) int {
	bytes := 34
	if q81 {
		bytes = 36
	}
	return avx2Blocks(y, x, 32, bytes, func(y *byte, x *float32, nb int) int {
		return q8BlocksAVX2(y, x, nb, q81)
	})
}

// symBlocks quantizes every whole Q4_0 (bits 4) or Q5_0 (bits 5) block of
// x into y with the AVX2 kernel and returns how many.
func symBlocks(y []byte, x []float32, bits int) int {
	return avx2Blocks(y, x, 32, 18+4*(bits-4), func(y *byte, x *float32, nb int) int {
		symBlocksAVX2(y, x, nb, bits)
		return nb
	})
}

// minBlocks quantizes leading whole Q4_1 (bits 4) or Q5_1 (bits 5) blocks
// with the AVX2 kernel and returns how many; it stops before a block whose
// min or max is zero or infinite.
func minBlocks(y []byte, x []float32, bits int) int {
	return avx2Blocks(y, x, 32, 20+4*(bits-4), func(y *byte, x *float32, nb int) int {
		return minBlocksAVX2(y, x, nb, bits)
	})
}

//go:noescape
func q8_KBlocksAVX2(y *byte, x *float32, nb int)

// q8_KBlocks quantizes every whole Q8_K block of x into y with the AVX2
// kernel and returns how many.
func q8_KBlocks(y []byte, x []float32) int {
	return avx2Blocks(y, x, qkK, 292, func(y *byte, x *float32, nb int) int {
		q8_KBlocksAVX2(y, x, nb)
		return nb
	})
}
