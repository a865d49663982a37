package quant

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// copyMBps measures, in the same run, how fast a plain copy of n bytes goes:
// the baseline the quantization throughput is reported against.
func copyMBps(n int) float64 {
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	reps := 0
	start := time.Now()
	for time.Since(start) < 20*time.Millisecond {
		copy(dst, src)
		reps++
	}
	return float64(n) * float64(reps) / time.Since(start).Seconds() / 1e6
}

// BenchmarkQuantize reports, per type and thread count, the input
// throughput (MB/s of float32 read) and its ratio to copying the same bytes
// ("copy-ratio": 1 would be as fast as memcpy).
func BenchmarkQuantize(b *testing.B) {
	const rowLen, rows = 4096, 16
	x := randomRowsExp(21, rowLen*rows/256, 4)
	w := refImatrix(rowLen)
	base := copyMBps(4 * len(x))
	for _, typ := range allQuantTypes() {
		var weights []float32
		if RequiresImatrix(typ) {
			weights = w
		}
		dst := make([]byte, rowBytes(typ, len(x)))
		// Build lattices outside the timed loop.
		if err := QuantizeRows(typ, dst[:rowBytes(typ, rowLen)], x[:rowLen], rowLen, weights, 1); err != nil {
			b.Fatal(err)
		}
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/threads=%d", typ, threads), func(b *testing.B) {
				b.SetBytes(int64(4 * len(x)))
				start := time.Now()
				for b.Loop() {
					if err := QuantizeRows(typ, dst, x, rowLen, weights, threads); err != nil {
						b.Fatal(err)
					}
				}
				mbps := float64(4*len(x)) * float64(b.N) / time.Since(start).Seconds() / 1e6
				b.ReportMetric(mbps/base, "copy-ratio")
			})
		}
	}
}

// BenchmarkDequantize reports the output throughput (MB/s of float32
// written) and its ratio to copying the same number of bytes.
func BenchmarkDequantize(b *testing.B) {
	x := randomRowsExp(22, 1024, 4)
	base := copyMBps(4 * len(x))
	for _, typ := range dequantTypes() {
		q := make([]byte, rowBytes(typ, len(x)))
		if err := Quantize(typ, q, x, weightsFor(typ, len(x))); err != nil {
			b.Fatal(err)
		}
		y := make([]float32, len(x))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			start := time.Now()
			for b.Loop() {
				if err := Dequantize(typ, y, q); err != nil {
					b.Fatal(err)
				}
			}
			mbps := float64(4*len(x)) * float64(b.N) / time.Since(start).Seconds() / 1e6
			b.ReportMetric(mbps/base, "copy-ratio")
		})
	}
}
