package quant

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// fusedOp matches arm64's fused multiply-add instructions in the compiler's
// assembly listing (-S), with the source position it gives them.
var fusedOp = regexp.MustCompile(`\((\S+\.go:\d+)\)\s+(FMADD|FMSUB|FNMADD|FNMSUB)[SD]\s`)

// TestNoFusedMultiplyAddOnArm64 compiles every package of the module, its
// tests included, for linux/arm64 and fails on any fused multiply-add in
// them. Go may fuse x*y+z into one instruction on arm64 (the spec allows
// it; amd64 does not without explicit math.FMA, unless built with
// GOAMD64=v3), which rounds once instead of twice: the same input would
// quantize to different bytes, and the runtime compute other logits, on a
// phone than on the machine that recorded the golden hashes and the
// llama.cpp references; a test's fused reference or generated input
// differs as much. An explicit float32(x*y) (float64(x*y)), or a
// conversion of a helper's parameter that callers pass products in,
// prevents it; this test finds any place that lacks one. The assembly
// kernels are written by hand and not listed here (their fused steps,
// where ggml's are, are documented with them).
// bench/device-recipes.sh shows the bytes agree under qemu.
func TestNoFusedMultiplyAddOnArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the module's tests for arm64")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("no go tool at %s", goTool)
	}
	// go test with an -exec that runs nothing compiles and links every
	// test binary (go build would leave the _test.go files out); the
	// listing of a cached compile is replayed.
	cmd := exec.Command(goTool, "test", "-exec=true", "-run=^$",
		"-gcflags=github.com/ggufkit/gguf/...=-S", "github.com/ggufkit/gguf/...")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test for arm64: %v\n%.2000s", err, out)
	}
	for _, fn := range []string{"quant.FP32ToFP16", "kernels.dotF32Go"} {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(fn) + ` STEXT`).Match(out) {
			t.Fatalf("go test -gcflags=-S printed no listing of %s (%d bytes): the check would pass vacuously", fn, len(out))
		}
	}
	for _, m := range fusedOp.FindAllSubmatch(out, 50) {
		t.Errorf("%s: %s fuses a multiply into an add on arm64 (round the product with an explicit float32() or float64())", m[1], m[2])
	}
}
