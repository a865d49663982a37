// Package recipes reads recipes: YAML files that name a model build's inputs
// by commit, sha256 and size, list the operations of one `gguf build` (the
// head from an ids file or from a `vocab select` over pinned corpora,
// llama-quantize's options with an imatrix pinned by sha256, tensors added
// from other inputs, a Qwen3.5 MTP block from pinned safetensors shards,
// experts last, metadata edits) and give the sha256 and
// size of the file they make, and optionally each tensor's sha256. A
// recipe can instead assemble: one `gguf assemble` (a model's metadata and
// non-expert tensors, another's experts last, converted and repacked).
//
// A recipe is planning then executing: Open resolves every input (a GGUF's
// header only; small inputs such as ids files, corpora and importance
// matrices whole) and checks each against its pin before any tensor byte
// moves, Plan turns the build into the ops.Options of `gguf build` and its
// plan, and Run executes that plan through the one executor every command
// uses, hashing the bytes as they are written; a difference from the
// expected output names the first tensor that differs and commits nothing.
// Lock fills in the pins of a recipe written with branch names.
//
// A recipe knows nothing of how operations work: it only names them. Its
// schema (recipe.go) is decoded strictly: an unknown field, a value of the
// wrong kind or a malformed pin is an error naming its line and column.
package recipes
