package gguf

import (
	"fmt"
	"math"
	"strconv"
)

// ValueType is the type tag of a GGUF metadata value (gguf_type).
type ValueType uint32

// The 13 GGUF metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// valueTypeSizes is the encoded size of one scalar; 0 for variable-size types.
var valueTypeSizes = [...]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// String returns the short name llama.cpp's gguf-dump uses ("u32", "str", "arr").
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("gguf_type(%d)", uint32(t))
}

// Valid reports whether t is one of the 13 GGUF value types.
func (t ValueType) Valid() bool { return int(t) < len(valueTypeNames) }

// ParseValueType returns the value type with the short name s ("u32", "f32",
// "str", "bool"...). Long names as gguf-py spells them ("uint32", "float32",
// "string") are accepted too.
func ParseValueType(s string) (ValueType, error) {
	for i, n := range valueTypeNames {
		if n == s {
			return ValueType(i), nil
		}
	}
	long := map[string]ValueType{
		"uint8": TypeUint8, "int8": TypeInt8, "uint16": TypeUint16, "int16": TypeInt16,
		"uint32": TypeUint32, "int32": TypeInt32, "float32": TypeFloat32, "string": TypeString,
		"array": TypeArray, "uint64": TypeUint64, "int64": TypeInt64, "float64": TypeFloat64,
	}
	if t, ok := long[s]; ok {
		return t, nil
	}
	return 0, fmt.Errorf("unknown GGUF value type %q (want u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool or str)", s)
}

// minEncodedSize is the fewest bytes one value of type t can take in a file:
// used to refuse counts that cannot fit in the bytes that remain.
func (t ValueType) minEncodedSize() int64 {
	switch t {
	case TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return int64(valueTypeSizes[t])
}

// Value is one GGUF metadata value. Scalars hold the Go type that matches
// their GGUF type exactly (uint8 ... float64, bool, string), so a value read
// from a file is written back bit for bit. Arrays hold a typed slice:
// []uint8 ... []float64, []bool, []string, or []Value for nested arrays.
type Value struct {
	typ  ValueType
	elem ValueType // element type when typ == TypeArray
	v    any
}

// Type returns the value's GGUF type (TypeArray for arrays).
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array value.
func (v Value) ElemType() ValueType { return v.elem }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.typ == TypeArray }

// Interface returns the Go value held: a scalar or a typed slice.
func (v Value) Interface() any { return v.v }

// Len returns the number of elements of an array value, 1 for a scalar.
func (v Value) Len() int {
	if v.typ != TypeArray {
		return 1
	}
	switch a := v.v.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// Index returns element i of an array value as a Value.
func (v Value) Index(i int) Value {
	switch a := v.v.(type) {
	case []uint8:
		return Value{typ: TypeUint8, v: a[i]}
	case []int8:
		return Value{typ: TypeInt8, v: a[i]}
	case []uint16:
		return Value{typ: TypeUint16, v: a[i]}
	case []int16:
		return Value{typ: TypeInt16, v: a[i]}
	case []uint32:
		return Value{typ: TypeUint32, v: a[i]}
	case []int32:
		return Value{typ: TypeInt32, v: a[i]}
	case []float32:
		return Value{typ: TypeFloat32, v: a[i]}
	case []bool:
		return Value{typ: TypeBool, v: a[i]}
	case []string:
		return Value{typ: TypeString, v: a[i]}
	case []uint64:
		return Value{typ: TypeUint64, v: a[i]}
	case []int64:
		return Value{typ: TypeInt64, v: a[i]}
	case []float64:
		return Value{typ: TypeFloat64, v: a[i]}
	case []Value:
		return a[i]
	}
	panic("gguf: Index on a scalar value")
}

// Uint returns an integer value of any width as uint64. ok is false for
// non-integers and for negative signed values.
func (v Value) Uint() (uint64, bool) {
	switch x := v.v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8, int16, int32, int64:
		i, _ := v.Int()
		if i < 0 {
			return 0, false
		}
		return uint64(i), true
	}
	return 0, false
}

// Int returns an integer value of any width as int64. ok is false for
// non-integers and for unsigned values above math.MaxInt64.
func (v Value) Int() (int64, bool) {
	switch x := v.v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8, uint16, uint32, uint64:
		u, _ := v.Uint()
		if u > math.MaxInt64 {
			return 0, false
		}
		return int64(u), true
	}
	return 0, false
}

// Float returns a float or integer value as float64.
func (v Value) Float() (float64, bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if i, ok := v.Int(); ok {
		return float64(i), true
	}
	if u, ok := v.Uint(); ok {
		return float64(u), true
	}
	return 0, false
}

// Str returns a string value.
func (v Value) Str() (string, bool) {
	s, ok := v.v.(string)
	return s, ok
}

// Bool returns a bool value.
func (v Value) Bool() (bool, bool) {
	b, ok := v.v.(bool)
	return b, ok
}

// Strings returns the elements of a string array.
func (v Value) Strings() ([]string, bool) {
	s, ok := v.v.([]string)
	return s, ok
}

// Float32s returns the elements of an f32 array.
func (v Value) Float32s() ([]float32, bool) {
	s, ok := v.v.([]float32)
	return s, ok
}

// Int32s returns the elements of an i32 array.
func (v Value) Int32s() ([]int32, bool) {
	s, ok := v.v.([]int32)
	return s, ok
}

// Ints returns the elements of an integer array of any width as int64.
func (v Value) Ints() ([]int64, bool) {
	if v.typ != TypeArray {
		return nil, false
	}
	switch v.elem {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
	default:
		return nil, false
	}
	n := v.Len()
	out := make([]int64, n)
	for i := range n {
		x, ok := v.Index(i).Int()
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// Constructors for each GGUF type.

// Uint8 returns a u8 value.
func Uint8(x uint8) Value { return Value{typ: TypeUint8, v: x} }

// Int8 returns an i8 value.
func Int8(x int8) Value { return Value{typ: TypeInt8, v: x} }

// Uint16 returns a u16 value.
func Uint16(x uint16) Value { return Value{typ: TypeUint16, v: x} }

// Int16 returns an i16 value.
func Int16(x int16) Value { return Value{typ: TypeInt16, v: x} }

// Uint32 returns a u32 value.
func Uint32(x uint32) Value { return Value{typ: TypeUint32, v: x} }

// Int32 returns an i32 value.
func Int32(x int32) Value { return Value{typ: TypeInt32, v: x} }

// Float32 returns an f32 value.
func Float32(x float32) Value { return Value{typ: TypeFloat32, v: x} }

// Bool returns a bool value.
func Bool(x bool) Value { return Value{typ: TypeBool, v: x} }

// String returns a str value.
func String(x string) Value { return Value{typ: TypeString, v: x} }

// Uint64 returns a u64 value.
func Uint64(x uint64) Value { return Value{typ: TypeUint64, v: x} }

// Int64 returns an i64 value.
func Int64(x int64) Value { return Value{typ: TypeInt64, v: x} }

// Float64 returns an f64 value.
func Float64(x float64) Value { return Value{typ: TypeFloat64, v: x} }

// Array returns an array value holding the typed slice s, which must be one
// of []uint8 ... []float64, []bool, []string, or []Value (a nested array,
// whose elements must all be arrays).
func Array(s any) (Value, error) {
	var elem ValueType
	switch a := s.(type) {
	case []uint8:
		elem = TypeUint8
	case []int8:
		elem = TypeInt8
	case []uint16:
		elem = TypeUint16
	case []int16:
		elem = TypeInt16
	case []uint32:
		elem = TypeUint32
	case []int32:
		elem = TypeInt32
	case []float32:
		elem = TypeFloat32
	case []bool:
		elem = TypeBool
	case []string:
		elem = TypeString
	case []uint64:
		elem = TypeUint64
	case []int64:
		elem = TypeInt64
	case []float64:
		elem = TypeFloat64
	case []Value:
		elem = TypeArray
		for i, e := range a {
			if e.typ != TypeArray {
				return Value{}, fmt.Errorf("nested array element %d is a %s, not an array", i, e.typ)
			}
		}
	default:
		return Value{}, fmt.Errorf("cannot make a GGUF array from %T", s)
	}
	return Value{typ: TypeArray, elem: elem, v: s}, nil
}

// MustArray is Array for slices known to be valid; it panics otherwise.
func MustArray(s any) Value {
	v, err := Array(s)
	if err != nil {
		panic(err)
	}
	return v
}

// ParseValue parses text as a scalar value of type t: integers in decimal
// (or 0x hex), floats as strconv reads them, bools as true/false/1/0.
func ParseValue(t ValueType, text string) (Value, error) {
	bad := func(err error) (Value, error) {
		return Value{}, fmt.Errorf("%q is not a valid %s: %v", text, t, err)
	}
	switch t {
	case TypeUint8, TypeUint16, TypeUint32, TypeUint64:
		bits := map[ValueType]int{TypeUint8: 8, TypeUint16: 16, TypeUint32: 32, TypeUint64: 64}[t]
		u, err := strconv.ParseUint(text, 0, bits)
		if err != nil {
			return bad(err)
		}
		switch t {
		case TypeUint8:
			return Uint8(uint8(u)), nil
		case TypeUint16:
			return Uint16(uint16(u)), nil
		case TypeUint32:
			return Uint32(uint32(u)), nil
		}
		return Uint64(u), nil
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		bits := map[ValueType]int{TypeInt8: 8, TypeInt16: 16, TypeInt32: 32, TypeInt64: 64}[t]
		i, err := strconv.ParseInt(text, 0, bits)
		if err != nil {
			return bad(err)
		}
		switch t {
		case TypeInt8:
			return Int8(int8(i)), nil
		case TypeInt16:
			return Int16(int16(i)), nil
		case TypeInt32:
			return Int32(int32(i)), nil
		}
		return Int64(i), nil
	case TypeFloat32:
		f, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return bad(err)
		}
		return Float32(float32(f)), nil
	case TypeFloat64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return bad(err)
		}
		return Float64(f), nil
	case TypeBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return bad(err)
		}
		return Bool(b), nil
	case TypeString:
		return String(text), nil
	}
	return Value{}, fmt.Errorf("cannot parse a scalar of type %s", t)
}

// Equal reports whether a and b have the same type and the same bits
// (floats are compared bit for bit, so NaN equals the same NaN).
func (v Value) Equal(b Value) bool {
	if v.typ != b.typ || v.elem != b.elem {
		return false
	}
	if v.typ != TypeArray {
		return scalarEqual(v.v, b.v)
	}
	n := v.Len()
	if n != b.Len() {
		return false
	}
	switch x := v.v.(type) {
	case []float32:
		y := b.v.([]float32)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case []string:
		y := b.v.([]string)
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	case []int32:
		y := b.v.([]int32)
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	for i := range n {
		if !v.Index(i).Equal(b.Index(i)) {
			return false
		}
	}
	return true
}

func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

// Format returns the value as text the way llama.cpp's gguf dump prints it:
// strings quoted, floats with %.9g (f32) or %.17g (f64), arrays as
// elements separated by spaces. At most maxElems array elements are printed
// (all when maxElems < 0), followed by "... (N more)".
func (v Value) Format(maxElems int) string {
	if v.typ != TypeArray {
		return formatScalar(v)
	}
	n := v.Len()
	show := n
	if maxElems >= 0 && show > maxElems {
		show = maxElems
	}
	b := make([]byte, 0, 16*show+32)
	for i := range show {
		if i > 0 {
			b = append(b, ' ')
		}
		e := v.Index(i)
		if e.typ == TypeArray {
			b = append(b, '[')
			b = append(b, e.Format(maxElems)...)
			b = append(b, ']')
		} else {
			b = append(b, formatScalar(e)...)
		}
	}
	if show < n {
		b = fmt.Appendf(b, " ... (%d more)", n-show)
	}
	return string(b)
}

func formatScalar(v Value) string {
	switch x := v.v.(type) {
	case string:
		return strconv.Quote(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', 9, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', 17, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v.v)
}

// TypeString describes the value's type as gguf-dump does: "u32", "str",
// "arr[str,512]".
func (v Value) TypeString() string {
	if v.typ != TypeArray {
		return v.typ.String()
	}
	return fmt.Sprintf("arr[%s,%d]", v.elem, v.Len())
}

// ArrayOfScalars builds an array of element type et from scalar values of
// that type (as ParseValue returns them).
func ArrayOfScalars(et ValueType, vals []Value) (Value, error) {
	for i, v := range vals {
		if v.typ != et {
			return Value{}, fmt.Errorf("element %d is a %s, not a %s", i, v.typ, et)
		}
	}
	switch et {
	case TypeUint8:
		return Array(collect[uint8](vals))
	case TypeInt8:
		return Array(collect[int8](vals))
	case TypeUint16:
		return Array(collect[uint16](vals))
	case TypeInt16:
		return Array(collect[int16](vals))
	case TypeUint32:
		return Array(collect[uint32](vals))
	case TypeInt32:
		return Array(collect[int32](vals))
	case TypeFloat32:
		return Array(collect[float32](vals))
	case TypeBool:
		return Array(collect[bool](vals))
	case TypeString:
		return Array(collect[string](vals))
	case TypeUint64:
		return Array(collect[uint64](vals))
	case TypeInt64:
		return Array(collect[int64](vals))
	case TypeFloat64:
		return Array(collect[float64](vals))
	}
	return Value{}, fmt.Errorf("cannot make an array of %s from scalars", et)
}

func collect[T any](vals []Value) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = v.v.(T)
	}
	return out
}
