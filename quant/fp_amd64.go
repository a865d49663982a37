//go:build amd64 && !purego

package quant

//go:noescape
func fp16RowAVX2(y *byte, x *float32, n int)

// avx2Rows runs an 8-values-per-step AVX2 row kernel over the leading
// multiple of 8 of n values and returns how many; none without AVX2.
func avx2Rows(n int, run func(n int)) int {
	n &^= 7
	if !useAVX2 || n == 0 {
		return 0
	}
	run(n)
	return n
}

// fp16Row converts the leading multiple of 8 values of x to halves in y
// with the AVX2 kernel and returns how many. The kernel matched FP32ToFP16
// on all 2^32 inputs when it was written; the tests keep comparing it on
// the golden rows.
func fp16Row(y []byte, x []float32) int {
	return avx2Rows(min(len(x), len(y)/2), func(n int) { fp16RowAVX2(&y[0], &x[0], n) })
}

//go:noescape
func bf16RowAVX2(y *byte, x *float32, n int)

// bf16Row is fp16Row for bfloat16: the kernel matched FP32ToBF16 on all
// 2^32 inputs when it was written.
func bf16Row(y []byte, x []float32) int {
	return avx2Rows(min(len(x), len(y)/2), func(n int) { bf16RowAVX2(&y[0], &x[0], n) })
}

//go:noescape
func fp16DecodeAVX2(y *float32, x *byte, n int)

//go:noescape
func bf16DecodeAVX2(y *float32, x *byte, n int)

// fp16Decode converts the leading multiple of 8 halves of x into y with the
// AVX2 kernel (ggml's FP16-library algorithm, equal to fp16ToFP32 for all
// 65536 halves, which TestHalfDecodeKernels checks) and returns how many.
func fp16Decode(y []float32, x []byte) int {
	return avx2Rows(min(len(y), len(x)/2), func(n int) { fp16DecodeAVX2(&y[0], &x[0], n) })
}

// bf16Decode is fp16Decode for bfloat16.
func bf16Decode(y []float32, x []byte) int {
	return avx2Rows(min(len(y), len(x)/2), func(n int) { bf16DecodeAVX2(&y[0], &x[0], n) })
}
