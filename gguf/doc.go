// Package gguf reads and writes GGUF files, the model format of llama.cpp
// and ggml.
//
// It knows the format and nothing else: metadata values of the 13 GGUF
// types in file order, the ggml tensor type table, tensor infos, alignment
// and layout, and validation as llama.cpp's loader performs it. It does not
// know HTTP or what a tensor means.
//
// Reading: NewReader decodes the header of a file held by an io.ReaderAt
// (local, in memory or remote) and gives each tensor's bytes as an
// io.SectionReader; NewStreamReader does the same front to back over a plain
// io.Reader such as stdin. Both check every count and length against the
// bytes that exist before allocating, so hostile files fail fast and small.
//
// Writing: Layout computes every offset before the first byte, and Writer
// emits the header then accepts tensor data in order on any io.Writer, so
// a file can be produced in one pass into a pipe.
package gguf
