package ops

import (
	"errors"
	"fmt"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/plan"
)

// LayoutNone, as ExpertsLayout or TernaryLayout, restores the tensors of
// that family of layouts to their original types.
const LayoutNone = "none"

// Layouts says which tensors a build repacked or restored.
type Layouts struct {
	Packed   []layout.Entry // tensors put in a layout
	Restored []layout.Entry // tensors restored from one
	// Kept lists expert tensors q2lut left alone (not Q2_K).
	Kept []string
}

// ParseLayout checks a --experts (q2lut|none) or --ternary (ter3|ter2|
// ter2s128|none) value.
func ParseLayout(flag, v string, ternary bool) error {
	if v == "" || v == LayoutNone {
		return nil
	}
	k, err := layout.ParseKind(v)
	if err == nil && k.Ternary() == ternary {
		return nil
	}
	if ternary {
		return fmt.Errorf("%s %q: want ter3, ter2, ter2s128 or none", flag, v)
	}
	return fmt.Errorf("%s %q: want q2lut or none", flag, v)
}

// applyLayouts repacks or restores tensors as opts.ExpertsLayout and
// opts.TernaryLayout say, as transforms of their producers, and records the
// result in the layout metadata arrays.
func applyLayouts(p *plan.Plan, opts Options) (*Layouts, error) {
	if err := ParseLayout("--experts-layout", opts.ExpertsLayout, false); err != nil {
		return nil, err
	}
	if err := ParseLayout("--ternary-layout", opts.TernaryLayout, true); err != nil {
		return nil, err
	}
	es, err := layout.Entries(p.Metadata)
	if err != nil {
		return nil, err
	}
	entry := map[string]layout.Entry{}
	for _, e := range es {
		if p.Index(e.Name) < 0 {
			return nil, fmt.Errorf("layout metadata names tensor %q, which the file does not have", e.Name)
		}
		entry[e.Name] = e
	}
	rep := &Layouts{}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		e, ok := entry[t.Info.Name]
		if !ok {
			continue
		}
		if (e.Kind == layout.Q2LUT && opts.ExpertsLayout == LayoutNone) || (e.Kind.Ternary() && opts.TernaryLayout == LayoutNone) {
			if err := restore(t, e); err != nil {
				return nil, err
			}
			delete(entry, e.Name)
			rep.Restored = append(rep.Restored, e)
		}
	}
	if opts.ExpertsLayout == string(layout.Q2LUT) {
		if err := packExperts(p, entry, rep); err != nil {
			return nil, err
		}
	}
	if k := layout.Kind(opts.TernaryLayout); k.Ternary() {
		if !k.Lossless() && !opts.LossyLayout {
			return nil, fmt.Errorf("layout %s merges two scales into one (lossy for Q2_0): add --lossy to accept that", k)
		}
		n := 0
		for i := range p.Tensors {
			t := &p.Tensors[i]
			if _, done := entry[t.Info.Name]; done || layout.Supports(k, t.Info.Type) != nil {
				continue
			}
			e, err := pack(t, k, 0)
			if err != nil {
				return nil, err
			}
			entry[e.Name] = e
			rep.Packed = append(rep.Packed, e)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("layout %s: the model has no Q2_0, TQ1_0 or TQ2_0 tensor to repack", k)
		}
	}
	es = es[:0]
	for _, t := range p.Tensors {
		if e, ok := entry[t.Info.Name]; ok {
			es = append(es, e)
		}
	}
	layout.SetEntries(p.Metadata, es)
	return rep, nil
}

// packExperts puts every Q2_K expert tensor of an experts-last plan in the
// q2lut layout.
func packExperts(p *plan.Plan, entry map[string]layout.Entry, rep *Layouts) error {
	view, err := p.Layout()
	if err != nil {
		return err
	}
	info := experts.Describe(view)
	if info == nil {
		return fmt.Errorf("layout q2lut: the model has no expert tensors (*_exps)")
	}
	if !info.Last {
		return fmt.Errorf("layout q2lut needs the experts last (gguf build --experts-last first, or with it)")
	}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		if _, done := entry[t.Info.Name]; done || !experts.IsExpert(t.Info.Name) {
			continue
		}
		if t.Info.Type != gguf.TypeQ2_K {
			rep.Kept = append(rep.Kept, t.Info.Name)
			continue
		}
		e, err := pack(t, layout.Q2LUT, rowsPerExpert(t.Info))
		if err != nil {
			return err
		}
		entry[e.Name] = e
		rep.Packed = append(rep.Packed, e)
	}
	if len(rep.Packed) == 0 {
		return fmt.Errorf("layout q2lut: no expert tensor is Q2_K (quantize them first, e.g. --tensor-type '_exps=q2_K')")
	}
	return nil
}

// rowsPerExpert is ne1 of an expert tensor [ne0, ne1, n_expert].
func rowsPerExpert(t gguf.TensorInfo) int64 {
	if len(t.Dims) < 2 {
		return 1
	}
	return int64(t.Dims[1])
}

// layoutChunk is the rows converted at a time: about 16 MiB of whole
// experts (of unit rows each; at least one), never more than the tensor's
// rows, so small tensors get small buffers.
func layoutChunk(t gguf.TensorInfo, unit int64) int64 {
	rb := max(t.RowBytes(), 1)
	return min(int64(t.NumRows()), unit*max(1, (16<<20)/(unit*rb)))
}

// pack wraps t's producer in the transform to layout k and renames it.
func pack(t *plan.Tensor, k layout.Kind, expertRows int64) (layout.Entry, error) {
	orig := t.Info
	st, err := layout.Stored(orig, k)
	if err != nil {
		return layout.Entry{}, err
	}
	ne0 := int64(orig.Dims[0])
	tr := &plan.Transform{Inner: t.Src, InRowBytes: orig.RowBytes(), OutRowBytes: st.RowBytes(), Note: "repack to " + string(k),
		ChunkRows: layoutChunk(orig, max(expertRows, 1))}
	if k == layout.Q2LUT {
		tr.Fn = func(dst, src []byte, _ int64) error { return layout.PackQ2LUT(dst, src, ne0, expertRows) }
	} else {
		tr.Fn = func(dst, src []byte, first int64) error {
			err := layout.PackTernary(k, orig.Type, dst, src, ne0, first)
			var be *layout.BlockError
			if errors.As(err, &be) {
				be.Tensor = orig.Name
				return fmt.Errorf("layout %s: %w", k, be)
			}
			return err
		}
	}
	t.Src = tr
	st.Offset = 0
	t.Info = st
	return layout.Entry{Name: st.Name, Kind: k, From: orig.Type}, nil
}

// restore wraps t's producer in the transform back from entry e's layout.
func restore(t *plan.Tensor, e layout.Entry) error {
	st := t.Info
	orig, err := layout.Original(st, e)
	if err != nil {
		return err
	}
	ne0 := int64(orig.Dims[0])
	rows := rowsPerExpert(orig)
	tr := &plan.Transform{Inner: t.Src, InRowBytes: st.RowBytes(), OutRowBytes: orig.RowBytes(), Note: "restore from " + string(e.Kind),
		ChunkRows: layoutChunk(orig, rows)}
	if e.Kind == layout.Q2LUT {
		tr.Fn = func(dst, src []byte, _ int64) error { return layout.UnpackQ2LUT(dst, src, ne0, rows) }
	} else {
		tr.Fn = func(dst, src []byte, first int64) error {
			if err := layout.UnpackTernary(e.Kind, e.From, dst, src, ne0, first); err != nil {
				return fmt.Errorf("tensor %q: %w", st.Name, err)
			}
			return nil
		}
	}
	t.Src = tr
	t.Info = orig
	return nil
}

// hasLayouts reports whether the plan holds repacked tensors, which the
// operations that read tensor values (quantization, head pruning) must not
// see as their stored type.
func hasLayouts(p *plan.Plan) bool {
	_, ok := p.Metadata.Get(layout.KeyTensors)
	return ok
}
