package kernels

import (
	"github.com/ggufkit/gguf/gguf"
)

// Matrix is a weight matrix in a layout, used in place: Rows rows of Cols
// elements of Type, each RowBytes long, with the kernel that multiplies it
// (chosen for its type, or the q2lut one) and, once packed, its rows in a
// group layout.
type Matrix struct {
	Name     string
	Type     gguf.Type
	Cols     int
	Rows     int
	RowBytes int
	data     []byte
	k        *kernel
	// pk, when set, holds rows [0, 8*pk.groups) in the group layout of
	// k.pack (their bytes in data may be released or overwritten).
	pk *packed
	// q1, when set, holds a Q1_0 matrix's whole 16-row groups in the
	// lookup kernel's layout (q1lut.go; the same release or overwrite).
	q1 []byte
}

// Row returns the bytes of row i.
func (m *Matrix) Row(i int) []byte { return m.data[i*m.RowBytes : (i+1)*m.RowBytes] }

// Slice returns rows [lo, hi) as a matrix (one expert of a 3-D tensor).
func (m *Matrix) Slice(lo, hi int) *Matrix {
	s := *m
	s.Rows = hi - lo
	s.data = m.data[lo*m.RowBytes : hi*m.RowBytes]
	return &s
}

// NewMatrix wraps data, rows rows of cols elements of t (rowBytes each),
// as a matrix with t's kernel, after checking that t can be multiplied in
// rows of cols elements. data may be nil for a matrix whose bytes come
// later (SetData: a paged expert's slot).
func NewMatrix(name string, t gguf.Type, cols, rows, rowBytes int, data []byte) (*Matrix, error) {
	k, err := kernelFor(t, cols)
	if err != nil {
		return nil, err
	}
	return &Matrix{Name: name, Type: t, Cols: cols, Rows: rows, RowBytes: rowBytes, data: data, k: k}, nil
}

// Data returns the matrix's bytes in its row layout.
func (m *Matrix) Data() []byte { return m.data }

// SetData points the matrix at new bytes of the same layout (a paged
// expert's slot).
func (m *Matrix) SetData(b []byte) { m.data = b }

// UseQ2LUT marks the matrix's bytes as Q2_K rows in layout q2lut (package
// layout): whole groups of 16 rows interleaved, the rest plain Q2_K rows.
func (m *Matrix) UseQ2LUT() { m.k = q2lutKernel }

// IsQ2LUT reports whether the matrix is in layout q2lut.
func (m *Matrix) IsQ2LUT() bool { return m.k == q2lutKernel }

// Products multiplies matrices with activation rows on a pool. It holds
// what a product needs besides the weights - the activation rows
// quantized to the kernel's type, their per-block values for packed
// matrices, q2lut tables, each thread's scratch - allocated once so that a
// product allocates nothing. It is not safe for concurrent use.
type Products struct {
	pool   *Pool
	act    []byte
	actf   []float32 // act back in float32 (generic kernels)
	aux    []byte    // per-block values of act for packed matrices
	lut    []byte    // q2lut tables of some activation rows
	lutSrc []byte    // the Q8_K rows lut was built from
	q1     q1lutState
	mt     matmulTask
	qt     quantTask
}

// padRows is the number of activation rows a batch of up to batch rows
// needs room for: a batch of 3 (or a tail of 3 after whole 4-row tiles)
// runs a four-row group kernel over one scratch row past its end
// (matmulTask.pad4).
func padRows(batch int) int {
	if batch%4 == 3 {
		return batch + 1
	}
	return batch
}

// SetRowExact makes float products (F32, F16, BF16 activations, rows
// dequantized to float32) run their activation rows one at a time, as a
// one-row product does: their four-row kernels sum in another order, and
// speculative decoding's verification batches must give each row the
// bits its own pass would. Integer products are exact either way.
func (s *Products) SetRowExact(on bool) { s.mt.rowExact = on }

// RowExact reports whether SetRowExact is on.
func (s *Products) RowExact() bool { return s.mt.rowExact }

// floatSums reports whether k's products are float sums, whose four-row
// kernels may add in another order than the one-row ones.
func (k *kernel) floatSums() bool {
	return k.generic || k.act == gguf.TypeF32 || k.act == gguf.TypeF16 || k.act == gguf.TypeBF16
}

// NewProducts allocates the buffers for products of up to batch
// activation rows of at most maxCols elements on pool p, with q2lut
// tables for rows of up to q2lutCols elements (0: no q2lut matrix).
func NewProducts(p *Pool, batch, maxCols, q2lutCols int) *Products {
	s := &Products{pool: p}
	actBytes := 0
	for _, t := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ8_1, gguf.TypeQ8_K} {
		if maxCols%t.BlockSize() == 0 {
			actBytes = max(actBytes, ActRowBytes(t, maxCols))
		}
	}
	threads := p.Threads()
	s.mt.pad4 = true
	s.act = make([]byte, padRows(batch)*actBytes)
	s.actf = make([]float32, batch*maxCols)
	s.mt.scratch = make([][]float32, threads)
	s.mt.quad = make([][4]float32, threads)
	s.mt.oct = make([][packRows]float32, threads)
	s.mt.oct4 = make([][4 * packRows]float32, threads)
	s.mt.oct2 = make([][2 * packRows]float32, threads)
	s.mt.oct8 = make([][8 * packRows]float32, threads)
	auxRow := 0
	for t, k := range packKernels {
		auxRow = max(auxRow, maxCols/t.BlockSize()*k.auxBytes)
	}
	s.aux = make([]byte, padRows(batch)*auxRow)
	if q2lutCols > 0 {
		s.lut = make([]byte, max(q2lutTableBudget, q2lutTableBytes(q2lutCols)))
		s.lutSrc = make([]byte, 0, len(s.lut)/q2lutTabBytes*q8_KBytes)
	}
	for w := 0; w < threads; w++ {
		s.mt.scratch[w] = make([]float32, maxCols)
	}
	return s
}

// MatMul computes out[j] = W in[j] for nb rows of in (stride W.Cols) into
// out (stride W.Rows), quantizing the activations to the kernel's type
// first, as ggml-cpu's mul_mat does.
func (s *Products) MatMul(w *Matrix, in []float32, out []float32, nb int) {
	k := w.k
	stride := ActRowBytes(k.act, w.Cols)
	q := &s.qt
	q.k, q.in, q.act, q.cols, q.stride, q.pk = k.act, in, s.act, w.Cols, stride, nil
	if w.pk != nil {
		q.pk = w.packKernelOf()
		q.aux, q.auxStride = s.aux, w.Cols/k.act.BlockSize()*q.pk.auxBytes
		s.mt.pk, s.mt.aux, s.mt.auxStride = q.pk, s.aux, q.auxStride
	}
	// A prompt's rows are quantized in parallel: done by one thread, they
	// were a sixth of a 2-thread prompt's time. Ranges of grain rows keep
	// the threads' stores in separate cache lines.
	s.pool.Run(q, nb, 64/stride+1, nb >= 8 && w.Cols*nb >= 16<<10)
	act := s.act
	if k.group != nil {
		s.matmulQ2LUT(w, act, stride, out, nb)
		return
	}
	if w.q1 != nil {
		s.matmulQ1LUT(w, act, stride, out, nb)
		return
	}
	if k.generic && k.act != gguf.TypeF32 {
		// The dequantized weight row is multiplied in float32: give it the
		// rounded activations as float32 too.
		for j := 0; j < nb; j++ {
			_ = DequantizeRow(k.act, s.actf[j*w.Cols:(j+1)*w.Cols], s.act[j*stride:(j+1)*stride])
		}
		act, stride = BytesOf(s.actf[:nb*w.Cols]), w.Cols*4
	}
	s.mt.w, s.mt.act, s.mt.stride, s.mt.out, s.mt.nb = w, act, stride, out, nb
	// Threads pay off from ~256 KB of weights per product; below that the
	// hand-off costs more than the work (stories260K's 64x64 matrices).
	// Each row r writes out[j*Rows+r] for every token j: ranges of 16 rows
	// keep the two threads' stores in separate 64-byte cache lines.
	s.pool.Run(&s.mt, w.Rows, 16, w.Rows*w.RowBytes*nb >= 256<<10)
}

// quantTask quantizes activation rows to a kernel's type and, for a packed
// matrix, writes their aux values.
type quantTask struct {
	k         gguf.Type
	in        []float32
	act       []byte
	cols      int
	stride    int
	pk        *packKernel
	aux       []byte
	auxStride int
}

func (q *quantTask) Run(lo, hi, _ int) {
	for j := lo; j < hi; j++ {
		a := q.act[j*q.stride : (j+1)*q.stride]
		// Errors are impossible here: kernelFor checked the type and size.
		_ = quantizeAct(q.k, a, q.in[j*q.cols:(j+1)*q.cols])
		if q.pk != nil {
			q.pk.prep(q.aux[j*q.auxStride:(j+1)*q.auxStride], a, q.cols/q.k.BlockSize())
		}
	}
}

type matmulTask struct {
	w       *Matrix
	act     []byte
	stride  int
	out     []float32
	nb      int
	scratch [][]float32
	// quad holds each worker's four dot4 results: a local array would
	// escape through the function value and cost an allocation per row.
	quad [][4]float32
	// tab holds the q2lut tables of each activation row (tabStride bytes
	// apart).
	tab       []byte
	tabStride int
	// pk runs a packed matrix's groups, with the activation rows' aux
	// values (auxStride bytes apart).
	pk        *packKernel
	aux       []byte
	auxStride int
	oct       [][packRows]float32
	oct4      [][4 * packRows]float32
	oct2      [][2 * packRows]float32
	oct8      [][8 * packRows]float32
	// pad4 runs 3 rows left after the whole 4-row tiles through a packed
	// matrix's four-row kernel with a scratch row (whatever the buffers
	// hold past the batch: its results are dropped, and each row's
	// results depend on its own activations only), as the seeds' E32 did
	// in llama.cpp: the group's weights are unpacked once instead of three
	// times. BenchmarkPad4 (vnni, one thread): 3 rows padded take 0.79-0.89
	// of the time of 3 one-row passes (Q4_K, Q4_0, Q6_K, Q8_0), but 2 rows
	// padded take 1.15-1.3 of 2 one-row passes, so 2 rows stay one at a
	// time (E32 found the same: pp2 no gain, pp3 +50 %). Off only to
	// measure that.
	pad4 bool
	// rowExact: see Products.SetRowExact.
	rowExact bool
}

func (t *matmulTask) Run(lo, hi, wk int) {
	w, k := t.w, t.w.k
	if k.group != nil {
		t.runGroups(lo, hi)
		return
	}
	if w.q1 != nil {
		t.runQ1LUT(lo, hi)
		return
	}
	n := w.Cols
	if w.pk != nil && lo < w.pk.groups*packRows {
		// ranges start at multiples of the grain (16): whole groups
		end := min(hi, w.pk.groups*packRows)
		t.runPacked(lo/packRows, end/packRows, wk)
		lo = end
	}
	four := k.dot4 != nil && t.nb >= 4 && !(t.rowExact && k.floatSums())
	for r := lo; r < hi; r++ {
		row := w.Row(r)
		if k.generic {
			f := t.scratch[wk][:n]
			_ = DequantizeRow(w.Type, f, row)
			row = BytesOf(f)
		}
		j := 0
		if four {
			o := &t.quad[wk]
			for ; j+4 <= t.nb; j += 4 {
				k.dot4(n, row, t.act[j*t.stride:], t.stride, o)
				for c, v := range o {
					t.out[(j+c)*w.Rows+r] = v
				}
			}
		}
		for ; j < t.nb; j++ {
			t.out[j*w.Rows+r] = k.dot(n, row, t.act[j*t.stride:(j+1)*t.stride])
		}
	}
}

// runPacked2 computes groups [g0, g1) of a matrix packed in pairs with
// the pair kernels (a range cut inside a pair computes the pair and keeps
// its half), and returns the first group it left: the odd last group of
// the matrix, in the 8-row layout, or g1.
func (t *matmulTask) runPacked2(g0, g1, wk int) int {
	w, pk := t.w, t.pk
	nblk := w.Cols / w.k.act.BlockSize()
	o, o8 := &t.oct2[wk], &t.oct8[wk]
	const r2 = 2 * packRows
	paired := w.pk.groups &^ 1
	g := g0
	for g < min(g1, paired) {
		p := g &^ 1 // the pair's first group
		hi := min(p+2, g1)
		grp := w.pk.data[p*w.pk.groupBytes : (p+2)*w.pk.groupBytes]
		// rows [r0, r1) of the pair's 16 are wanted
		r0, r1 := (g-p)*packRows, (hi-p)*packRows
		j := 0
		if pk.gemm2x4 != nil {
			for ; j+4 <= t.nb; j += 4 {
				pk.gemm2x4(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], t.stride, t.auxStride, nblk, o8)
				for i := 0; i < 4; i++ {
					copy(t.out[(j+i)*w.Rows+p*packRows+r0:(j+i)*w.Rows+p*packRows+r1], o8[i*r2+r0:i*r2+r1])
				}
			}
			if t.pad4 && t.nb-j == 3 {
				// as runPacked: 3 rows and a scratch row
				pk.gemm2x4(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], t.stride, t.auxStride, nblk, o8)
				for i := 0; i < t.nb-j; i++ {
					copy(t.out[(j+i)*w.Rows+p*packRows+r0:(j+i)*w.Rows+p*packRows+r1], o8[i*r2+r0:i*r2+r1])
				}
				j = t.nb
			}
		}
		for ; j < t.nb; j++ {
			pk.gemv2(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], nblk, o)
			copy(t.out[j*w.Rows+p*packRows+r0:j*w.Rows+p*packRows+r1], o[r0:r1])
		}
		g = hi
	}
	return g
}

// runPacked computes groups [g0, g1) of a packed matrix for every
// activation row, a group's weights staying in cache across the rows.
func (t *matmulTask) runPacked(g0, g1, wk int) {
	w, pk := t.w, t.pk
	nblk := w.Cols / w.k.act.BlockSize()
	o, o4 := &t.oct[wk], &t.oct4[wk]
	g := g0
	if pk.gemv2 != nil {
		g = t.runPacked2(g0, g1, wk)
	}
	for ; g < g1; g++ {
		grp := w.pk.data[g*w.pk.groupBytes : (g+1)*w.pk.groupBytes]
		j := 0
		if pk.gemm4 != nil {
			for ; j+4 <= t.nb; j += 4 {
				pk.gemm4(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], t.stride, t.auxStride, nblk, o4)
				for i := 0; i < 4; i++ {
					copy(t.out[(j+i)*w.Rows+g*packRows:(j+i)*w.Rows+(g+1)*packRows], o4[i*packRows:(i+1)*packRows])
				}
			}
			if t.pad4 && t.nb-j == 3 {
				pk.gemm4(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], t.stride, t.auxStride, nblk, o4)
				for i := 0; i < t.nb-j; i++ {
					copy(t.out[(j+i)*w.Rows+g*packRows:(j+i)*w.Rows+(g+1)*packRows], o4[i*packRows:(i+1)*packRows])
				}
				j = t.nb
			}
		}
		for ; j < t.nb; j++ {
			pk.gemv(grp, t.act[j*t.stride:], t.aux[j*t.auxStride:], nblk, o)
			copy(t.out[j*w.Rows+g*packRows:j*w.Rows+(g+1)*packRows], o[:])
		}
	}
}
