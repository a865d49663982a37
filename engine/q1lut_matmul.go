package engine

import (
	"bytes"
	"fmt"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// How the runtime runs dense Q1_0 matrices with the lookup kernel
// (q1lut.go): their whole groups of 16 rows are repacked at Open, and a
// matmul builds each activation row's tables once for all the groups.

// q1lutTableBudget bounds the tables a State holds: a matmul builds them
// for as many activation rows as fit at a time (at least one).
const q1lutTableBudget = 1 << 20

// q1lutState is a State's table space: the tables of some activation rows,
// the Q8_0 rows they were built from and the kernel that built them.
type q1lutState struct {
	tab []byte
	src []byte
	k   *q1lutKernel
}

// q1lutRun returns the kernel that runs repacked matrices: the installed
// set's, or the portable one when the set was changed after Open to one
// without (whose row kernel is then the portable one's float order).
func q1lutRun() *q1lutKernel {
	if q1lutSet != nil {
		return q1lutSet
	}
	return q1lutGo
}

// q1lutMatrices repacks the whole 16-row groups of the dense Q1_0
// matrices into the lookup layout when the installed set has a lookup
// kernel, as packMatrices does for the interleaved layouts: a mapped
// matrix is copied (its file pages dropped: a tied head's embedding rows
// fault back in one per token), rows read into memory are repacked in
// place (the layout is the rows' size), but a tied head's, which the
// embedding still reads: that would take a second copy.
func (m *Model) q1lutMatrices() error {
	if m.opts.NoRepack || q1lutSet == nil {
		return nil
	}
	ms := []*Matrix{m.Output}
	for i := range m.Layers {
		L := &m.Layers[i]
		ms = append(ms, L.Q, L.K, L.V, L.O, L.FFN.Gate, L.FFN.Up, L.FFN.Down, L.Shared.Gate, L.Shared.Up, L.Shared.Down)
	}
	for _, w := range ms {
		if w == nil || w.Type != gguf.TypeQ1_0 || w.q1 != nil || w.Rows < q1lutRows || w.data == nil {
			continue
		}
		nb := w.Cols / 128
		gb := q1lutRows * w.RowBytes
		rows := w.data[:w.Rows/q1lutRows*gb]
		if !m.inMap(rows) {
			if w == m.Embed {
				continue
			}
			tmp := make([]byte, gb)
			for g := 0; g < len(rows); g += gb {
				copy(tmp, rows[g:g+gb])
				q1lutRepack(rows[g:g+gb], tmp, w.RowBytes, nb)
			}
			w.q1 = rows
			m.PackedBytes += int64(len(rows))
			continue
		}
		dst := osmem.AlignedBytes(len(rows))
		for g := 0; g < len(rows); g += gb {
			q1lutRepack(dst[g:g+gb], rows[g:g+gb], w.RowBytes, nb)
		}
		w.q1 = dst
		m.PackedBytes += int64(len(dst))
		osmem.DropPages(rows, m.opts.Mlock)
		if m.opts.Mlock {
			if err := osmem.Lock(dst); err != nil {
				return fmt.Errorf("--mlock of %s's lookup layout: %w", w.Name, err)
			}
			m.unmap = append(m.unmap, func() error { return osmem.Unlock(dst) })
		}
	}
	return nil
}

// matmulQ1LUT is matmul for a repacked Q1_0 matrix, whose activations are
// already quantized in act (stride bytes per row): the tables of as many
// rows as the budget holds at a time, then the groups over the pool, each
// group against every one of those rows while its bytes are in the cache.
// Tables built from the same activation bytes by the same kernel are not
// built again (q, k and v, or gate and up, take the same input).
func (s *State) matmulQ1LUT(w *Matrix, act []byte, stride int, out []float32, nb int) {
	k := q1lutRun()
	tb := k.tabBytes(w.Cols)
	if len(s.q1.tab) < tb {
		s.q1.tab = q1lutAlloc(max(q1lutTableBudget, tb))
	}
	per := len(s.q1.tab) / tb
	groups := (w.Rows + q1lutRows - 1) / q1lutRows
	for j0 := 0; j0 < nb; j0 += per {
		n := min(per, nb-j0)
		if src := act[j0*stride : (j0+n)*stride]; k != s.q1.k || !bytes.Equal(src, s.q1.src) {
			for j := 0; j < n; j++ {
				k.tables(s.q1.tab[j*tb:(j+1)*tb], act[(j0+j)*stride:], w.Cols)
			}
			s.q1.src, s.q1.k = append(s.q1.src[:0], src...), k
		}
		s.mt.w, s.mt.act, s.mt.stride, s.mt.out, s.mt.nb = w, act[j0*stride:], stride, out[j0*w.Rows:], n
		s.mt.tab, s.mt.tabStride = s.q1.tab, tb
		s.pool.run(&s.mt, groups, 1, w.Rows*w.RowBytes*n >= 256<<10)
	}
}

// runQ1LUT computes groups [lo, hi) of a repacked Q1_0 matrix, every
// activation row of a group in turn, and the rows past the last whole
// group (in the row layout) with the set's row kernel.
func (t *matmulTask) runQ1LUT(lo, hi int) {
	w, k := t.w, q1lutRun()
	full := w.Rows / q1lutRows
	gb := q1lutRows * w.RowBytes
	for gi := lo; gi < min(hi, full); gi++ {
		r0 := gi * q1lutRows
		g := w.q1[gi*gb : (gi+1)*gb]
		for j := 0; j < t.nb; j++ {
			k.group(w.Cols, g, t.act[j*t.stride:(j+1)*t.stride], t.tab[j*t.tabStride:(j+1)*t.tabStride], t.out[j*w.Rows+r0:j*w.Rows+r0+q1lutRows])
		}
	}
	if hi > full {
		for r := full * q1lutRows; r < w.Rows; r++ {
			for j := 0; j < t.nb; j++ {
				t.out[j*w.Rows+r] = w.k.dot(w.Cols, w.Row(r), t.act[j*t.stride:(j+1)*t.stride])
			}
		}
	}
}
