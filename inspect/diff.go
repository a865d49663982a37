package inspect

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"

	"github.com/ggufkit/gguf/gguf"
)

// TensorData returns a reader of tensor i's bytes. Compare calls it with
// increasing i, so a stream source can serve it front to back.
type TensorData func(i int) (io.Reader, error)

// ValueChange is one metadata key whose value differs.
type ValueChange struct {
	Key   string `json:"key"`
	AType string `json:"a_type"`
	A     any    `json:"a"`
	BType string `json:"b_type"`
	B     any    `json:"b"`
}

// TensorChange is one tensor present in both files that differs.
type TensorChange struct {
	Name    string   `json:"name"`
	Changes []string `json:"changes"` // "type", "shape", "offset", "data"
	A       Tensor   `json:"a"`
	B       Tensor   `json:"b"`
	ASHA256 string   `json:"a_sha256,omitempty"`
	BSHA256 string   `json:"b_sha256,omitempty"`
}

// Diff is the comparison of two GGUF files, as `gguf diff --json` prints it.
type Diff struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Same bool   `json:"same"`
	// Header differences: version, alignment.
	Header []string `json:"header"`
	// KeysAdded are in B only, KeysRemoved in A only.
	KeysAdded   []KV          `json:"keys_added"`
	KeysRemoved []KV          `json:"keys_removed"`
	KeysChanged []ValueChange `json:"keys_changed"`
	// KeyOrderDiffers is informational: the same keys in another order.
	KeyOrderDiffers bool           `json:"key_order_differs"`
	TensorsAdded    []Tensor       `json:"tensors_added"`
	TensorsRemoved  []Tensor       `json:"tensors_removed"`
	TensorsChanged  []TensorChange `json:"tensors_changed"`
	// DataCompared is false when tensor data was not read (headers only).
	DataCompared bool `json:"data_compared"`
	// TensorOrderDiffers is informational: the same tensors in another order.
	TensorOrderDiffers bool `json:"tensor_order_differs"`
	// Numeric holds value differences (gguf diff --numeric).
	Numeric []NumericDiff `json:"numeric,omitempty"`
}

// Compare compares the headers of a and b and, when dataA and dataB are
// given, the bytes of every tensor both have with the same size (sha256).
func Compare(nameA string, a *gguf.File, dataA TensorData, nameB string, b *gguf.File, dataB TensorData) (*Diff, error) {
	d := &Diff{A: nameA, B: nameB}
	if a.Version != b.Version {
		d.Header = append(d.Header, fmt.Sprintf("version %d -> %d", a.Version, b.Version))
	}
	if a.Alignment != b.Alignment {
		d.Header = append(d.Header, fmt.Sprintf("alignment %d -> %d", a.Alignment, b.Alignment))
	}
	for _, kv := range a.Metadata.KVs() {
		bv, ok := b.Metadata.Get(kv.Key)
		switch {
		case !ok:
			d.KeysRemoved = append(d.KeysRemoved, kvJSON(kv))
		case !kv.Value.Equal(bv):
			d.KeysChanged = append(d.KeysChanged, ValueChange{Key: kv.Key,
				AType: kv.Value.TypeString(), A: ValueJSON(kv.Value), BType: bv.TypeString(), B: ValueJSON(bv)})
		}
	}
	for _, kv := range b.Metadata.KVs() {
		if _, ok := a.Metadata.Get(kv.Key); !ok {
			d.KeysAdded = append(d.KeysAdded, kvJSON(kv))
		}
	}
	d.KeyOrderDiffers = !slices.Equal(common(a.Metadata.Keys(), b.Metadata), common(b.Metadata.Keys(), a.Metadata))

	sa, sb := Summarize(nameA, a, -1), Summarize(nameB, b, -1)
	var namesA, namesB []string
	want := map[string]bool{}
	for i := range a.Tensors {
		ta := &a.Tensors[i]
		namesA = append(namesA, ta.Name)
		j := b.TensorIndex(ta.Name)
		if j < 0 {
			d.TensorsRemoved = append(d.TensorsRemoved, sa.Tensors[i])
			continue
		}
		tb := &b.Tensors[j]
		var ch []string
		if ta.Type != tb.Type {
			ch = append(ch, "type")
		}
		if !slices.Equal(ta.Dims, tb.Dims) {
			ch = append(ch, "shape")
		}
		if ta.Offset != tb.Offset {
			ch = append(ch, "offset")
		}
		if ta.Size() == tb.Size() {
			want[ta.Name] = true
		} else {
			ch = append(ch, "data")
		}
		d.TensorsChanged = append(d.TensorsChanged, TensorChange{Name: ta.Name, Changes: ch, A: sa.Tensors[i], B: sb.Tensors[j]})
	}
	for i := range b.Tensors {
		namesB = append(namesB, b.Tensors[i].Name)
		if a.TensorIndex(b.Tensors[i].Name) < 0 {
			d.TensorsAdded = append(d.TensorsAdded, sb.Tensors[i])
		}
	}
	d.TensorOrderDiffers = !slices.Equal(commonNames(namesA, namesB), commonNames(namesB, namesA))

	if dataA != nil && dataB != nil {
		d.DataCompared = true
		ha, err := hashTensors(a, dataA, want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameA, err)
		}
		hb, err := hashTensors(b, dataB, want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameB, err)
		}
		for i := range d.TensorsChanged {
			c := &d.TensorsChanged[i]
			c.ASHA256, c.BSHA256 = ha[c.Name], hb[c.Name]
			if want[c.Name] && c.ASHA256 != c.BSHA256 {
				c.Changes = append(c.Changes, "data")
			}
		}
	}
	// Keep only the tensors that really changed.
	changed := d.TensorsChanged[:0]
	for _, c := range d.TensorsChanged {
		if len(c.Changes) > 0 {
			changed = append(changed, c)
		}
	}
	d.TensorsChanged = changed
	// --json prints empty lists as [], not null: scripts index them.
	d.Header = nonNil(d.Header)
	d.KeysAdded = nonNil(d.KeysAdded)
	d.KeysRemoved = nonNil(d.KeysRemoved)
	d.KeysChanged = nonNil(d.KeysChanged)
	d.TensorsAdded = nonNil(d.TensorsAdded)
	d.TensorsRemoved = nonNil(d.TensorsRemoved)
	d.TensorsChanged = nonNil(d.TensorsChanged)
	d.Same = len(d.Header) == 0 && len(d.KeysAdded) == 0 && len(d.KeysRemoved) == 0 && len(d.KeysChanged) == 0 &&
		len(d.TensorsAdded) == 0 && len(d.TensorsRemoved) == 0 && len(d.TensorsChanged) == 0
	return d, nil
}

// nonNil returns s, or an empty slice for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// common returns the keys of ks that other also has, in ks's order.
func common(ks []string, other *gguf.Metadata) []string {
	var out []string
	for _, k := range ks {
		if _, ok := other.Get(k); ok {
			out = append(out, k)
		}
	}
	return out
}

func commonNames(a, b []string) []string {
	in := map[string]bool{}
	for _, n := range b {
		in[n] = true
	}
	var out []string
	for _, n := range a {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}

// hashTensors hashes the tensors named in want, reading data in file order.
func hashTensors(f *gguf.File, data TensorData, want map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	h := sha256.New()
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if !want[t.Name] {
			continue
		}
		r, err := data(i)
		if err != nil {
			return nil, err
		}
		h.Reset()
		n, err := io.Copy(h, r)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if n != t.Size() {
			return nil, fmt.Errorf("tensor %q: read %d of %d bytes", t.Name, n, t.Size())
		}
		out[t.Name] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}
