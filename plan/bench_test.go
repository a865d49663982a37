package plan_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/plan"
)

// BenchmarkIdentityBuild rewrites a real file to a new file through the
// whole build path (header parse, plan, layout, executor) and, in the same
// iteration, copies the same file with io.Copy (which uses copy_file_range
// on Linux). Reported: x_copy_time = build time / copy time.
func BenchmarkIdentityBuild(b *testing.B) {
	src := shared.Path(b, "refdata", "synthetic", "models", "syn-dense-256-Q8_0.gguf")
	dir := b.TempDir()
	var copyT, buildT time.Duration
	st, _ := os.Stat(src)
	b.SetBytes(st.Size())
	for b.Loop() {
		t0 := time.Now()
		copyFile(b, src, filepath.Join(dir, "copy.gguf"))
		t1 := time.Now()
		buildFile(b, src, filepath.Join(dir, "build.gguf"))
		t2 := time.Now()
		copyT += t1.Sub(t0)
		buildT += t2.Sub(t1)
	}
	b.ReportMetric(float64(buildT)/float64(copyT), "x_copy_time")
}

func copyFile(tb testing.TB, src, dst string) {
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
}

func buildFile(tb testing.TB, src, dst string) *plan.Result {
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	st, _ := in.Stat()
	r, err := gguf.NewReader(in, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	res, err := plan.Identity(&plan.Input{Name: src, File: r.File, ReaderAt: in}).Execute(context.Background(), out, plan.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return res
}
