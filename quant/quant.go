package quant

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/gguf"
	"golang.org/x/sync/errgroup"
)

// codec is what this package knows about one ggml type.
type codec struct {
	// deq is ggml's to_float (dequantize_row_T) over whole blocks.
	deq func(y []float32, x []byte)
	// ref is ggml's from_float_ref (quantize_row_T_ref), nil when ggml has
	// none.
	ref func(y []byte, x []float32)
	// chunk is what ggml_quantize_chunk calls for one row (quantize_T); qw is
	// the row's importance weights or nil.
	chunk func(y []byte, x, qw []float32) error
	// usesImatrix: chunk reads qw (the README of refdata/quant-imatrix lists
	// which types do); needsImatrix: ggml_quantize_requires_imatrix.
	usesImatrix, needsImatrix bool
}

// refChunk adapts a reference quantizer that ignores importance weights.
func refChunk(f func(y []byte, x []float32)) func(y []byte, x, qw []float32) error {
	return func(y []byte, x, _ []float32) error { f(y, x); return nil }
}

// weighted uses impl when weights are given and the reference quantizer
// otherwise, as ggml's quantize_q4_0, quantize_q2_K, ... do.
func weighted(ref func(y []byte, x []float32), impl func(y []byte, x, qw []float32)) func(y []byte, x, qw []float32) error {
	return func(y []byte, x, qw []float32) error {
		if qw == nil {
			ref(y, x)
		} else {
			impl(y, x, qw)
		}
		return nil
	}
}

func noErr(f func(y []byte, x, qw []float32)) func(y []byte, x, qw []float32) error {
	return func(y []byte, x, qw []float32) error { f(y, x, qw); return nil }
}

// nilWeights calls an impl that accepts nil weights with none, which is
// what ggml's reference quantizers for IQ3_XXS, IQ3_S and IQ2_S do.
func nilWeights(f func(y []byte, x, qw []float32) error) func(y []byte, x []float32) {
	return func(y []byte, x []float32) {
		// These impls fail only on non-finite input; the reference entry
		// point has no error to return, so the block is left zeroed.
		if f(y, x, nil) != nil {
			clear(y)
		}
	}
}

var codecs = map[gguf.Type]*codec{
	gguf.TypeQ4_0: {deq: dequantizeQ4_0, ref: quantizeQ4_0Ref, chunk: weighted(quantizeQ4_0Ref, quantizeQ4_0Imat), usesImatrix: true},
	gguf.TypeQ4_1: {deq: dequantizeQ4_1, ref: quantizeQ4_1Ref, chunk: weighted(quantizeQ4_1Ref, quantizeQ4_1Imat), usesImatrix: true},
	gguf.TypeQ5_0: {deq: dequantizeQ5_0, ref: quantizeQ5_0Ref, chunk: weighted(quantizeQ5_0Ref, quantizeQ5_0Imat), usesImatrix: true},
	gguf.TypeQ5_1: {deq: dequantizeQ5_1, ref: quantizeQ5_1Ref, chunk: weighted(quantizeQ5_1Ref, quantizeQ5_1Imat), usesImatrix: true},
	gguf.TypeQ8_0: {deq: dequantizeQ8_0, ref: quantizeQ8_0Ref, chunk: refChunk(quantizeQ8_0Ref)},
	gguf.TypeQ8_1: {ref: quantizeQ8_1Ref, chunk: refChunk(quantizeQ8_1Ref)},
	gguf.TypeQ2_K: {deq: dequantizeQ2K, ref: quantizeQ2KRef, chunk: weighted(quantizeQ2KRef, quantizeQ2KImat), usesImatrix: true},
	gguf.TypeQ3_K: {deq: dequantizeQ3K, ref: quantizeQ3KRef, chunk: weighted(quantizeQ3KRef, quantizeQ3KImat), usesImatrix: true},
	gguf.TypeQ4_K: {deq: dequantizeQ4K, ref: quantizeQ4KRef, chunk: weighted(quantizeQ4KRef, quantizeQ4KImat), usesImatrix: true},
	gguf.TypeQ5_K: {deq: dequantizeQ5K, ref: quantizeQ5KRef, chunk: weighted(quantizeQ5KRef, quantizeQ5KImat), usesImatrix: true},
	gguf.TypeQ6_K: {
		deq:   dequantizeQ6K,
		ref:   func(y []byte, x []float32) { quantizeQ6K(y, x, nil) },
		chunk: noErr(quantizeQ6K), usesImatrix: true,
	},
	gguf.TypeQ8_K:    {deq: dequantizeQ8K, ref: quantizeQ8KRef, chunk: refChunk(quantizeQ8KRef)},
	gguf.TypeIQ2_XXS: {deq: dequantizeIQ2XXS, chunk: quantizeIQ2XXS, usesImatrix: true, needsImatrix: true},
	gguf.TypeIQ2_XS:  {deq: dequantizeIQ2XS, chunk: quantizeIQ2XS, usesImatrix: true, needsImatrix: true},
	gguf.TypeIQ2_S:   {deq: dequantizeIQ2S, ref: nilWeights(quantizeIQ2S), chunk: quantizeIQ2S, usesImatrix: true},
	gguf.TypeIQ3_XXS: {deq: dequantizeIQ3XXS, ref: nilWeights(quantizeIQ3XXS), chunk: quantizeIQ3XXS, usesImatrix: true},
	gguf.TypeIQ3_S:   {deq: dequantizeIQ3S, ref: nilWeights(quantizeIQ3S), chunk: quantizeIQ3S, usesImatrix: true},
	gguf.TypeIQ1_S:   {deq: dequantizeIQ1S, chunk: quantizeIQ1S, usesImatrix: true, needsImatrix: true},
	gguf.TypeIQ1_M:   {deq: dequantizeIQ1M, chunk: quantizeIQ1M, usesImatrix: true},
	gguf.TypeIQ4_NL: {
		deq:   dequantizeIQ4NL,
		ref:   func(y []byte, x []float32) { quantizeIQ4NL(y, x, nil, -1) },
		chunk: noErr(func(y []byte, x, qw []float32) { quantizeIQ4NL(y, x, qw, 7) }), usesImatrix: true,
	},
	gguf.TypeIQ4_XS: {
		deq:   dequantizeIQ4XS,
		ref:   func(y []byte, x []float32) { quantizeIQ4XS(y, x, nil) },
		chunk: noErr(quantizeIQ4XS), usesImatrix: true,
	},
	gguf.TypeTQ1_0: {deq: dequantizeTQ1_0, ref: quantizeTQ1_0, chunk: refChunk(quantizeTQ1_0)},
	gguf.TypeTQ2_0: {deq: dequantizeTQ2_0, ref: quantizeTQ2_0, chunk: refChunk(quantizeTQ2_0)},
	gguf.TypeMXFP4: {deq: dequantizeMXFP4, ref: quantizeMXFP4, chunk: refChunk(quantizeMXFP4)},
	gguf.TypeNVFP4: {deq: dequantizeNVFP4, ref: quantizeNVFP4, chunk: refChunk(quantizeNVFP4)},
	gguf.TypeQ1_0:  {deq: dequantizeQ1_0, ref: quantizeQ1_0Ref, chunk: refChunk(quantizeQ1_0Ref)},
	gguf.TypeQ2_0:  {deq: dequantizeQ2_0, ref: quantizeQ2_0Ref, chunk: refChunk(quantizeQ2_0Ref)},
	gguf.TypeF32:   {deq: decodeF32, ref: encodeF32, chunk: refChunk(encodeF32)},
	gguf.TypeF16:   {deq: decodeF16, ref: encodeF16, chunk: refChunk(encodeF16)},
	gguf.TypeBF16:  {deq: decodeBF16, ref: encodeBF16, chunk: refChunk(encodeBF16)},
}

func decodeF32(y []float32, x []byte) {
	for i := range y {
		y[i] = math.Float32frombits(le.Uint32(x[4*i:]))
	}
}

func encodeF32(y []byte, x []float32) {
	for i, v := range x {
		le.PutUint32(y[4*i:], math.Float32bits(v))
	}
}

// decodeF16 computes each value rather than using the table: over a whole
// tensor of halves the 256 KiB table misses the cache more than it helps.
func decodeF16(y []float32, x []byte) {
	n := fp16Decode(y, x)
	y, x = y[n:], x[2*n:]
	for i := range y {
		y[i] = fp16ToFP32(le.Uint16(x[2*i:]))
	}
}

// encodeF16 converts with the AVX2 kernel where there is one, else four
// values per step so that one 8-byte store and one bounds check serve four
// conversions.
func encodeF16(y []byte, x []float32) {
	n := fp16Row(y, x)
	y, x = y[2*n:], x[n:]
	for len(x) >= 4 && len(y) >= 8 {
		v := x[:4:4]
		le.PutUint64(y, uint64(FP32ToFP16(v[0]))|uint64(FP32ToFP16(v[1]))<<16|uint64(FP32ToFP16(v[2]))<<32|uint64(FP32ToFP16(v[3]))<<48)
		x, y = x[4:], y[8:]
	}
	for i, v := range x {
		le.PutUint16(y[2*i:], FP32ToFP16(v))
	}
}

func decodeBF16(y []float32, x []byte) {
	n := bf16Decode(y, x)
	y, x = y[n:], x[2*n:]
	for i := range y {
		y[i] = BF16ToFP32(le.Uint16(x[2*i:]))
	}
}

func encodeBF16(y []byte, x []float32) {
	n := bf16Row(y, x)
	y, x = y[2*n:], x[n:]
	for i, v := range x {
		le.PutUint16(y[2*i:], FP32ToBF16(v))
	}
}

// CanQuantize reports whether Quantize can produce type t: every type
// ggml_quantize_chunk handles, plus the activation types Q8_1 and Q8_K.
func CanQuantize(t gguf.Type) bool {
	c := codecs[t]
	return c != nil && c.chunk != nil
}

// CanDequantize reports whether Dequantize can decode type t (every type
// with a ggml to_float).
func CanDequantize(t gguf.Type) bool {
	c := codecs[t]
	return c != nil && c.deq != nil
}

// RequiresImatrix reports whether quantizing to t needs importance weights
// (ggml_quantize_requires_imatrix: IQ2_XXS, IQ2_XS and IQ1_S).
func RequiresImatrix(t gguf.Type) bool {
	c := codecs[t]
	return c != nil && c.needsImatrix
}

// UsesImatrix reports whether importance weights change what Quantize
// produces for t. For the others (Q8_0, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0,
// Q2_0, the float types) ggml ignores them.
func UsesImatrix(t gguf.Type) bool {
	c := codecs[t]
	return c != nil && c.usesImatrix
}

func lookup(t gguf.Type) (*codec, *gguf.TypeTraits, error) {
	tr, err := t.Traits()
	if err != nil {
		return nil, nil, fmt.Errorf("quant: %w", err)
	}
	c := codecs[t]
	if c == nil {
		return nil, nil, fmt.Errorf("quant: type %s is not supported", t)
	}
	return c, tr, nil
}

// Dequantize decodes src, which must hold whole blocks of type t, into dst,
// which must have room for exactly their elements. The floats are
// bit-identical to ggml's dequantize_row_T.
func Dequantize(t gguf.Type, dst []float32, src []byte) error {
	c, tr, err := lookup(t)
	if err != nil {
		return err
	}
	if c.deq == nil {
		return fmt.Errorf("quant: ggml has no dequantizer for %s", t)
	}
	if len(src)%tr.TypeSize != 0 {
		return fmt.Errorf("quant: %d bytes of %s: not a whole number of %d-byte blocks", len(src), t, tr.TypeSize)
	}
	if n := len(src) / tr.TypeSize * tr.BlockSize; len(dst) != n {
		return fmt.Errorf("quant: %d bytes of %s hold %d values, destination has room for %d", len(src), t, n, len(dst))
	}
	c.deq(dst, src)
	return nil
}

// Quantize encodes src as type t into dst with the semantics of ggml's
// ggml_quantize_chunk (the entry point llama-quantize uses). Without an
// importance matrix src is any whole number of blocks. With one, src is one
// or more rows of len(imatrix) values and imatrix holds one weight per
// column, used as ggml uses it for the types that take weights (UsesImatrix)
// and ignored by the others. dst must be exactly the encoded size.
//
// ggml_quantize_chunk and the reference quantizers agree for every type but
// IQ4_NL, whose reference (QuantizeRef) searches fewer scales. Q8_1 and Q8_K,
// which ggml quantizes only as activations, use their reference quantizers.
func Quantize(t gguf.Type, dst []byte, src []float32, imatrix []float32) error {
	c, tr, err := lookup(t)
	if err != nil {
		return err
	}
	if c.chunk == nil {
		return fmt.Errorf("quant: cannot quantize to %s", t)
	}
	rowLen := len(src)
	if imatrix != nil {
		rowLen = len(imatrix)
		if rowLen == 0 || len(src)%rowLen != 0 {
			return fmt.Errorf("quant: %d values are not whole rows of %d (the importance matrix length)", len(src), rowLen)
		}
	} else if c.needsImatrix {
		return fmt.Errorf("quant: %s requires an importance matrix", t)
	}
	if err := checkSizes(t, tr, dst, len(src), rowLen); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	return quantizeRows(c, tr, dst, src, rowLen, imatrix)
}

func checkSizes(t gguf.Type, tr *gguf.TypeTraits, dst []byte, n, rowLen int) error {
	if rowLen%tr.BlockSize != 0 {
		return fmt.Errorf("quant: rows of %d values: not a multiple of the %s block size %d", rowLen, t, tr.BlockSize)
	}
	if want := n / tr.BlockSize * tr.TypeSize; len(dst) != want {
		return fmt.Errorf("quant: %d values of %s take %d bytes, destination has %d", n, t, want, len(dst))
	}
	return nil
}

func quantizeRows(c *codec, tr *gguf.TypeTraits, dst []byte, src []float32, rowLen int, imatrix []float32) error {
	rowBytes := rowLen / tr.BlockSize * tr.TypeSize
	for len(src) > 0 {
		if err := c.chunk(dst[:rowBytes], src[:rowLen], imatrix); err != nil {
			return err
		}
		dst, src = dst[rowBytes:], src[rowLen:]
	}
	return nil
}

// QuantizeRef encodes src with ggml's reference quantizer for t
// (type_traits[t].from_float_ref, or quantize_row_q8_K_ref): the function
// ggml-cpu also uses to quantize activations for Q8_0, Q8_1 and Q8_K. IQ2_XXS,
// IQ2_XS, IQ1_S and IQ1_M have no reference quantizer.
//
// One ggml quirk is reproduced: the IQ4_NL reference stores an all-zero
// block (scale 0) with the levels of the previous block of the same call,
// which ggml never initializes; where ggml would read uninitialized memory
// (an all-zero first block) the levels are 0. The values decode to zero
// either way.
func QuantizeRef(t gguf.Type, dst []byte, src []float32) error {
	c, tr, err := lookup(t)
	if err != nil {
		return err
	}
	if c.ref == nil {
		return fmt.Errorf("quant: ggml has no reference quantizer for %s", t)
	}
	if err := checkSizes(t, tr, dst, len(src), len(src)); err != nil {
		return err
	}
	c.ref(dst, src)
	return nil
}

// QuantizeRows is Quantize over rows of rowLen values, spread over at most
// threads goroutines (threads < 1 means 1). Rows are independent in ggml's
// quantizers, so the bytes do not depend on threads. imatrix, when not nil,
// has rowLen weights.
func QuantizeRows(t gguf.Type, dst []byte, src []float32, rowLen int, imatrix []float32, threads int) error {
	c, tr, err := lookup(t)
	if err != nil {
		return err
	}
	if c.chunk == nil {
		return fmt.Errorf("quant: cannot quantize to %s", t)
	}
	if rowLen <= 0 || len(src)%rowLen != 0 {
		return fmt.Errorf("quant: %d values are not whole rows of %d", len(src), rowLen)
	}
	if imatrix != nil && len(imatrix) != rowLen {
		return fmt.Errorf("quant: importance matrix has %d weights for rows of %d", len(imatrix), rowLen)
	}
	if imatrix == nil && c.needsImatrix {
		return fmt.Errorf("quant: %s requires an importance matrix", t)
	}
	if err := checkSizes(t, tr, dst, len(src), rowLen); err != nil {
		return err
	}
	rowBytes := rowLen / tr.BlockSize * tr.TypeSize
	return forRowRanges(len(src)/rowLen, rowLen, threads, func(r0, r1 int) error {
		return quantizeRows(c, tr, dst[r0*rowBytes:r1*rowBytes], src[r0*rowLen:r1*rowLen], rowLen, imatrix)
	})
}

// forRowRanges calls fn on contiguous ranges of rows of rowLen values, at
// most threads at a time. Ranges are small enough (a few per goroutine) to
// balance rows of uneven cost, and large enough (minTaskValues) that
// starting a goroutine stays small next to the work even for the fastest
// conversions.
func forRowRanges(nrows, rowLen, threads int, fn func(r0, r1 int) error) error {
	const minTaskValues = 1 << 15
	tasks := min(nrows, max(threads, 1)*4, nrows*rowLen/minTaskValues)
	if threads <= 1 || tasks <= 1 {
		return fn(0, nrows)
	}
	per := (nrows + tasks - 1) / tasks
	var g errgroup.Group
	g.SetLimit(threads)
	for r0 := 0; r0 < nrows; r0 += per {
		r1 := min(nrows, r0+per)
		g.Go(func() error { return fn(r0, r1) })
	}
	return g.Wait()
}

// ConvertTensor converts whole rows of a tensor from type from to type to:
// src rows are dequantized to float32 when needed (exactly as ggml's
// to_float) and quantized as Quantize does; F32, F16 and BF16 targets are
// plain conversions. imatrix (rowLen weights or nil) applies to the target;
// for a 3-D expert tensor, call it per expert with that expert's slice of the
// tensor's weights (Imatrix.Weights), as llama-quantize does.
//
// Memory: besides src and dst, each of the at most threads goroutines holds
// one row of float32 (4*rowLen bytes); nothing grows with the number of
// rows, so an executor can stream a tensor through it a chunk of rows at a
// time. from == to copies the bytes unchanged (requantizing a type into
// itself is a no-op in llama-quantize too).
func ConvertTensor(dst, src []byte, from, to gguf.Type, rowLen int, imatrix []float32, threads int) error {
	fc, ftr, err := lookup(from)
	if err != nil {
		return err
	}
	tc, ttr, err := lookup(to)
	if err != nil {
		return err
	}
	if rowLen <= 0 || rowLen%ftr.BlockSize != 0 || rowLen%ttr.BlockSize != 0 {
		return fmt.Errorf("quant: rows of %d values do not fit %s (block %d) and %s (block %d)", rowLen, from, ftr.BlockSize, to, ttr.BlockSize)
	}
	srcRow := rowLen / ftr.BlockSize * ftr.TypeSize
	dstRow := rowLen / ttr.BlockSize * ttr.TypeSize
	if len(src)%srcRow != 0 {
		return fmt.Errorf("quant: %d bytes are not whole rows of %d %s values", len(src), rowLen, from)
	}
	nrows := len(src) / srcRow
	if len(dst) != nrows*dstRow {
		return fmt.Errorf("quant: %d rows of %d %s values take %d bytes, destination has %d", nrows, rowLen, to, nrows*dstRow, len(dst))
	}
	if from == to {
		copy(dst, src)
		return nil
	}
	if fc.deq == nil {
		return fmt.Errorf("quant: cannot convert from %s: ggml has no dequantizer for it", from)
	}
	if tc.chunk == nil {
		return fmt.Errorf("quant: cannot quantize to %s", to)
	}
	if imatrix != nil && len(imatrix) != rowLen {
		return fmt.Errorf("quant: importance matrix has %d weights for rows of %d", len(imatrix), rowLen)
	}
	if imatrix == nil && tc.needsImatrix {
		return fmt.Errorf("quant: %s requires an importance matrix", to)
	}
	return forRowRanges(nrows, rowLen, threads, func(r0, r1 int) error {
		row := make([]float32, rowLen)
		for r := r0; r < r1; r++ {
			fc.deq(row, src[r*srcRow:(r+1)*srcRow])
			if err := tc.chunk(dst[r*dstRow:(r+1)*dstRow], row, imatrix); err != nil {
				return fmt.Errorf("row %d: %w", r, err)
			}
		}
		return nil
	})
}
