//go:build amd64 && !purego

package kernels

// avx2KernelNames are the kernels of the avx2 set (see
// TestKernelSelection).
var avx2KernelNames = withKernels(withKernels(portableKernelNames, map[string]string{
	"Q8_0": "dotQ8_0Asm", "Q4_0": "dotQ4_0Asm", "IQ4_NL": "dotIQ4NLAsm",
	"Q2_K": "dotQ2_KAsm", "Q3_K": "dotQ3_KAsm", "Q4_K": "dotQ4_KAsm", "Q6_K": "dotQ6_KAsm",
	"Q1_0": "dotQ1_0Asm", "Q2_0": "dotQ2_0Asm", "F16": "dotF16Asm",
	"TQ1_0": "dotTQ1_0Asm", "TQ2_0": "dotTQ2_0Asm",
	"q2lut.group": "q2lutGroupAVX2", "q2lut.dot": "dotQ2_KAsm", "q2lut.tables": "q2lutTablesAsm",
}), q1lutAVX512Names())

// q1lutAVX512Names are the Q1_0 lookup kernels of the avx2 and vnni sets:
// the AVX-512 one where the CPU has AVX-512, the AVX2 one otherwise.
func q1lutAVX512Names() map[string]string {
	if !hasAVX512F {
		return map[string]string{"q1lut.group": "q1lutGroupAVX2Asm", "q1lut.tables": "q1lutTablesU16"}
	}
	return map[string]string{"q1lut.group": "q1lutGroupAsm", "q1lut.tables": "q1lutTablesF32Asm"}
}

// kernelSetNames is the table of amd64 kernel sets: vnni has avx2's row
// and q2lut kernels but TQ1_0's and TQ2_0's (its own are those and the
// prompt and repacked-group kernels).
var kernelSetNames = map[string]map[string]string{
	"portable": portableKernelNames,
	"avx2":     avx2KernelNames,
	"vnni":     withKernels(avx2KernelNames, map[string]string{"TQ1_0": "dotTQ1_0VNNIAsm", "TQ2_0": "dotTQ2_0VNNIAsm"}),
}
