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
// tables (q1lutTablesF32's, built by q1lutTablesAVX512), 16 rows per
// vector, the float steps of their Q1_0 row kernel (dotQ1_0AVX2, ggml's
// AVX2 lanes and FMAs).
var q1lutAVX512 = &q1lutKernel{tabBytes: q1lutTabBytesF32, tables: q1lutTablesF32Asm, group: q1lutGroupAsm, group2: q1lutGroup2Asm}

//go:noescape
func q1lutGroup2AVX512(grp, tab *byte, nb int, out *float32)

// q1lutGroup2Asm is q1lutGroup2AVX512 with its bounds checked.
func q1lutGroup2Asm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroup2AVX512, 2, q1lutTabBlockF32, n, g, tab, out)
}

//go:noescape
func q1lutTablesAVX512(tab, a *byte, nb int)

// q1lutTablesF32Asm is q1lutTablesF32 in AVX-512 (the same bytes): in Go
// the tables took a tenth as many of a generation's perf samples as the
// group kernel, built by one thread while the others wait.
func q1lutTablesF32Asm(tab, a []byte, n int) {
	nb := n / 128
	if nb == 0 {
		return
	}
	_, _ = tab[nb*q1lutTabBlockF32-1], a[4*nb*q8_0Bytes-1]
	q1lutTablesAVX512(&tab[0], &a[0], nb)
}

// q1lutGroupAsm is q1lutGroupAVX512 with its bounds checked.
func q1lutGroupAsm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroupAVX512, 1, q1lutTabBlockF32, n, g, tab, out)
}

//go:noescape
func q1lutGroupAVX2(grp, tab *byte, nb int, out *float32)

// q1lutAVX2 is the kernel of the x86 sets on CPUs with AVX2 but not
// AVX-512: byte tables of the biased entries (q1lutTablesU16) looked up by
// VPSHUFB, the float steps of dotQ1_0AVX2 as q1lutAVX512 takes them.
var q1lutAVX2 = &q1lutKernel{tabBytes: q1lutTabBytesU16, tables: q1lutTablesU16, group: q1lutGroupAVX2Asm}

// The byte tables of the AVX2 kernel, per 128-column block: the four q8_0
// activation scales as float32, each broadcast to 8 (the kernel's FMAs
// read them as vectors), then for each sign byte vector v (0-15) 64
// bytes: u0 of groups 2v and 2v+1, then u1 of the same, 16 each, where
// entry T is stored as u = T + 32768 = 256*u1 + u0 (the kernel rebuilds
// the float 2^23 + u from the two bytes).
const q1lutTabBlockU16 = 128 + 16*64

// q1lutTabBytesU16 is tabBytes of the AVX2 kernel's tables.
func q1lutTabBytesU16(n int) int { return n / 128 * q1lutTabBlockU16 }

// q1lutTablesU16 writes the AVX2 kernel's tables of activation row a, in
// the layout of q1lutTablesLH's (which is kept apart, with its constants,
// for the arm64 kernels' speed: one function with the header size, bias
// and shift as parameters counted 0.31 instructions per weight against
// 0.25 in bench/icount.sh's Q1_0.q1lut+tables).
func q1lutTablesU16(tab, a []byte, n int) {
	for b := 0; b < n/128; b++ {
		tb := tab[b*q1lutTabBlockU16 : (b+1)*q1lutTabBlockU16]
		d := F32s(tb[:128])
		for k := 0; k < 4; k++ {
			dk := f16tab[le16(a[(4*b+k)*q8_0Bytes:])]
			for i := 0; i < 8; i++ {
				d[8*k+i] = dk
			}
		}
		for G := 0; G < 32; G++ {
			y := a[(4*b+G/8)*q8_0Bytes+2+4*(G%8):]
			t := tb[128+64*(G/2)+16*(G%2):]
			for c, v := range q1lutSigned(i8s(y[:4])) {
				u := uint16(v + 32768)
				t[c] = byte(u)
				t[32+c] = byte(u >> 8)
			}
		}
	}
}

// q1lutGroupAVX2Asm is q1lutGroupAVX2 with its bounds checked.
func q1lutGroupAVX2Asm(n int, g, a, tab []byte, out []float32) {
	q1lutCall(q1lutGroupAVX2, 1, q1lutTabBlockU16, n, g, tab, out)
}

// installQ1LUT installs the lookup kernel of kernel set name: with the
// sets whose Q1_0 row kernel is AVX2 (its float steps are theirs) the
// AVX-512 one where the CPU has AVX-512, the AVX2 one otherwise (both
// faster than the AVX2 row kernel: BenchmarkQ1LUT lut/avx2 and
// avx2lut/avx2 against row/avx2), the portable one with the portable set
// (faster than its row kernel).
func installQ1LUT(name string) {
	switch {
	case name == "portable":
		q1lutSet = q1lutGo
	case hasAVX512F:
		q1lutSet = q1lutAVX512
	default:
		q1lutSet = q1lutAVX2
	}
}
