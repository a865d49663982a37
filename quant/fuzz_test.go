package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// Fuzz targets: arbitrary bytes and floats (NaN, infinities, subnormals)
// must never panic. Run with e.g. go test ./quant -fuzz FuzzQuantize
// -fuzztime 1m; the seed corpus runs with the ordinary tests.

func dequantTypes() []gguf.Type { return typesWhere(CanDequantize) }

func FuzzDequantize(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(5), bytes.Repeat([]byte{0xff}, 300))
	f.Add(uint8(20), bytes.Repeat([]byte{0x7c, 0x00, 0x12}, 200))
	types := dequantTypes()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		typ := types[int(which)%len(types)]
		n := len(data) / typ.TypeSize()
		src := data[:n*typ.TypeSize()]
		dst := make([]float32, n*typ.BlockSize())
		if err := Dequantize(typ, dst, src); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		// A wrong destination size is an error, not a panic.
		if err := Dequantize(typ, make([]float32, len(dst)+1), src); err == nil {
			t.Fatalf("%s: oversized destination accepted", typ)
		}
	})
}

func FuzzQuantize(f *testing.F) {
	f.Add(uint8(0), false, []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f})
	f.Add(uint8(13), true, bytes.Repeat([]byte{0x00, 0x00, 0x80, 0xff}, 64))
	f.Add(uint8(17), true, bytes.Repeat([]byte{0x01, 0x00, 0x00, 0x00}, 300))
	types := allQuantTypes()
	f.Fuzz(func(t *testing.T, which uint8, weighted bool, data []byte) {
		typ := types[int(which)%len(types)]
		bs := typ.BlockSize()
		nvals := len(data) / 4
		nvals -= nvals % bs
		if nvals == 0 {
			nvals = bs
		}
		x := make([]float32, nvals)
		for i := range x {
			if 4*i+4 <= len(data) {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			}
		}
		var w []float32
		if weighted || RequiresImatrix(typ) {
			w = make([]float32, nvals)
			for i := range w {
				w[i] = float32(i%7) * 0.25
			}
		}
		q := make([]byte, nvals/bs*typ.TypeSize())
		err := Quantize(typ, q, x, w)
		q2 := make([]byte, len(q))
		err2 := Quantize(typ, q2, x, w)
		if (err == nil) != (err2 == nil) || (err == nil && !bytes.Equal(q, q2)) {
			t.Fatalf("%s: not deterministic", typ)
		}
		if err == nil && CanDequantize(typ) {
			if err := Dequantize(typ, make([]float32, nvals), q); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
		}
	})
}

func FuzzReadImatrix(f *testing.F) {
	f.Add(writeLegacyImatrix([]imatrixEntry{{"a.weight", []float32{1, 2}, []float32{1}}}, true))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadImatrix(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			for _, n := range m.Names() {
				if w, ok := m.Weights(n); !ok || len(w) == 0 {
					t.Fatalf("entry %q without weights", n)
				}
			}
		}
	})
}
