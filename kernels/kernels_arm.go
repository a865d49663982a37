//go:build arm && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// The armv7 kernels (see kernels_armsums.go): NEON Q8_0 and Q4_K sums,
// WORD-encoded (kernels_arm.s), and TQ1_0 and TQ2_0 sums (ternary_arm.s). The other
// types keep the portable Go kernels.

//go:noescape
func q8_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func q4_KSumsNEON(w, a *byte, nb int, out *int32)

var neonSet = armSet{name: "neon", q8_0: q8_0SumsNEON, q4_K: q4_KSumsNEON, tq1_0: tq1_0SumsNEON, tq2_0: tq2_0SumsNEON}

// kernelSets lists the kernel sets this build can select, best first.
func kernelSets() []string {
	if cpu.ARM.HasNEON {
		return []string{"neon", "portable"}
	}
	return []string{"portable"}
}

// installKernels switches to the named set, one of kernelSets().
func installKernels(name string) {
	restorePortable()
	if name == "neon" {
		arm = &neonSet
		kernels[gguf.TypeQ8_0].dot = dotQ8_0Arm
		kernels[gguf.TypeQ4_K].dot = dotQ4_KArm
		kernels[gguf.TypeTQ1_0].dot = dotTQ1_0Arm
		kernels[gguf.TypeTQ2_0].dot = dotTQ2_0Arm
	}
}
