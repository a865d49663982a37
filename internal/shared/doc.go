// Package shared locates the project's read-only reference material
// (../shared next to the repository: real models, llama.cpp reference
// outputs, corpora) for tests. Tests read it in place; it is never copied.
package shared
