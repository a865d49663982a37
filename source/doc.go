// Package source opens the SOURCE argument every command accepts, as a GGUF
// reader:
//
//   - a local path;
//   - "-", stdin, read once front to back (a *gguf.StreamReader);
//   - an https:// (or http://) URL, or a Hub file in huggingface_hub's form
//     hf://[datasets/]owner/repo[@revision]/path/in/repo.gguf (revision
//     main by default, refs/pr/N accepted), read with HTTP range requests
//     through hfremote: HF_ENDPOINT selects the Hub, the token comes from
//     Options.Token, else HF_TOKEN, HUGGING_FACE_HUB_TOKEN or the token file
//     under HF_HOME.
//
// A file that is the first of a model split by llama-gguf-split
// (NAME-00001-of-0000N.gguf, local or remote) opens as the whole model: its
// other files are found from its name (remote ones at the same pinned
// commit) and the source reads as the file llama-gguf-split --merge would
// write (see package split).
//
// This is the one package that knows both hfremote and the GGUF side: a
// remote file's reader is a plan.RangeStreamer (hfremote.File.Ranges, with
// concurrency), so a build fetches every range it needs ahead and in order,
// and a build that reads a whole remote file checks it against the sha256
// the Hub published before the output is committed.
package source
