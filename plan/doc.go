// Package plan turns "what the output file should hold" into bytes, in one
// streaming pass.
//
// Every rewrite has the same shape: open the inputs (headers only), build a
// Plan (output metadata and the ordered output tensors, each with a Producer
// of its bytes), lay it out (every offset is known before the first byte),
// then Execute it into any io.Writer. Operations such as head pruning,
// experts-last or quantization only edit the plan; the executor alone does
// I/O. It pulls each producer's input ranges in output order: straight from
// a local file (copy_file_range where the kernel can), from a remote file in
// concurrent coalesced range requests, or from a forward-only stream, where
// the bytes needed out of order are spooled to a temporary file instead of
// memory.
//
// Memory bound of Execute: one 1 MiB copy buffer, plus what the inputs'
// range streamers hold (a remote file: its concurrency x chunk size), plus
// what producers buffer (a Rows producer: nothing; a converting producer: a
// few rows' worth). It does not grow with the model.
package plan
