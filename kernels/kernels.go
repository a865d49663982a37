package kernels

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"unsafe"

	"github.com/ggufkit/gguf/gguf"
)

// dotFunc computes the dot product of n elements: one weight row w in the
// weight type's block layout and one activation row a in the kernel's
// activation type.
type dotFunc func(n int, w, a []byte) float32

// dot4Func computes out[c] = w . (activation row at a[c*stride:]) for
// c = 0..3, n elements each; stride is the byte distance between rows.
type dot4Func func(n int, w, a []byte, stride int, out *[4]float32)

// kernel is how one weight type is multiplied.
type kernel struct {
	// act is the type activations are converted to first: ggml's
	// vec_dot_type for the weight type.
	act gguf.Type
	// dot is the fast dot product, ref the plain one it is tested against.
	dot, ref dotFunc
	// dot4, where set, computes four products of one weight row at once
	// (activation rows stride elements apart), loading the weights once:
	// prompt batches use it. Its float sums may be ordered unlike dot's.
	dot4 dot4Func
	// group, where set, computes a matrix 16 rows at a time (a q2lut
	// matrix: rows interleaved in groups); dot then runs the rows past the
	// last whole group.
	group groupFunc
	// pack, where set, runs matrices repacked at Open in groups of rows
	// (repack.go); the matrices of a model opened while it is set are
	// packed.
	pack *packKernel
	// generic marks types without an integer kernel: rows are dequantized
	// to float32 and multiplied with the activations rounded to act and
	// turned back into float32.
	generic bool
}

// kernels holds the types with a dedicated kernel, with ggml's
// vec_dot_type for each. Everything else runs generically. Architecture
// files replace fast kernels with assembly at init where the CPU allows.
var kernels = map[gguf.Type]*kernel{
	gguf.TypeF32:    {act: gguf.TypeF32, dot: dotF32, ref: refDotF32},
	gguf.TypeF16:    {act: gguf.TypeF16, dot: dotF16, ref: refDotF16},
	gguf.TypeBF16:   {act: gguf.TypeBF16, dot: dotBF16, ref: refDotBF16},
	gguf.TypeQ8_0:   {act: gguf.TypeQ8_0, dot: dotQ8_0Go, ref: refDotQ8_0},
	gguf.TypeQ4_0:   {act: gguf.TypeQ8_0, dot: dotQ4_0Go, ref: refDotQ4_0, pack: packKernels[gguf.TypeQ4_0]},
	gguf.TypeQ4_1:   {act: gguf.TypeQ8_1, dot: refDotQ4_1, ref: refDotQ4_1},
	gguf.TypeIQ4_NL: {act: gguf.TypeQ8_0, dot: refDotIQ4NL, ref: refDotIQ4NL},
	gguf.TypeQ5_0:   {act: gguf.TypeQ8_0, dot: refDotQ5_0, ref: refDotQ5_0},
	gguf.TypeQ5_1:   {act: gguf.TypeQ8_1, dot: refDotQ5_1, ref: refDotQ5_1},
	gguf.TypeQ2_K:   {act: gguf.TypeQ8_K, dot: dotQ2_KGo, ref: refDotQ2_K},
	gguf.TypeQ3_K:   {act: gguf.TypeQ8_K, dot: dotQ3_KGo, ref: refDotQ3_K},
	gguf.TypeQ4_K:   {act: gguf.TypeQ8_K, dot: dotQ4_KGo, ref: refDotQ4_K},
	gguf.TypeQ5_K:   {act: gguf.TypeQ8_K, dot: dotQ5_KGo, ref: refDotQ5_K},
	gguf.TypeQ6_K:   {act: gguf.TypeQ8_K, dot: dotQ6_KGo, ref: refDotQ6_K},
	gguf.TypeQ1_0:   {act: gguf.TypeQ8_0, dot: dotQ1_0Go, ref: refDotQ1_0},
	gguf.TypeQ2_0:   {act: gguf.TypeQ8_0, dot: dotQ2_0Go, ref: refDotQ2_0},
	gguf.TypeTQ1_0:  {act: gguf.TypeQ8_K, dot: dotTQ1_0Go, ref: refDotTQ1_0},
	gguf.TypeTQ2_0:  {act: gguf.TypeQ8_K, dot: dotTQ2_0Go, ref: refDotTQ2_0},
}

// The generic kernels, one per activation type. ggml multiplies every
// quantized type by activations rounded to its vec_dot_type first; a type
// without an integer kernel here gets the same rounding (then the rounded
// activations go back to float32 for the dot with the dequantized row), so
// its logits stay within float rounding of llama.cpp's instead of 0.1-0.2
// away (checked against a real llama.cpp: ../engine/testdata/llamacpp).
var (
	genericKernel     = &kernel{act: gguf.TypeF32, dot: dotF32, ref: refDotF32, generic: true}
	genericQ8_0Kernel = &kernel{act: gguf.TypeQ8_0, dot: dotF32, ref: refDotF32, generic: true}
	genericQ8_KKernel = &kernel{act: gguf.TypeQ8_K, dot: dotF32, ref: refDotF32, generic: true}
)

// genericKernels maps the types run generically to the kernel of their
// vec_dot_type (ggml-cpu's type_traits_cpu); other types use F32
// activations.
var genericKernels = map[gguf.Type]*kernel{
	gguf.TypeMXFP4: genericQ8_0Kernel, gguf.TypeNVFP4: genericQ8_0Kernel,
	gguf.TypeIQ4_XS: genericQ8_KKernel, gguf.TypeIQ3_S: genericQ8_KKernel, gguf.TypeIQ3_XXS: genericQ8_KKernel,
	gguf.TypeIQ2_XXS: genericQ8_KKernel, gguf.TypeIQ2_XS: genericQ8_KKernel, gguf.TypeIQ2_S: genericQ8_KKernel,
	gguf.TypeIQ1_S: genericQ8_KKernel, gguf.TypeIQ1_M: genericQ8_KKernel,
}

// kernelFor returns the kernel for weight type t, checking that a row of n
// elements can be multiplied (a whole number of the activation type's
// blocks and a type the codecs know).
func kernelFor(t gguf.Type, n int) (*kernel, error) {
	k := kernels[t]
	if k == nil {
		if !t.Valid() || t == gguf.TypeI8 || t == gguf.TypeI16 || t == gguf.TypeI32 || t == gguf.TypeI64 || t == gguf.TypeF64 {
			return nil, fmt.Errorf("weights of type %s cannot be multiplied", t)
		}
		k = cmp.Or(genericKernels[t], genericKernel)
	}
	if n%k.act.BlockSize() != 0 {
		// llama.cpp refuses these too: its activation blocks would not fit.
		return nil, fmt.Errorf("rows of %d elements of %s are not a multiple of %s blocks (%d)", n, t, k.act, k.act.BlockSize())
	}
	return k, nil
}

// ActRowBytes returns the bytes of an n-element activation row in type t.
func ActRowBytes(t gguf.Type, n int) int {
	b, _ := t.RowSize(int64(n))
	return int(b)
}

// DotF32 is the installed set's F32 dot product of n elements of two
// little-endian float32 rows (the recurrent layers' state rows).
func DotF32(n int, w, a []byte) float32 { return dotF32(n, w, a) }

// F32s views little-endian float32 bytes as []float32 without copying. The
// runtime only passes it 4-byte aligned data (mappings are page aligned and
// GGUF tensor offsets are multiples of the alignment; see Model.check).
func F32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// BytesOf views a float32 slice as bytes.
func BytesOf(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)
}

// scoresGo computes the attention scores sc[t] = scale * (q . key t),
// keys kstride floats apart in k, one key at a time, and returns their
// maximum (-Inf for none).
func scoresGo(q, k []float32, kstride int, scale float32, sc []float32) float32 {
	hd, mx := len(q), negInf
	for t := range sc {
		kt := k[t*kstride : t*kstride+hd : t*kstride+hd]
		var v float32
		if hd%4 == 0 && hd <= 16 {
			// Tiny heads (stories260K: 8): four accumulators inline, a
			// call per key would cost more than the dot.
			var d0, d1, d2, d3 float32
			for j := 0; j < hd; j += 4 {
				d0 += float32(q[j] * kt[j])
				d1 += float32(q[j+1] * kt[j+1])
				d2 += float32(q[j+2] * kt[j+2])
				d3 += float32(q[j+3] * kt[j+3])
			}
			v = ((d0 + d1) + (d2 + d3)) * scale
		} else {
			v = dotF32(hd, BytesOf(kt), BytesOf(q)) * scale
		}
		sc[t] = v
		if v > mx {
			mx = v
		}
	}
	return mx
}

// vdotsGo is Vdots one dotF32 at a time.
func vdotsGo(sc, v []float32, vstride int, out []float32) {
	for d := range out {
		out[d] = dotF32(len(sc), BytesOf(v[d*vstride:d*vstride+len(sc)]), BytesOf(sc))
	}
}

// portableKernels is the kernel table as declared, before any
// architecture's assembly replaces entries: SelectKernels("portable")
// restores it.
var portableKernels = func() map[gguf.Type]kernel {
	m := make(map[gguf.Type]kernel, len(kernels))
	for t, k := range kernels {
		m[t] = *k
	}
	return m
}()

// restorePortable reinstalls the portable Go kernels.
func restorePortable() {
	for t, k := range portableKernels {
		*kernels[t] = k
	}
	genericKernel.dot4 = nil
}

// kernelSet is the name of the installed kernel set.
var kernelSet = "portable"

// KernelSets lists the kernel sets this build and CPU can run, best (the
// default) first: "vnni" (AVX2 plus AVX-512 VNNI) and "avx2" on amd64,
// "dotprod" (ARMv8.2 SDOT) and "neon" (ARMv8.0) on arm64, and "portable"
// (Go only) everywhere.
func KernelSets() []string { return kernelSets() }

// KernelSet returns the name of the kernel set in use.
func KernelSet() string { return kernelSet }

// SelectKernels installs the named kernel set ("" or "auto": the best the
// CPU runs) for every model; it is not safe while a model computes.
func SelectKernels(name string) error {
	sets := kernelSets()
	if name == "" || name == "auto" {
		name = sets[0]
	}
	if !slices.Contains(sets, name) {
		return fmt.Errorf("kernel set %q is not available here (have %s)", name, strings.Join(sets, ", "))
	}
	install(name)
	return nil
}

// install installs kernel set name, one of this architecture's sets,
// without asking whether the CPU runs it (SelectKernels does): the row
// kernels, then the q2lut ones, whose tail rows are plain Q2_K rows and
// run the set's Q2_K kernel, so that every q2lut row gives that kernel's
// bits, the Q1_0 lookup kernel, the ternary layouts' kernels, then the
// group kernels of repacked matrices.
func install(name string) {
	installKernels(name)
	q2lutKernel.dot = kernels[gguf.TypeQ2_K].dot
	installQ2LUT(name)
	installQ1LUT(name)
	installTernary(name)
	installPack(name)
	kernelSet = name
}

// kernelsEnv names the environment variable that forces a kernel set
// (as SelectKernels), for programs without a --kernels flag.
const kernelsEnv = "GGUF_KERNELS"

func init() {
	if err := SelectKernels(os.Getenv(kernelsEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v; using %s\n", kernelsEnv, err, kernelSets()[0])
		_ = SelectKernels("")
	}
}
