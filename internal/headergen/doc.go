// Package headergen generates GGUF files whose headers have chosen shapes
// (tokenizer-sized string arrays, several big arrays in a row, many tensor
// infos), from a few hundred bytes to tens of MB, for tests that count what
// reading a header costs. The tensor data behind the header is zeros computed
// on demand, so a file costs only its header in memory.
package headergen
