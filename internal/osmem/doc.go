// Package osmem is the runtime's one room for what the operating system
// does with memory and files: mapping a model file read-only (mmap, with a
// read into aligned memory where a file or platform cannot be mapped),
// advice on mapped pages (dropping them, random access), locking them in
// RAM (mlock), uncached reads (O_DIRECT on Linux, F_NOCACHE on Apple
// systems), and the process's peak resident set and major page faults.
//
// Each function has one implementation per OS family, chosen by build
// constraints (unix, linux, darwin, and a fallback for the rest), so the
// callers (package engine and its expert pager, engine/pager) carry no
// per-OS files of their own. Where a platform lacks a facility the
// function says so (an error) or degrades to what still works (reading
// instead of mapping, advice ignored, a counter of 0), as documented on
// each.
//
// It must import only the standard library and golang.org/x/sys: nothing
// of the module (no gguf, no engine, no kernels), so any package may use
// it without a cycle.
package osmem
