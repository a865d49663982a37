package kernels

import (
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// portableKernelNames are the kernels of the portable set, by weight type
// (the row kernel, dot), for the q2lut layout (its group kernel, the
// Q2_K kernel of its tail rows, its table builder) and the Q1_0 lookup
// kernel (its group kernel and table builder, "none" for a set without).
var portableKernelNames = map[string]string{
	"F32": "dotF32", "F16": "dotF16", "BF16": "dotBF16",
	"Q8_0": "dotQ8_0Go", "Q4_0": "dotQ4_0Go", "Q4_1": "refDotQ4_1", "IQ4_NL": "refDotIQ4NL",
	"Q5_0": "refDotQ5_0", "Q5_1": "refDotQ5_1",
	"Q2_K": "dotQ2_KGo", "Q3_K": "dotQ3_KGo", "Q4_K": "dotQ4_KGo", "Q5_K": "dotQ5_KGo", "Q6_K": "dotQ6_KGo",
	"Q1_0": "dotQ1_0Go", "Q2_0": "dotQ2_0Go", "TQ1_0": "dotTQ1_0Go", "TQ2_0": "dotTQ2_0Go",
	"q2lut.group": "q2lutGroupGo", "q2lut.dot": "dotQ2_KGo", "q2lut.tables": "buildQ2LUTTablesGo",
	"q1lut.group": "q1lutGroupGo", "q1lut.tables": "q1lutTablesGo",
}

// withKernels returns the kernel names of base with those of over replaced.
func withKernels(base, over map[string]string) map[string]string {
	m := maps.Clone(base)
	maps.Copy(m, over)
	return m
}

// funcName returns the name of function f without its package.
func funcName(f any) string {
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return name[strings.LastIndex(name, ".")+1:]
}

// installedKernelNames returns the names of the installed kernels, keyed
// as portableKernelNames.
func installedKernelNames() map[string]string {
	m := map[string]string{}
	for t, k := range kernels {
		m[t.String()] = funcName(k.dot)
	}
	m["q2lut.group"] = funcName(q2lutKernel.group)
	m["q2lut.dot"] = funcName(q2lutKernel.dot)
	m["q2lut.tables"] = "buildQ2LUTTablesGo"
	if q2lutAsm {
		m["q2lut.tables"] = "q2lutTablesAsm"
	}
	m["q1lut.group"], m["q1lut.tables"] = "none", "none"
	if q1lutSet != nil {
		m["q1lut.group"], m["q1lut.tables"] = funcName(q1lutSet.group), funcName(q1lutSet.tables)
	}
	return m
}

// TestKernelSelection installs every kernel set of this architecture's
// table (kernelSetNames: those this CPU does not run too, where nothing
// is computed, only installed) and checks which kernel each weight type
// and the q2lut layout get, so that a set cannot silently run a slower or
// differently rounded kernel (the vnni set ran q2lut in portable Go); and
// that the q2lut tail rows run the set's Q2_K kernel. Every set this CPU
// offers must be in the table.
func TestKernelSelection(t *testing.T) {
	defer SelectKernels("")
	for _, set := range KernelSets() {
		if _, ok := kernelSetNames[set]; !ok {
			t.Errorf("KernelSets offers %q, which the table of kernel sets does not list", set)
		}
	}
	for _, set := range slices.Sorted(maps.Keys(kernelSetNames)) {
		install(set)
		got, want := installedKernelNames(), kernelSetNames[set]
		for _, key := range slices.Sorted(maps.Keys(want)) {
			if got[key] != want[key] {
				t.Errorf("set %s: %s runs %s, want %s", set, key, got[key], want[key])
			}
		}
		for key := range got {
			if _, ok := want[key]; !ok {
				t.Errorf("set %s: %s (%s) is not in the table", set, key, got[key])
			}
		}
		if got["q2lut.dot"] != got["Q2_K"] {
			t.Errorf("set %s: q2lut tail rows run %s, its Q2_K rows %s", set, got["q2lut.dot"], got["Q2_K"])
		}
		t.Logf("set %s: Q2_K %s, q2lut %s (tables %s)", set, got["Q2_K"], got["q2lut.group"], got["q2lut.tables"])
	}
}
