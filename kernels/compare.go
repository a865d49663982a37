package kernels

import (
	"maps"
	"slices"

	"github.com/ggufkit/gguf/gguf"
)

// What a model's tests and benchmarks need to compare its results under
// other kernels than the installed set's, or to know which float order the
// installed set follows. Like SelectKernels, none of it is safe while a
// model computes.

// WithReference runs fn with every kernel's fast dot replaced by its
// reference, the baseline the fast kernels are measured and checked against.
func WithReference(fn func()) {
	saved := map[*kernel]kernel{}
	for _, k := range append(slices.Collect(maps.Values(kernels)), genericKernel) {
		saved[k] = *k
		k.dot, k.dot4 = k.ref, nil
	}
	defer func() {
		for k, v := range saved {
			*k = v
		}
	}()
	fn()
}

// WithPortable runs fn with type t's dot replaced by its portable Go
// kernel (and no four-row kernel), the other types keeping the installed
// set's.
func WithPortable(t gguf.Type, fn func()) {
	k := kernels[t]
	saved := *k
	k.dot, k.dot4 = portableKernels[t].dot, nil
	defer func() { *k = saved }()
	fn()
}

// WithGeneric runs fn with type t run as the types without an integer
// kernel are (rows dequantized, activations rounded to Q8_0): the matrices
// of t made meanwhile (NewMatrix) keep that kernel.
func WithGeneric(t gguf.Type, fn func()) {
	k := kernels[t]
	delete(kernels, t)
	genericKernels[t] = genericQ8_0Kernel
	defer func() {
		delete(genericKernels, t)
		kernels[t] = k
	}()
	fn()
}

// AVX2Order reports whether the installed set is amd64's avx2 or vnni,
// whose row kernels sum in ggml's AVX2 order rather than the portable
// (ggml's generic) one.
func AVX2Order() bool { return useAVX2 }

// Packs reports whether the installed set packs matrices of type t into a
// group layout (Matrix.Pack): an interleaved one, or Q1_0's lookup layout.
func Packs(t gguf.Type) bool {
	k := kernels[t]
	return k != nil && k.pack != nil || t == gguf.TypeQ1_0 && q1lutSet != nil
}

// Generic reports whether t is one of the types ggml multiplies with
// activations rounded to Q8_0 or Q8_K that this package runs by
// dequantizing its rows (no integer kernel).
func Generic(t gguf.Type) bool {
	_, ok := genericKernels[t]
	return ok
}
