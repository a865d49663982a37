package kernels

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// haswellTypes are the weight types of testdata/llamacpp/vecdot-haswell.txt:
// the K-quants (against q8_K activations) and Q4_0 and Q8_0 (against
// q8_0), the types with AVX2 kernels.
var haswellTypes = []gguf.Type{gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ4_0, gguf.TypeQ8_0}

// haswellInexact lists the types whose kernel sums in another order than
// ggml 0.27's AVX2 one (so rounds the per-lane floats differently): checked
// to float32 rounding only. Q6_K: ggml subtracts the -32 offset as
// madd(bsums, scales)<<5 per lane, not per group (50 of 64 rows differ in
// the last bits). Q5_K runs the portable Go kernel: an AVX2 one that was
// bit-exact on these rows put the crosscheck's dense-Q5_K and
// qwen3moe-Q4_K_M 0.03-0.1 off llama.cpp, where the Go kernel is within
// 2e-6, and was left out until that is understood.
var haswellInexact = map[gguf.Type]bool{gguf.TypeQ5_K: true, gguf.TypeQ6_K: true}

// haswellRows builds the inputs of vecdot-haswell.txt for type typ: rows
// weight rows of n values and as many activation rows of the type's
// kernel (q8_K or q8_0), from a fixed
// seed, with magnitudes varying by row (2^-3..2^3 for the weights, 2^-2..2^2
// for the activations).
func haswellRows(t *testing.T, typ gguf.Type, n, rows int) (w, a []byte) {
	rng := rand.New(rand.NewPCG(uint64(typ), 11))
	f, g := make([]float32, n), make([]float32, n)
	act := kernels[typ].act
	wb, ab := ActRowBytes(typ, n), ActRowBytes(act, n)
	w, a = make([]byte, rows*wb), make([]byte, rows*ab)
	for r := 0; r < rows; r++ {
		for i := range f {
			f[i] = float32(rng.NormFloat64() * math.Pow(2, float64(r%7-3)))
			g[i] = float32(rng.NormFloat64() * math.Pow(2, float64(r%5-2)))
		}
		if err := quantizeAct(typ, w[r*wb:(r+1)*wb], f); err != nil {
			t.Fatal(err)
		}
		if err := quantizeAct(act, a[r*ab:(r+1)*ab], g); err != nil {
			t.Fatal(err)
		}
	}
	return w, a
}

// TestKQuantAgainstHaswell checks the K-quant, Q4_0 and Q8_0 kernels
// against the results libggml-cpu-haswell.so (Debian ggml 0.27, the
// backend of the crosscheck references) computed with its own
// ggml_vec_dot_*_q8_K (ggml_vec_dot_*_q8_0) on the same bytes
// (bench/ggml-vecdot.sh wrote testdata/llamacpp/vecdot-haswell.txt): the
// AVX2 kernels bit for bit (they follow its lane order and FMAs), the
// portable ones to float32 rounding of the sum of |products|.
// GGUF_VECDOT_INPUTS=dir writes the inputs for the harness instead.
func TestKQuantAgainstHaswell(t *testing.T) {
	const n, rows = 1024, 64
	if dir := os.Getenv("GGUF_VECDOT_INPUTS"); dir != "" {
		for _, typ := range haswellTypes {
			w, a := haswellRows(t, typ, n, rows)
			if err := os.WriteFile(filepath.Join(dir, typ.String()+".w"), w, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, typ.String()+".a"), a, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Skip("inputs written to ", dir)
	}
	want := haswellRef(t)
	wf, af := make([]float32, n), make([]float32, n)
	for _, typ := range haswellTypes {
		ref := want[typ.String()]
		if len(ref) != rows {
			t.Fatalf("%s: %d reference rows, want %d", typ, len(ref), rows)
		}
		w, a := haswellRows(t, typ, n, rows)
		wb, ab := len(w)/rows, len(a)/rows
		bad := 0
		for r := 0; r < rows; r++ {
			wr, ar := w[r*wb:(r+1)*wb], a[r*ab:(r+1)*ab]
			got := kernels[typ].dot(n, wr, ar)
			if useAVX2 && !haswellInexact[typ] {
				if math.Float32bits(got) != math.Float32bits(ref[r]) {
					bad++
					t.Errorf("%s row %d: %.9g (%08x), ggml %.9g (%08x)", typ, r, got, math.Float32bits(got), ref[r], math.Float32bits(ref[r]))
				}
				continue
			}
			if err := DequantizeRow(typ, wf, wr); err != nil {
				t.Fatal(err)
			}
			if err := DequantizeRow(kernels[typ].act, af, ar); err != nil {
				t.Fatal(err)
			}
			var mag float64
			for i := range wf {
				mag += math.Abs(float64(wf[i]) * float64(af[i]))
			}
			if d := math.Abs(float64(got) - float64(ref[r])); d > mag*1e-6 {
				t.Errorf("%s row %d: %.9g, ggml %.9g (diff %.3g)", typ, r, got, ref[r], d)
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d rows differ from ggml's AVX2 kernel", typ, bad, rows)
		}
	}
}

// haswellRef parses testdata/llamacpp/vecdot-haswell.txt: lines "TYPE row
// bits" (bits: the float32 result in hex), comments after '#'.
func haswellRef(t *testing.T) map[string][]float32 {
	f, err := os.Open(filepath.Join("testdata", "llamacpp", "vecdot-haswell.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var typ string
		var row int
		var hex string
		if _, err := fmt.Sscan(line, &typ, &row, &hex); err != nil {
			t.Fatalf("vecdot-haswell.txt: %q: %v", line, err)
		}
		bits, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || row != len(out[typ]) {
			t.Fatalf("vecdot-haswell.txt: bad line %q", line)
		}
		out[typ] = append(out[typ], math.Float32frombits(uint32(bits)))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
