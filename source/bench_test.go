package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/headergen"
	"github.com/ggufkit/gguf/internal/testfiles"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/source"
)

// buildTo opens spec and writes an identity build of it to out, returning
// the time from open to the last byte written.
func buildTo(b *testing.B, spec string, o source.Options, out *os.File) time.Duration {
	t0 := time.Now()
	src, err := source.Open(context.Background(), spec, o)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if _, err := out.Seek(0, 0); err != nil {
		b.Fatal(err)
	}
	in := &plan.Input{Name: spec, File: src.File(), ReaderAt: src.Reader.ReaderAt()}
	if _, err := plan.Identity(in).Execute(context.Background(), out, plan.Options{}); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkRemoteBuild rebuilds a 64 MiB GGUF file (16 tensors) from the
// loopback Hub, whose answers each wait 20 ms and whose CDN sends at most
// 32 MiB/s per connection (a CDN edge's per-connection rate), with 1, 4 and
// 8 range requests in flight; in the same iteration it rebuilds the same
// file from a local copy. Both times run from opening the source to the
// last byte written to a file, the remote one including the resolve, the
// header reads and the sha256 check of the whole file. Reported:
// remote_MB/s, local_MB/s and x_local_time = remote time / local time.
func BenchmarkRemoteBuild(b *testing.B) {
	f, err := headergen.Spec{Name: "bench", Tensors: 16, NameLen: 24, DataSize: 64 << 20}.Build()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	local := filepath.Join(dir, "model.gguf")
	buf := make([]byte, f.Size)
	f.ReadAt(buf, 0)
	if err := os.WriteFile(local, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	hub := testfiles.Hub(b, hubtest.Options{Latency: 20 * time.Millisecond, Bandwidth: 32 << 20},
		"org/bench", map[string]hubtest.Content{"model.gguf": hubtest.Bytes(buf)})
	out, err := os.Create(filepath.Join(dir, "out.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	remoteOpts := options(hub)
	buildTo(b, "hf://org/bench/model.gguf", remoteOpts, out) // the Hub hashes the file once
	for _, c := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			o := remoteOpts
			o.Concurrency = c
			var localT, remoteT time.Duration
			b.SetBytes(f.Size)
			for b.Loop() {
				localT += buildTo(b, local, source.Options{}, out)
				remoteT += buildTo(b, "hf://org/bench/model.gguf", o, out)
			}
			mb := func(d time.Duration) float64 { return float64(f.Size) * float64(b.N) / d.Seconds() / 1e6 }
			b.ReportMetric(mb(remoteT), "remote_MB/s")
			b.ReportMetric(mb(localT), "local_MB/s")
			b.ReportMetric(float64(remoteT)/float64(localT), "x_local_time")
		})
	}
}
