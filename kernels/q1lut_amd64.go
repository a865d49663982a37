//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// hasAVX512F reports AVX-512 Foundation (with the OS saving its state),
// all the x86 lookup kernel needs: VPERMPS over 16 lanes looks up a
// 16-entry float table with 4-bit indices.
var hasAVX512F = cpu.X86.HasAVX512F

//go:noescape
func q1lutGroupAVX512(grp, tab *byte, nb int, out *float32)

// q1lutAVX512 is the kernel of the x86 sets on CPUs with AVX-512: float
// tables (q1lutTablesF32), 16 rows per vector, the float steps of their
// Q1_0 row kernel (dotQ1_0AVX2, ggml's AVX2 lanes and FMAs).
var q1lutAVX512 = &q1lutKernel{tabBytes: q1lutTabBytesF32, tables: q1lutTablesF32, group: q1lutGroupAsm}

// q1lutGroupAsm is q1lutGroupAVX512 with its bounds checked.
func q1lutGroupAsm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroupAVX512, q1lutTabBlockF32, n, g, tab, out)
}

// installQ1LUT installs the lookup kernel of kernel set name: the AVX-512
// one with the sets whose Q1_0 row kernel is AVX2 (its float steps are
// theirs) where the CPU has AVX-512, none with them otherwise (the AVX2
// row kernel is faster than the portable lookups), the portable one with
// the portable set (faster than its row kernel: BenchmarkQ1LUT).
func installQ1LUT(name string) {
	switch {
	case name == "portable":
		q1lutSet = q1lutGo
	case hasAVX512F:
		q1lutSet = q1lutAVX512
	default:
		q1lutSet = nil
	}
}
