package gguf

import "fmt"

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}

// Metadata is a GGUF file's key-value section: an ordered map that keeps
// keys in file order, so that a file read and written back is unchanged.
// The zero value is an empty, usable Metadata.
type Metadata struct {
	kvs   []KV
	index map[string]int
}

// NewMetadata returns metadata holding kvs in order. Duplicate keys are an
// error, as in llama.cpp's loader.
func NewMetadata(kvs ...KV) (*Metadata, error) {
	m := &Metadata{}
	for _, kv := range kvs {
		if _, dup := m.Get(kv.Key); dup {
			return nil, fmt.Errorf("duplicate metadata key %q", kv.Key)
		}
		m.Set(kv.Key, kv.Value)
	}
	return m, nil
}

// Len returns the number of keys.
func (m *Metadata) Len() int { return len(m.kvs) }

// KVs returns the key-value pairs in order. The slice must not be modified.
func (m *Metadata) KVs() []KV { return m.kvs }

// Keys returns the keys in order.
func (m *Metadata) Keys() []string {
	keys := make([]string, len(m.kvs))
	for i, kv := range m.kvs {
		keys[i] = kv.Key
	}
	return keys
}

func (m *Metadata) reindex() {
	m.index = make(map[string]int, len(m.kvs))
	for i, kv := range m.kvs {
		m.index[kv.Key] = i
	}
}

// Get returns the value of key.
func (m *Metadata) Get(key string) (Value, bool) {
	if m.index == nil {
		m.reindex()
	}
	i, ok := m.index[key]
	if !ok {
		return Value{}, false
	}
	return m.kvs[i].Value, true
}

// Set replaces the value of key in place, or appends key at the end.
func (m *Metadata) Set(key string, v Value) {
	if m.index == nil {
		m.reindex()
	}
	if i, ok := m.index[key]; ok {
		m.kvs[i].Value = v
		return
	}
	m.index[key] = len(m.kvs)
	m.kvs = append(m.kvs, KV{key, v})
}

// Delete removes key, reporting whether it was present.
func (m *Metadata) Delete(key string) bool {
	if _, ok := m.Get(key); !ok {
		return false
	}
	i := m.index[key]
	m.kvs = append(m.kvs[:i:i], m.kvs[i+1:]...)
	m.reindex()
	return true
}

// Clone returns a copy of m whose order and values can be changed without
// touching m (array slices are shared: values are never modified in place).
func (m *Metadata) Clone() *Metadata {
	c := &Metadata{kvs: append([]KV(nil), m.kvs...)}
	c.reindex()
	return c
}

// String returns the string value of key, or "" when absent or not a string.
func (m *Metadata) String(key string) string {
	v, _ := m.Get(key)
	s, _ := v.Str()
	return s
}

// Uint returns the unsigned integer value of key (any integer width).
func (m *Metadata) Uint(key string) (uint64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	return v.Uint()
}

// Architecture returns general.architecture ("llama", "qwen2"...), the prefix
// of the model's hyper-parameter keys.
func (m *Metadata) Architecture() string { return m.String(KeyArchitecture) }

// ArchUint returns the unsigned value of "<architecture>.<suffix>", e.g.
// ArchUint("context_length").
func (m *Metadata) ArchUint(suffix string) (uint64, bool) {
	return m.Uint(m.Architecture() + "." + suffix)
}

// Well-known keys.
const (
	KeyArchitecture = "general.architecture"
	KeyAlignment    = "general.alignment"
	KeyName         = "general.name"
	KeyFileType     = "general.file_type"
	KeyTokens       = "tokenizer.ggml.tokens"
	KeyTokenType    = "tokenizer.ggml.token_type"
	KeySplitNo      = "split.no"
	KeySplitCount   = "split.count"
	KeySplitTensors = "split.tensors.count"
)
