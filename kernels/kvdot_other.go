//go:build !(amd64 || arm64) || purego

package kernels

import "github.com/ggufkit/gguf/gguf"

// Without assembly the KV cache's many-position functions run the one-row
// kernels position by position.

func keyScoresFast(gguf.Type, int, []byte, int, []byte, float32, []float32) (float32, bool) {
	return 0, false
}

func valueDotsF16Fast([]byte, []byte, int, int, []float32) int { return 0 }

func madQ8_0RowsFast([]float32, []byte, int, []float32) bool { return false }
