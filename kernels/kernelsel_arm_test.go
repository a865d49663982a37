//go:build arm && !purego

package kernels

// kernelSetNames is the table of armv7 kernel sets (see
// TestKernelSelection): neon has NEON Q8_0, Q4_K, TQ1_0 and TQ2_0 sums and
// the NEON Q1_0 lookup kernel, q2lut stays portable.
var kernelSetNames = map[string]map[string]string{
	"portable": portableKernelNames,
	"neon": withKernels(portableKernelNames, map[string]string{
		"Q8_0": "dotQ8_0Arm", "Q4_K": "dotQ4_KArm", "TQ1_0": "dotTQ1_0Arm", "TQ2_0": "dotTQ2_0Arm",
		"q1lut.group": "q1lutGroupAsm", "q1lut.tables": "q1lutTablesLH",
	}),
}
