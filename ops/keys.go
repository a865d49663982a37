package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// A keySpec is what llama.cpp's loader accepts for a metadata key: the value
// types it reads ("u32", "arr[i32]"; the loader checks them exactly, it does
// not convert) and whether loading fails without the key.
type keySpec struct {
	types    []string
	required bool
}

// llamaKeys are the metadata keys llama.cpp reads (src/llama-arch.cpp's
// names, the types llama-model-loader and llama-vocab expect), and the
// head.* keys this tool's runtime reads. "{arch}." stands for the value of
// general.architecture. A --set or --del that would break one of them is
// refused unless forced: the file would be written, but nothing could load
// it.
var llamaKeys = map[string]keySpec{
	"general.architecture":         {types: []string{"str"}, required: true},
	"general.name":                 {types: []string{"str"}},
	"general.alignment":            {types: []string{"u32"}},
	"general.file_type":            {types: []string{"u32"}},
	"general.quantization_version": {types: []string{"u32"}},

	"{arch}.context_length":                       {types: []string{"u32"}, required: true},
	"{arch}.embedding_length":                     {types: []string{"u32"}, required: true},
	"{arch}.block_count":                          {types: []string{"u32"}, required: true},
	"{arch}.vocab_size":                           {types: []string{"u32"}},
	"{arch}.feed_forward_length":                  {types: []string{"u32", "arr[u32]", "arr[i32]"}},
	"{arch}.expert_feed_forward_length":           {types: []string{"u32"}},
	"{arch}.expert_count":                         {types: []string{"u32"}},
	"{arch}.expert_used_count":                    {types: []string{"u32"}},
	"{arch}.expert_shared_count":                  {types: []string{"u32"}},
	"{arch}.attention.head_count":                 {types: []string{"u32", "arr[u32]", "arr[i32]"}},
	"{arch}.attention.head_count_kv":              {types: []string{"u32", "arr[u32]", "arr[i32]"}},
	"{arch}.attention.key_length":                 {types: []string{"u32"}},
	"{arch}.attention.value_length":               {types: []string{"u32"}},
	"{arch}.attention.layer_norm_epsilon":         {types: []string{"f32"}},
	"{arch}.attention.layer_norm_rms_epsilon":     {types: []string{"f32"}},
	"{arch}.attention.sliding_window":             {types: []string{"u32"}},
	"{arch}.rope.dimension_count":                 {types: []string{"u32"}},
	"{arch}.rope.freq_base":                       {types: []string{"f32"}},
	"{arch}.rope.scaling.type":                    {types: []string{"str"}},
	"{arch}.rope.scaling.factor":                  {types: []string{"f32"}},
	"{arch}.rope.scaling.original_context_length": {types: []string{"u32"}},

	"tokenizer.ggml.model":                    {types: []string{"str"}},
	"tokenizer.ggml.pre":                      {types: []string{"str"}},
	"tokenizer.ggml.tokens":                   {types: []string{"arr[str]"}},
	"tokenizer.ggml.scores":                   {types: []string{"arr[f32]"}},
	"tokenizer.ggml.token_type":               {types: []string{"arr[i32]"}},
	"tokenizer.ggml.merges":                   {types: []string{"arr[str]"}},
	"tokenizer.ggml.bos_token_id":             {types: []string{"u32"}},
	"tokenizer.ggml.eos_token_id":             {types: []string{"u32"}},
	"tokenizer.ggml.eot_token_id":             {types: []string{"u32"}},
	"tokenizer.ggml.eom_token_id":             {types: []string{"u32"}},
	"tokenizer.ggml.unknown_token_id":         {types: []string{"u32"}},
	"tokenizer.ggml.seperator_token_id":       {types: []string{"u32"}},
	"tokenizer.ggml.padding_token_id":         {types: []string{"u32"}},
	"tokenizer.ggml.mask_token_id":            {types: []string{"u32"}},
	"tokenizer.ggml.add_bos_token":            {types: []string{"bool"}},
	"tokenizer.ggml.add_eos_token":            {types: []string{"bool"}},
	"tokenizer.ggml.add_space_prefix":         {types: []string{"bool"}},
	"tokenizer.ggml.remove_extra_whitespaces": {types: []string{"bool"}},
	"tokenizer.chat_template":                 {types: []string{"str"}},

	"split.no":            {types: []string{"u16"}},
	"split.count":         {types: []string{"u16"}},
	"split.tensors.count": {types: []string{"i32"}},

	"head.rows":       {types: []string{"u32"}},
	"head.vocab_size": {types: []string{"u32"}},
	"head.source":     {types: []string{"str"}},
}

// keySpecFor returns the spec of key in a file of architecture arch.
func keySpecFor(arch, key string) (keySpec, bool) {
	if s, ok := llamaKeys[key]; ok {
		return s, true
	}
	if rest, ok := strings.CutPrefix(key, arch+"."); ok && arch != "" {
		s, ok := llamaKeys["{arch}."+rest]
		return s, ok
	}
	return keySpec{}, false
}

// valueType names v's type as the table does: "u32", "arr[str]".
func valueType(v gguf.Value) string {
	if v.IsArray() {
		return "arr[" + v.ElemType().String() + "]"
	}
	return v.Type().String()
}

// checkSet refuses a value of a type llama.cpp does not read for key.
func checkSet(arch string, kv gguf.KV) error {
	s, ok := keySpecFor(arch, kv.Key)
	if !ok || slices.Contains(s.types, valueType(kv.Value)) {
		return nil
	}
	return fmt.Errorf("--set %s: llama.cpp reads it as %s, not %s (--force writes it anyway)",
		kv.Key, strings.Join(s.types, " or "), valueType(kv.Value))
}

// checkDelete refuses deleting a key llama.cpp cannot load a file without.
func checkDelete(arch, key string) error {
	if s, ok := keySpecFor(arch, key); ok && s.required {
		return fmt.Errorf("--del %s: llama.cpp cannot load a file without it (--force deletes it anyway)", key)
	}
	return nil
}
