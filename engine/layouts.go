package engine

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/layout"
	"golang.org/x/sync/errgroup"
)

// The repacked layouts a model runs: q2lut expert tensors (package layout)
// checked at load, and dense matrices copied at Open into the group
// layouts of the kernel set in use (kernels.Matrix.Pack: interleaved
// rows, or Q1_0's lookup layout).

// q2lutLayouts checks the layouts recorded in md against the tensors of ts
// and returns them by original name: q2lut expert tensors and tensors in
// the ternary layouts (terMatrix). Every tensor named like a layout must
// be listed, and every listed one must be there.
func q2lutLayouts(md *gguf.Metadata, ts *tensorSet) (map[string]layout.Entry, error) {
	es, err := layout.Entries(md)
	if err != nil {
		return nil, err
	}
	out := map[string]layout.Entry{}
	for _, e := range es {
		t, ok := ts.info[e.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("metadata %s lists tensor %q, which the file does not have", layout.KeyTensors, e.Name)
		case e.Kind == layout.Q2LUT && !experts.IsExpert(e.Original()):
			return nil, fmt.Errorf("tensor %q: layout q2lut is for expert tensors, %q is none", e.Name, e.Original())
		}
		if _, dup := ts.info[e.Original()]; dup {
			return nil, fmt.Errorf("tensor %q is there both in layout %s and as itself", e.Original(), e.Kind)
		}
		if _, err := layout.Original(*t, e); err != nil {
			return nil, err
		}
		out[e.Original()] = e
	}
	for name := range ts.info {
		for _, k := range layout.Kinds {
			if strings.HasSuffix(name, "."+string(k)) && out[strings.TrimSuffix(name, "."+string(k))].Name != name {
				return nil, fmt.Errorf("tensor %q is named like layout %s but metadata %s does not list it", name, k, layout.KeyTensors)
			}
		}
	}
	return out, nil
}

// q2lutExperts returns the tensor holding expert tensor name (ne = [cols,
// rows, n]) in layout q2lut, after checking that each expert's bytes are
// whole (layout.Q2LUTExpertBytes), or nil when name is not in the layout.
func (ts *tensorSet) q2lutExperts(name string, cols, rows, n int) (*gguf.TensorInfo, error) {
	e, ok := ts.layouts[name]
	if !ok || e.Kind != layout.Q2LUT {
		return nil, nil
	}
	t, err := ts.get(e.Name, false, cols, rows, n)
	if err != nil {
		return nil, err
	}
	if _, err := layout.Q2LUTExpertBytes(t.Size(), int64(cols), int64(rows)); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", e.Name, err)
	}
	return t, nil
}

// q2lutCols returns the widest q2lut matrix of m (0: none), for the size
// of a State's tables.
func (m *Model) q2lutCols() int {
	n := 0
	for i := range m.Layers {
		for _, es := range [][]*Matrix{m.Layers[i].GateExps, m.Layers[i].UpExps, m.Layers[i].DownExps} {
			if len(es) > 0 && es[0].IsQ2LUT() {
				n = max(n, es[0].Cols)
			}
		}
	}
	return n
}

// packMatrices copies the dense matrices whose type has a group kernel in
// the installed set into the group layout, Q1_0 ones into the lookup
// layout where the set has a lookup kernel (a tied head too: the
// embedding's row reads then fault its pages back in from the file, one
// row per token). The row bytes a copy replaces are
// given back: a mapping's pages are dropped (they fault in from the file
// if read again), and bytes read into memory are overwritten with the
// copy, so the weights are held once either way. (A layout larger than
// the rows, Q4_K's, is therefore made only for mapped files.)
func (m *Model) packMatrices() error {
	if m.opts.NoRepack {
		return nil
	}
	var ms []*Matrix
	for i := range m.Layers {
		L := &m.Layers[i]
		ms = append(ms, L.Q, L.K, L.V, L.O, L.FFN.Gate, L.FFN.Up, L.FFN.Down, L.Shared.Gate, L.Shared.Up, L.Shared.Down)
		// Resident experts too (a paged model's have no bytes here: its
		// slots are packed as they are read, statePager.matrix): on the
		// row kernels they were 40 % of a qwen3moe prompt's time. Only
		// whole groups of rows, as a slot packs them.
		for _, es := range [][]*Matrix{L.GateExps, L.UpExps, L.DownExps} {
			for _, w := range es {
				if w.SlotPackBytes() > 0 {
					ms = append(ms, w)
				}
			}
		}
		if d, ok := L.Mixer.(*DeltaNetLayer); ok {
			// A Gated DeltaNet layer's projections are most of its
			// products: on the row kernels they were a third of a
			// qwen35 prompt's time.
			ms = append(ms, d.QKV, d.Gate, d.Beta, d.Alpha, d.Out)
		}
	}
	ms = append(ms, m.Output)
	// The matrices are packed on every core: at one, packing a qwen3moe
	// model's experts (488 MB) took a second of the load. Each writes its
	// own bytes; PackedBytes and unmap are shared.
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	seen := map[*Matrix]bool{}
	for _, w := range ms {
		if w == nil || seen[w] || !w.Packable() {
			continue
		}
		seen[w] = true
		g.Go(func() error { return m.pack(w, &mu) })
	}
	return g.Wait()
}

// pack is packMatrices for one matrix w (mu guards the Model's fields).
func (m *Model) pack(w *Matrix, mu *sync.Mutex) error {
	mapped := m.inMap(w.Data())
	if !mapped {
		// Rows read into memory are overwritten in place: not those
		// of a tied head, which the embedding still reads, nor by a
		// larger layout; holding both would double the matrix.
		if w != m.Embed && w.PackFitsRows() {
			w.Pack(true)
			mu.Lock()
			m.PackedBytes += int64(len(w.PackedData()))
			mu.Unlock()
		}
		return nil
	}
	rows := w.Pack(false)
	osmem.DropPages(rows, m.opts.Mlock)
	mu.Lock()
	defer mu.Unlock()
	m.PackedBytes += int64(len(w.PackedData()))
	if m.opts.Mlock {
		data := w.PackedData()
		if err := osmem.Lock(data); err != nil {
			return fmt.Errorf("--mlock of %s's packed copy: %w", w.Name, err)
		}
		m.unmap = append(m.unmap, func() error { return osmem.Unlock(data) })
	}
	return nil
}

// inMap reports whether b lies in one of the model's file mappings.
func (m *Model) inMap(b []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, mp := range m.maps {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(mp)))
		if p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(mp)) {
			return true
		}
	}
	return false
}

// terMatrix returns the tensor stored for e (a ternary layout of a tensor
// with ne = [cols, rows, n...]) as one matrix of rows*n rows, with the
// kernel of its layout and original type.
func (ts *tensorSet) terMatrix(e layout.Entry, cols int, dims ...int) (*Matrix, error) {
	st, err := layout.Stored(gguf.TensorInfo{Name: e.Original(), Dims: []uint64{uint64(cols)}, Type: e.From}, e.Kind)
	if err != nil {
		return nil, err
	}
	t, err := ts.get(e.Name, false, append([]int{int(st.Dims[0])}, dims...)...)
	if err != nil {
		return nil, err
	}
	data, ok := ts.data[e.Name]
	if !ok {
		return nil, fmt.Errorf("tensor %q: experts in layout %s cannot be paged (restore them with gguf layout --ternary none)", e.Name, e.Kind)
	}
	rows := 1
	for _, d := range t.Dims[1:] {
		rows *= int(d)
	}
	return kernels.NewTernaryMatrix(e, t.Type, cols, rows, int(st.Dims[0]), data)
}
