package hfremote

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// BenchmarkRemoteRead reads a 32 MiB file in 1 MiB chunks (as a build pulls
// tensor data) from the loopback Hub with 20 ms added to every request
// ("lat20ms"), and again with each connection also limited to 16 MB/s
// ("lat20ms-16MBps", like a CDN edge), at concurrency 1, 4 and 8, and the
// same bytes from a local file in the same run. Besides MB/s it reports
// x_local (remote throughput / local) and x_c1 (throughput / concurrency 1
// on the same link), so the effect of concurrency is visible whatever the
// machine's speed.
func BenchmarkRemoteRead(b *testing.B) {
	const size, chunk = 32 << 20, 1 << 20
	content := hubtest.PatternContent(99, size)

	local := filepath.Join(b.TempDir(), "m.gguf")
	data := want(b, content, 0, size)
	if err := os.WriteFile(local, data, 0o644); err != nil {
		b.Fatal(err)
	}
	lf, err := os.Open(local)
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close()

	var localRate float64 // bytes per second, set by the first sub-benchmark
	rate := func(b *testing.B) float64 { return float64(size) * float64(b.N) / b.Elapsed().Seconds() }

	b.Run("local", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, chunk)
		for b.Loop() {
			drain(b, io.NewSectionReader(lf, 0, size), buf)
		}
		localRate = rate(b)
	})
	for _, link := range []struct {
		name string
		opts hubtest.Options
	}{
		{"lat20ms", hubtest.Options{Latency: 20 * time.Millisecond}},
		{"lat20ms-16MBps", hubtest.Options{Latency: 20 * time.Millisecond, Bandwidth: 16e6}},
	} {
		s := startHub(b, link.opts)
		commit(b, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": content})
		var c1Rate float64
		for _, conc := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("%s-c%d", link.name, conc), func(b *testing.B) {
				f := open(b, "hf://org/repo/m.gguf", testOptions(s, nil))
				opt := RangeOptions{Concurrency: conc, ChunkSize: chunk}
				resolve := f.Stats().Requests
				b.SetBytes(size)
				buf := make([]byte, chunk)
				for b.Loop() {
					r := f.Ranges(context.Background(), []Range{{0, size}}, opt)
					drain(b, r, buf)
					r.Close()
				}
				got := rate(b)
				if conc == 1 {
					c1Rate = got
				}
				if localRate > 0 {
					b.ReportMetric(got/localRate, "x_local")
				}
				if c1Rate > 0 {
					b.ReportMetric(got/c1Rate, "x_c1")
				}
				b.ReportMetric(float64(f.Stats().Requests-resolve)/float64(b.N), "requests/op")
			})
		}
	}
}

// drain reads r to its end through buf, the same way for every source.
func drain(b *testing.B, r io.Reader, buf []byte) {
	for {
		_, err := r.Read(buf)
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
