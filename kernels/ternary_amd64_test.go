//go:build amd64 && !purego

package kernels

import (
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTernaryKernelsInstalled checks which kernel every ternary layout
// and original type runs under each amd64 set: the assembly (terDotAsm's)
// with avx2 and vnni, the portable Go methods with portable, so that a set
// cannot silently fall back to the Go kernels.
func TestTernaryKernelsInstalled(t *testing.T) {
	defer SelectKernels("")
	for _, set := range slices.Sorted(maps.Keys(kernelSetNames)) {
		install(set)
		for e, k := range terKernels {
			name := runtime.FuncForPC(reflect.ValueOf(k.dot).Pointer()).Name()
			want := "terLayout.dot"
			if set != "portable" {
				want = "terDotAsm"
			}
			if !strings.Contains(name, want) {
				t.Errorf("set %s: %s of %s runs %s, want %s", set, e.Kind, e.From, name, want)
			}
		}
	}
}
