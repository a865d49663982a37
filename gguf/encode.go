package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

var le = binary.LittleEndian

func appendString(b []byte, s string) []byte {
	b = le.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue encodes v without its type tag.
func appendValue(b []byte, v Value) ([]byte, error) {
	switch x := v.v.(type) {
	case uint8:
		return append(b, x), nil
	case int8:
		return append(b, byte(x)), nil
	case uint16:
		return le.AppendUint16(b, x), nil
	case int16:
		return le.AppendUint16(b, uint16(x)), nil
	case uint32:
		return le.AppendUint32(b, x), nil
	case int32:
		return le.AppendUint32(b, uint32(x)), nil
	case float32:
		return le.AppendUint32(b, math.Float32bits(x)), nil
	case bool:
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case string:
		return appendString(b, x), nil
	case uint64:
		return le.AppendUint64(b, x), nil
	case int64:
		return le.AppendUint64(b, uint64(x)), nil
	case float64:
		return le.AppendUint64(b, math.Float64bits(x)), nil
	}
	if v.typ != TypeArray {
		return nil, fmt.Errorf("gguf: cannot encode value of Go type %T", v.v)
	}
	b = le.AppendUint32(b, uint32(v.elem))
	n := v.Len()
	b = le.AppendUint64(b, uint64(n))
	switch a := v.v.(type) {
	case []uint8:
		return append(b, a...), nil
	case []string:
		for _, s := range a {
			b = appendString(b, s)
		}
		return b, nil
	case []float32:
		for _, f := range a {
			b = le.AppendUint32(b, math.Float32bits(f))
		}
		return b, nil
	case []int32:
		for _, x := range a {
			b = le.AppendUint32(b, uint32(x))
		}
		return b, nil
	}
	var err error
	for i := range n {
		if b, err = appendValue(b, v.Index(i)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendHeader encodes f's header (without the padding that follows it).
func appendHeader(b []byte, f *File) ([]byte, error) {
	b = append(b, Magic...)
	b = le.AppendUint32(b, f.Version)
	b = le.AppendUint64(b, uint64(len(f.Tensors)))
	b = le.AppendUint64(b, uint64(f.Metadata.Len()))
	var err error
	for _, kv := range f.Metadata.KVs() {
		b = appendString(b, kv.Key)
		b = le.AppendUint32(b, uint32(kv.Value.typ))
		if b, err = appendValue(b, kv.Value); err != nil {
			return nil, fmt.Errorf("key %q: %w", kv.Key, err)
		}
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		b = appendString(b, t.Name)
		b = le.AppendUint32(b, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			b = le.AppendUint64(b, d)
		}
		b = le.AppendUint32(b, uint32(t.Type))
		b = le.AppendUint64(b, t.Offset)
	}
	return b, nil
}
