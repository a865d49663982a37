// Package inspect summarizes a GGUF header for people and programs: what
// the model is, and where its bytes go (by ggml type and by role: token
// embedding, output head, attention, FFN, experts, norms). It reads only
// the header; it is what `gguf info` prints.
package inspect
