// Command gguf inspects, rewrites and runs GGUF model files: local, piped
// or streamed from Hugging Face with range requests.
package main
