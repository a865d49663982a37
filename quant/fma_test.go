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

// TestNoFusedMultiplyAddOnArm64 compiles this package for linux/arm64 and
// fails on any fused multiply-add in it. Go may fuse x*y+z into one
// instruction on arm64 (the spec allows it; amd64 never does without
// explicit math.FMA), which rounds once instead of twice: the same input
// would quantize to different bytes on a phone than on the machine that
// recorded the golden hashes. An explicit float32(x*y), or float32(v) of a
// helper's parameter that callers pass products in, prevents it; this test
// finds any place that lacks one. bench/device-recipes.sh shows the bytes
// agree under qemu.
func TestNoFusedMultiplyAddOnArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("no go tool at %s", goTool)
	}
	cmd := exec.Command(goTool, "build", "-gcflags=-S", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%.2000s", err, out)
	}
	if len(out) < 1000 {
		t.Fatalf("go build -S printed no assembly (%d bytes): the check would pass vacuously", len(out))
	}
	for _, m := range fusedOp.FindAllSubmatch(out, 20) {
		t.Errorf("%s: %s fuses a multiply into an add on arm64 (round the product with an explicit float32())", filepath.Base(string(m[1])), m[2])
	}
}
