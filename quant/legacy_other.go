//go:build !amd64 || purego

package quant

// Without assembly every block takes the Go path.

func q8Blocks(y []byte, x []float32, q81 bool) int { return 0 }

func symBlocks(y []byte, x []float32, bits int) int { return 0 }

func minBlocks(y []byte, x []float32, bits int) int { return 0 }

func q8_KBlocks(y []byte, x []float32) int { return 0 }
