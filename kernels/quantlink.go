package kernels

import (
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/quant"
)

// This file is the kernels' only link to the block codecs of package quant:
// half floats, activation quantization and row dequantization.

// f16tab maps every half-float bit pattern to its float32 value, so kernels
// read scales with one load (ggml-cpu keeps the same table).
var f16tab = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = quant.FP16ToFP32(uint16(i))
	}
	return
}()

// f32ToF16 rounds f to the nearest half float (ggml's FP32_TO_FP16).
func f32ToF16(f float32) uint16 { return quant.FP32ToFP16(f) }

// quantizeAct converts an activation row to the vec_dot_type t with ggml's
// reference quantizers, which ggml-cpu's from_float equals for these types
// (refdata/quant/README.txt).
func quantizeAct(t gguf.Type, dst []byte, src []float32) error {
	if t == gguf.TypeF32 {
		copy(F32s(dst), src)
		return nil
	}
	return quant.QuantizeRef(t, dst, src)
}

// DequantizeRow converts one row of type t to float32, bit-identical to
// ggml's dequantize_row.
func DequantizeRow(t gguf.Type, dst []float32, src []byte) error {
	if t == gguf.TypeF32 {
		copy(dst, F32s(src))
		return nil
	}
	return quant.Dequantize(t, dst, src)
}
