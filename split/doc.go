// Package split reads and writes GGUF models stored as several files, the
// way llama.cpp's llama-gguf-split does, so that split models from the Hub
// work everywhere a single file does.
//
// The conventions are llama-gguf-split's (tools/gguf-split/gguf-split.cpp)
// and llama.cpp's loader's:
//
//   - Files are named PREFIX-00001-of-00003.gguf ("%s-%05d-of-%05d.gguf",
//     numbered from 1); a model is opened from its first file and the others
//     are found from its name.
//   - Every file holds split.no (u16, from 0), split.count (u16) and
//     split.tensors.count (i32, the model's total); the first file also holds
//     all other metadata, in the original order, the split keys last
//     (split.no, split.tensors.count, split.count). The loader checks each
//     file's split.no and that the files hold split.tensors.count tensors.
//   - --split-max-size N fills a file with tensors, in order, while the sum
//     of their sizes, each padded to 32 bytes, stays within N (metadata not
//     counted); a tensor that does not fit starts the next file. N is a
//     number of megabytes (M, 10^6 bytes) or gigabytes (G, 10^9 bytes).
//   - Tensor infos are written with ggml's dimension count (trailing
//     dimensions of 1 dropped), files as GGUF v3.
//
// Merge presents the files as one logical model: exactly the file that
// `llama-gguf-split --merge` would write (all metadata of the first file,
// split.count set to 0 and moved last so the result is not taken for a
// split model again, tensors of every file in order, offsets recomputed),
// as an io.ReaderAt whose header is in memory and whose tensor bytes come
// from the files. Copying it whole is the merge; operations and remote reads
// work on it like on any GGUF file. Write does the reverse: it executes a
// plan once, writing every file through a temporary that is renamed only
// when all files are complete.
//
// Where llama-gguf-split writes inconsistent files this package does not:
// with a general.alignment other than 32 it pads to that alignment and
// writes the key into every file (llama-gguf-split pads to 32 whatever the
// key says).
package split
