//go:build arm64 && !purego

package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// TestICountCoversArm64 checks that testdata/icount-arm64.txt has a row
// for every assembly kernel of every arm64 set: each sums and whole-dot
// function of neonSet and dotprodSet (found by reflection, so a kernel added to armSet
// without being counted fails here) and the NEON F32 dot both sets use.
func TestICountCoversArm64(t *testing.T) {
	rows, _, _ := readICount(t)
	have := map[string]bool{}
	for _, r := range rows {
		have[r.typ.String()+"/"+r.set] = true
	}
	for _, s := range []*armSet{&neonSet, &dotprodSet} {
		want := []string{gguf.TypeF32.String()}
		v := reflect.ValueOf(*s)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			isSums, isDot := f.Type == reflect.TypeFor[sumsFunc](), f.Type == reflect.TypeFor[blocksFunc]()
			if !isSums && !isDot || v.Field(i).IsNil() {
				continue
			}
			typ, err := gguf.ParseType(strings.TrimSuffix(f.Name, "Dot"))
			if err != nil || kernels[typ] == nil {
				t.Fatalf("armSet.%s names no weight type with a kernel", f.Name)
			}
			want = append(want, typ.String())
		}
		for _, typ := range want {
			if !have[typ+"/"+s.name] {
				t.Errorf("no instruction count for %s/%s in testdata/icount-arm64.txt (bench/icount.sh --update)", typ, s.name)
			}
		}
	}
}
