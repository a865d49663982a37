//go:build !amd64 || purego

package quant

// Without assembly every block takes the Go path.
func mxfp4Blocks(y []byte, x []float32) int { return 0 }

// iq4ScaleLanes has no lane kernel to run here.
func iq4ScaleLanes(xb, weight []float32, id, max float32, ntry int) (float32, bool) { return 0, false }
