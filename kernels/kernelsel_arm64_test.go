//go:build arm64 && !purego

package kernels

// armKernelNames are the kernels of the neon and dotprod sets (the same
// functions; the variant's block sums differ: armSet), see
// TestKernelSelection.
var armKernelNames = withKernels(portableKernelNames, map[string]string{
	"F16": "dotF16Arm", "Q8_0": "dotQ8_0Arm", "Q2_K": "dotQ2_KArm", "Q4_K": "dotQ4_KArm", "Q6_K": "dotQ6_KArm",
	"Q1_0": "dotQ1_0Arm", "Q2_0": "dotQ2_0Arm", "TQ1_0": "dotTQ1_0Arm", "TQ2_0": "dotTQ2_0Arm",
	"q2lut.group": "q2lutGroupNEON", "q2lut.dot": "dotQ2_KArm", "q2lut.tables": "q2lutTablesAsm",
	"q1lut.group": "q1lutGroupAsm", "q1lut.tables": "q1lutTablesLH",
})

// kernelSetNames is the table of arm64 kernel sets.
var kernelSetNames = map[string]map[string]string{
	"portable": portableKernelNames,
	"neon":     armKernelNames,
	"dotprod":  armKernelNames,
}
