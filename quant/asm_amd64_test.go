//go:build amd64 && !purego

package quant

import (
	"bytes"
	"math"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// TestAsmMatchesGo quantizes the golden inputs (ties, tiny and huge scales,
// NaN and infinities, zero weights) with the AVX2 kernels and with the Go
// code and requires identical bytes for every type and entry point.
func TestAsmMatchesGo(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	defer setAVX2(useAVX2)
	const rows = 56
	s := splitMix64(11)
	x := make([]float32, rows*goldenRowLen)
	for r := 0; r < rows; r++ {
		goldenRow(&s, r%14, x[r*goldenRowLen:(r+1)*goldenRowLen])
	}
	imats := goldenImatrices(&s)
	// Rounding edges: blocks whose largest magnitude is 127 (a Q8_0 scale of
	// exactly 1) holding halves and their float neighbours.
	for i := range 4 * goldenRowLen {
		h := float32(int(s.next()%255)-127) + 0.5
		switch {
		case i%32 == 0:
			h = 127
		case i%3 == 1:
			h = math.Nextafter32(h, 0)
		case i%3 == 2:
			h = math.Nextafter32(h, 1000)
		}
		x = append(x, h)
	}
	nrows := rows + 4
	// quantize runs one entry point over the rows with the kernels chosen
	// by asm; a row's error (NaN rows of the lattice types) is recorded in
	// place of its bytes.
	quantize := func(typ gguf.Type, asm bool, w []float32, ref bool) []byte {
		setAVX2(asm)
		rb := rowBytes(typ, goldenRowLen)
		var out []byte
		for r := 0; r < nrows; r++ {
			q := make([]byte, rb)
			xr := x[r*goldenRowLen : (r+1)*goldenRowLen]
			var err error
			if ref {
				err = QuantizeRef(typ, q, xr)
			} else {
				err = Quantize(typ, q, xr, w)
			}
			if err != nil {
				q = []byte(err.Error())
			}
			out = append(out, q...)
		}
		return out
	}
	for _, typ := range allQuantTypes() {
		for _, w := range [][]float32{nil, imats[0], imats[1]} {
			if w == nil && RequiresImatrix(typ) || w != nil && !UsesImatrix(typ) {
				continue
			}
			if a, g := quantize(typ, true, w, false), quantize(typ, false, w, false); !bytes.Equal(a, g) {
				t.Errorf("%s (imatrix %v): AVX2 and Go bytes differ: %s", typ, w != nil, diffBytes(a, g, typ.TypeSize()))
			}
		}
		if a, g := quantize(typ, true, nil, true), quantize(typ, false, nil, true); !bytes.Equal(a, g) {
			t.Errorf("%s reference: AVX2 and Go bytes differ: %s", typ, diffBytes(a, g, typ.TypeSize()))
		}
	}
}

// TestHalfDecodeKernels compares the AVX2 F16 and BF16 decoders with the Go
// ones on all 65536 bit patterns.
func TestHalfDecodeKernels(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	defer setAVX2(useAVX2)
	src := make([]byte, 2<<16)
	for h := range 1 << 16 {
		le.PutUint16(src[2*h:], uint16(h))
	}
	for _, typ := range []gguf.Type{gguf.TypeF16, gguf.TypeBF16} {
		var out [2][]float32
		for k, asm := range []bool{true, false} {
			setAVX2(asm)
			out[k] = make([]float32, 1<<16)
			if err := Dequantize(typ, out[k], src); err != nil {
				t.Fatal(err)
			}
		}
		for h := range out[0] {
			if a, g := math.Float32bits(out[0][h]), math.Float32bits(out[1][h]); a != g {
				t.Fatalf("%s %04x: AVX2 %08x, Go %08x", typ, h, a, g)
			}
		}
	}
}
