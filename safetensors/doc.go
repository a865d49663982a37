// Package safetensors reads the header of a safetensors file (Hugging
// Face's tensor format) and writes small ones: an 8-byte little-endian
// header length, a JSON object naming each tensor's dtype, shape and
// data_offsets (relative to the data after the header) plus an optional
// "__metadata__" object of strings, then the tensors' bytes. It knows the
// format only: no tensor names of any model, no conversions (see ops for
// the MTP block of Qwen3.5 taken from one).
//
// Parse bounds everything it reads by the file's size and by the format's
// own limit on the header (100 MB, as the reference implementation), checks
// each tensor's byte length against its dtype and shape, and, as the
// reference implementation does, that the tensors tile the data exactly
// (no gap, no overlap, nothing after the last): a bad file is an error,
// never a panic or an allocation it names.
package safetensors
