package gguf

import "fmt"

// MaxAlignment is the largest general.alignment a new setting may give
// (build --align, --set general.alignment, a recipe's align). ggml's
// loader takes any power of two up to 2^31, but every tensor is then
// followed by up to alignment-1 bytes of zeros that are really written:
// --align 2^31 makes three tiny tensors a 4.3 GB file. The largest
// alignment that buys anything is a 2 MiB huge page (x86-64 and arm64
// with 4 KiB pages), so that is the bound; gguf-py and llama.cpp write 32.
// A file read with a larger alignment is still read and copied as it is.
const MaxAlignment = 2 << 20

// CheckAlignment reports whether a may be set as a new file's alignment:
// a power of two from 1 to MaxAlignment.
func CheckAlignment(a uint64) error {
	switch {
	case a == 0 || a&(a-1) != 0:
		return fmt.Errorf("alignment %d is not a power of two", a)
	case a > MaxAlignment:
		return fmt.Errorf("alignment %d is over the limit of %d (%d MiB): the padding after every tensor is written as zeros", a, MaxAlignment, MaxAlignment>>20)
	}
	return nil
}
