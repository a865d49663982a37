//go:build !amd64 || purego

package quant

// Without assembly every value takes the Go path.
func fp16Row(y []byte, x []float32) int { return 0 }

func bf16Row(y []byte, x []float32) int { return 0 }

func fp16Decode(y []float32, x []byte) int { return 0 }

func bf16Decode(y []float32, x []byte) int { return 0 }
