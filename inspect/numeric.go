package inspect

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/quant"
)

// NumericDiff is how far apart two tensors' values are once both are
// dequantized to float32.
type NumericDiff struct {
	Name     string  `json:"name"`
	AType    string  `json:"a_type"`
	BType    string  `json:"b_type"`
	Elements uint64  `json:"elements"`
	MaxAbs   float64 `json:"max_abs_error"`
	RMSE     float64 `json:"rmse"`
	// RMS is the root mean square of A's values, to judge RMSE against.
	RMS float64 `json:"rms_a"`
}

// CompareNumeric dequantizes every tensor present in both files with the
// same shape and reports the largest absolute difference and the RMSE,
// reading both a chunk of rows at a time (memory: two 4 MiB chunks and their
// float32 values). Tensors of types that cannot be dequantized are skipped.
func CompareNumeric(a *gguf.File, dataA TensorData, b *gguf.File, dataB TensorData) ([]NumericDiff, error) {
	var out []NumericDiff
	for i := range a.Tensors {
		ta := &a.Tensors[i]
		j := b.TensorIndex(ta.Name)
		if j < 0 {
			continue
		}
		tb := &b.Tensors[j]
		if !slices.Equal(ta.Dims, tb.Dims) || !quant.CanDequantize(ta.Type) || !quant.CanDequantize(tb.Type) {
			continue
		}
		ra, err := dataA(i)
		if err != nil {
			return nil, err
		}
		rb, err := dataB(j)
		if err != nil {
			return nil, err
		}
		d, err := compareTensor(ta, ra, tb, rb)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", ta.Name, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func compareTensor(ta *gguf.TensorInfo, ra io.Reader, tb *gguf.TensorInfo, rb io.Reader) (NumericDiff, error) {
	d := NumericDiff{Name: ta.Name, AType: ta.Type.String(), BType: tb.Type.String(), Elements: ta.NumElements()}
	rowLen := int(ta.RowLen())
	rowsPerChunk := max(1, (4<<20)/max(int(ta.RowBytes()), int(tb.RowBytes()), 1))
	bufA := make([]byte, rowsPerChunk*int(ta.RowBytes()))
	bufB := make([]byte, rowsPerChunk*int(tb.RowBytes()))
	fa := make([]float32, rowsPerChunk*rowLen)
	fb := make([]float32, rowsPerChunk*rowLen)
	var sumSq, sumA float64
	for left := int(ta.NumRows()); left > 0; {
		n := min(left, rowsPerChunk)
		if _, err := io.ReadFull(ra, bufA[:n*int(ta.RowBytes())]); err != nil {
			return d, err
		}
		if _, err := io.ReadFull(rb, bufB[:n*int(tb.RowBytes())]); err != nil {
			return d, err
		}
		if err := quant.Dequantize(ta.Type, fa[:n*rowLen], bufA[:n*int(ta.RowBytes())]); err != nil {
			return d, err
		}
		if err := quant.Dequantize(tb.Type, fb[:n*rowLen], bufB[:n*int(tb.RowBytes())]); err != nil {
			return d, err
		}
		for k := range n * rowLen {
			x, y := float64(fa[k]), float64(fb[k])
			e := math.Abs(x - y)
			if e > d.MaxAbs || math.IsNaN(e) {
				d.MaxAbs = e
			}
			sumSq += float64((x - y) * (x - y))
			sumA += float64(x * x)
		}
		left -= n
	}
	if d.Elements > 0 {
		d.RMSE = math.Sqrt(sumSq / float64(d.Elements))
		d.RMS = math.Sqrt(sumA / float64(d.Elements))
	}
	return d, nil
}
