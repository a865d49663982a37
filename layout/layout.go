package layout

import (
	"fmt"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// Kind names a layout. It is also the suffix of a repacked tensor's name.
type Kind string

// The layouts (byte formats in docs/layouts.md).
const (
	// Q2LUT regroups Q2_K expert rows, 16 rows x 256 columns at a time, for
	// table-lookup kernels. Same size as Q2_K; lossless.
	Q2LUT Kind = "q2lut"
	// Ter3 stores ternary weights as base-3 digits, 5 per byte, with one
	// fp16 scale per 64 weights: 1.875 bits/weight; lossless.
	Ter3 Kind = "ter3"
	// Ter2 stores ternary weights as 2-bit fields with one fp16 scale per
	// 64 weights: 2.25 bits/weight; lossless.
	Ter2 Kind = "ter2"
	// Ter2S128 is Ter2 with one fp16 scale per 128 weights (two per-64
	// scales merged): 2.125 bits/weight; lossy for Q2_0.
	Ter2S128 Kind = "ter2s128"
)

// Kinds lists every layout.
var Kinds = []Kind{Q2LUT, Ter3, Ter2, Ter2S128}

// ParseKind parses a layout name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown layout %q (want one of q2lut, ter3, ter2, ter2s128)", s)
}

// Ternary reports whether k is one of the ternary layouts.
func (k Kind) Ternary() bool { return k == Ter3 || k == Ter2 || k == Ter2S128 }

// Lossless reports whether unpacking always restores the original bytes.
// Ter2S128 is lossless only for tensors whose two merged scales are equal
// (TQ1_0 and TQ2_0 always are; Q2_0 rarely is).
func (k Kind) Lossless() bool { return k != Ter2S128 }

// Metadata keys that record the repacked tensors, as three parallel arrays
// in the order of the tensor table. A file without them has no layouts.
const (
	KeyTensors = "ggufkit.layout.tensors" // arr[str]: stored tensor names
	KeyKinds   = "ggufkit.layout.kinds"   // arr[str]: each one's Kind
	KeyTypes   = "ggufkit.layout.types"   // arr[u32]: each one's original ggml type
)

// Entry is one repacked tensor.
type Entry struct {
	Name string    // stored name: the original name + "." + Kind
	Kind Kind      // layout
	From gguf.Type // ggml type of the original tensor
}

// Original returns the tensor's original name.
func (e Entry) Original() string { return strings.TrimSuffix(e.Name, "."+string(e.Kind)) }

// StoredName returns the name a tensor called orig gets in layout k. Stock
// llama.cpp looks tensors up by their original names, so it stops with
// "missing tensor" (or "wrong number of tensors") instead of reading
// repacked bytes as its own type.
func StoredName(orig string, k Kind) (string, error) {
	n := orig + "." + string(k)
	if len(n) >= gguf.MaxNameLen {
		return "", fmt.Errorf("tensor %q: the name with the layout suffix %q is %d bytes, GGUF allows at most %d", orig, "."+string(k), len(n), gguf.MaxNameLen-1)
	}
	return n, nil
}

// KeySeedsQ2LUT is the key the seeds' tools/gguf_q2lut.py sets on a file
// whose Q2_K experts it repacked in place for its table-lookup kernel,
// keeping their names and type: to every other reader they are scrambled
// Q2_K. Its description (groups of 16 rows x 256 columns: fp16 scales,
// the 4-bit scales and mins, pair codes) is this package's q2lut's, but
// the tool is not at hand to check its byte order against docs/layouts.md,
// so such a file is refused, never read as Q2_K.
const KeySeedsQ2LUT = "ipad.expert_layout"

// errSeedsQ2LUT says how to get a file the runtime reads instead.
func errSeedsQ2LUT(v gguf.Value) error {
	s, _ := v.Str()
	return fmt.Errorf("metadata %s = %q: the seeds' tools/gguf_q2lut.py repacked this file's Q2_K experts in place under their Q2_K names, "+
		"so their bytes are not Q2_K, and this toolkit does not read that layout; repack the experts-last Q2_K file it was made from "+
		"with gguf layout ORIGINAL.gguf --experts q2lut -o OUT.gguf (or build it with gguf assemble ... --experts-layout q2lut)", KeySeedsQ2LUT, s)
}

// Entries returns the layouts recorded in md (nil when there are none). A
// file the seeds' q2lut tool wrote (KeySeedsQ2LUT) is an error.
func Entries(md *gguf.Metadata) ([]Entry, error) {
	if v, ok := md.Get(KeySeedsQ2LUT); ok {
		return nil, errSeedsQ2LUT(v)
	}
	nv, ok1 := md.Get(KeyTensors)
	kv, ok2 := md.Get(KeyKinds)
	tv, ok3 := md.Get(KeyTypes)
	if !ok1 && !ok2 && !ok3 {
		return nil, nil
	}
	names, okn := nv.Strings()
	kinds, okk := kv.Strings()
	types, okt := tv.Ints()
	if !ok1 || !ok2 || !ok3 || !okn || !okk || !okt || len(names) != len(kinds) || len(names) != len(types) {
		return nil, fmt.Errorf("metadata %s, %s and %s must be arrays of strings, strings and integers of one length", KeyTensors, KeyKinds, KeyTypes)
	}
	out := make([]Entry, len(names))
	for i := range names {
		k, err := ParseKind(kinds[i])
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", KeyKinds, i, err)
		}
		if !strings.HasSuffix(names[i], "."+kinds[i]) {
			return nil, fmt.Errorf("%s[%d]: tensor %q does not end in .%s", KeyTensors, i, names[i], k)
		}
		from := gguf.Type(types[i])
		if err := Supports(k, from); err != nil || types[i] < 0 {
			return nil, fmt.Errorf("%s[%d]: tensor %q: original type %d cannot be in layout %s", KeyTypes, i, names[i], types[i], k)
		}
		out[i] = Entry{Name: names[i], Kind: k, From: from}
	}
	return out, nil
}

// SetEntries records es in md, replacing what was there; with no entries
// the keys are removed, so packing then unpacking gives back the original
// metadata (the keys are appended after all others).
func SetEntries(md *gguf.Metadata, es []Entry) {
	md.Delete(KeyTensors)
	md.Delete(KeyKinds)
	md.Delete(KeyTypes)
	if len(es) == 0 {
		return
	}
	names := make([]string, len(es))
	kinds := make([]string, len(es))
	types := make([]uint32, len(es))
	for i, e := range es {
		names[i], kinds[i], types[i] = e.Name, string(e.Kind), uint32(e.From)
	}
	md.Set(KeyTensors, gguf.MustArray(names))
	md.Set(KeyKinds, gguf.MustArray(kinds))
	md.Set(KeyTypes, gguf.MustArray(types))
}

// Supports says whether tensors of type t can be put in layout k.
func Supports(k Kind, t gguf.Type) error {
	switch {
	case k == Q2LUT && t == gguf.TypeQ2_K:
		return nil
	case k.Ternary() && (t == gguf.TypeQ2_0 || t == gguf.TypeTQ1_0 || t == gguf.TypeTQ2_0):
		return nil
	case k == Q2LUT:
		return fmt.Errorf("layout q2lut takes Q2_K tensors, not %s", t)
	}
	return fmt.Errorf("layout %s takes Q2_0, TQ1_0 and TQ2_0 tensors, not %s", k, t)
}

// rowBytes returns the bytes of one row of ne0 weights in ternary layout k.
func rowBytes(k Kind, ne0 int64) int64 {
	switch k {
	case Ter3:
		return ne0 / 64 * ter3Group
	case Ter2:
		return ne0 / 64 * ter2Group
	}
	return ne0/128*2 + ne0/4
}

// Stored returns the tensor info of t (type From) repacked in layout k:
// q2lut keeps the type and shape; a ternary layout is an I8 tensor whose
// rows are the repacked rows (ne0 becomes the row's byte count).
func Stored(t gguf.TensorInfo, k Kind) (gguf.TensorInfo, error) {
	if err := Supports(k, t.Type); err != nil {
		return t, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	name, err := StoredName(t.Name, k)
	if err != nil {
		return t, err
	}
	out := gguf.TensorInfo{Name: name, Dims: append([]uint64(nil), t.Dims...), Type: t.Type}
	if k.Ternary() {
		ne0 := int64(t.Dims[0])
		if k == Ter2S128 && ne0%128 != 0 {
			return t, fmt.Errorf("tensor %q: rows of %d weights are not whole groups of 128 (layout ter2s128)", t.Name, ne0)
		}
		out.Type = gguf.TypeI8
		out.Dims[0] = uint64(rowBytes(k, ne0))
	}
	return out, nil
}

// Original returns the tensor info that unpacking the stored tensor t of
// entry e gives back.
func Original(t gguf.TensorInfo, e Entry) (gguf.TensorInfo, error) {
	out := gguf.TensorInfo{Name: e.Original(), Dims: append([]uint64(nil), t.Dims...), Type: e.From}
	if !e.Kind.Ternary() {
		if t.Type != gguf.TypeQ2_K {
			return t, fmt.Errorf("tensor %q: layout q2lut is stored as q2_K, not %s", t.Name, t.Type)
		}
		return out, nil
	}
	if t.Type != gguf.TypeI8 || len(t.Dims) == 0 {
		return t, fmt.Errorf("tensor %q: layout %s is stored as i8, not %s", t.Name, e.Kind, t.Type)
	}
	rb := int64(t.Dims[0])
	var ne0 int64
	switch e.Kind {
	case Ter3:
		ne0 = rb / ter3Group * 64
	case Ter2:
		ne0 = rb / ter2Group * 64
	case Ter2S128:
		ne0 = rb / 34 * 128
	}
	if ne0 == 0 || rowBytes(e.Kind, ne0) != rb || ne0%int64(e.From.BlockSize()) != 0 {
		return t, fmt.Errorf("tensor %q: %d bytes per row is no whole row of layout %s from %s", t.Name, rb, e.Kind, e.From)
	}
	out.Dims[0] = uint64(ne0)
	return out, nil
}

// Parameters returns the weights a stored tensor holds (its original
// element count), for bits/weight.
func Parameters(t gguf.TensorInfo, e Entry) (uint64, error) {
	o, err := Original(t, e)
	if err != nil {
		return 0, err
	}
	return o.NumElements(), nil
}

// BlockError is a block of a tensor that a layout cannot hold.
type BlockError struct {
	Tensor string
	Row    int64 // row of the tensor
	Block  int64 // block of the source type, counted from the tensor's start
	Msg    string
}

func (e *BlockError) Error() string {
	return fmt.Sprintf("tensor %q block %d (row %d): %s", e.Tensor, e.Block, e.Row, e.Msg)
}
