package quant

import (
	"runtime"
	"testing"
	"time"
)

// copyMBps measures, in the same run, how fast a plain copy of n bytes goes:
// the baseline the throughputs are reported against. It takes the best of a
// few short rounds, so that a busy machine lowers it as little as possible.
func copyMBps(n int) float64 {
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	best := 0.0
	for range 5 {
		reps := 0
		start := time.Now()
		for time.Since(start) < 4*time.Millisecond {
			copy(dst, src)
			reps++
		}
		best = max(best, float64(n)*float64(reps)/time.Since(start).Seconds()/1e6)
	}
	return best
}

// reportVsCopy adds the ratio of the measured throughput (bytes per
// iteration over the loop's time) to a plain copy of the same bytes
// measured just before: "copy-ratio" 1 would be as fast as memcpy.
func reportVsCopy(b *testing.B, bytes int, base float64, start time.Time) {
	mbps := float64(bytes) * float64(b.N) / time.Since(start).Seconds() / 1e6
	b.ReportMetric(mbps/base, "copy-ratio")
}

// BenchmarkQuantize reports, per type, the input throughput (MB/s of
// float32 read) of QuantizeRows on GOMAXPROCS goroutines and its ratio to
// copying the same bytes. Run with -cpu 1,2 for one and all threads of a
// two-core machine.
func BenchmarkQuantize(b *testing.B) {
	const rowLen, rows = 4096, 64 // 1 MiB of float32: enough to split over threads
	x := randomRowsExp(21, rowLen*rows/256, 4)
	w := refImatrix(rowLen)
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
		b.Run(typ.String(), func(b *testing.B) {
			threads := runtime.GOMAXPROCS(0)
			base := copyMBps(4 * len(x))
			b.SetBytes(int64(4 * len(x)))
			start := time.Now()
			for b.Loop() {
				if err := QuantizeRows(typ, dst, x, rowLen, weights, threads); err != nil {
					b.Fatal(err)
				}
			}
			reportVsCopy(b, 4*len(x), base, start)
		})
	}
}

// BenchmarkDequantize reports the output throughput (MB/s of float32
// written) and its ratio to copying the same number of bytes.
func BenchmarkDequantize(b *testing.B) {
	x := randomRowsExp(22, 1024, 4)
	for _, typ := range dequantTypes() {
		q := make([]byte, rowBytes(typ, len(x)))
		if err := Quantize(typ, q, x, weightsFor(typ, len(x))); err != nil {
			b.Fatal(err)
		}
		y := make([]float32, len(x))
		b.Run(typ.String(), func(b *testing.B) {
			base := copyMBps(4 * len(x))
			b.SetBytes(int64(4 * len(x)))
			start := time.Now()
			for b.Loop() {
				if err := Dequantize(typ, y, q); err != nil {
					b.Fatal(err)
				}
			}
			reportVsCopy(b, 4*len(x), base, start)
		})
	}
}
