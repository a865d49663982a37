package synthetic

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

func readmeSums(t testing.TB) map[string]FileSum {
	sums, _, err := README(shared.Path(t, "refdata", "synthetic", "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func fileSum(t testing.TB, path string) (int64, string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	return n, hex.EncodeToString(h.Sum(nil))
}

// TestRegenerate writes the three F32 models and compares size and sha256
// with the README's: the weights, their order and gguf-py's header layout
// byte for byte. The two models whose files are not in shared/ are the
// ones only this regeneration can check.
func TestRegenerate(t *testing.T) {
	sums := readmeSums(t)
	dir := t.TempDir()
	for _, s := range []Spec{Dense256, Tied512, MoE256} {
		if testing.Short() && s != Dense256 {
			continue
		}
		path := filepath.Join(dir, s.Name+"-F32.gguf")
		if err := WriteFile(path, s, shared.Path(t, "models", "stories260K-f32.gguf")); err != nil {
			t.Fatal(err)
		}
		want := sums[s.Name+"-F32.gguf"]
		n, sum := fileSum(t, path)
		if n != want.Size || sum != want.Sum {
			t.Errorf("%s: %d bytes sha256 %s, README %d %s", s.Name, n, sum, want.Size, want.Sum)
		}
	}
}

// TestHeaderMatchesDump compares the regenerated syn-dense-256-F32
// header with ggml's own dump of the original: version, alignment, data
// offset, every key with its type and every tensor's type, shape, offset
// and size.
func TestHeaderMatchesDump(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.gguf")
	if err := WriteFile(path, Dense256, shared.Path(t, "models", "stories260K-f32.gguf")); err != nil {
		t.Fatal(err)
	}
	r := testfiles.Reader(t, path)
	dump, err := os.ReadFile(shared.Path(t, "refdata", "synthetic", "gguf-dumps", "syn-dense-256-F32.gguf-dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, l := range strings.Split(string(dump), "\n") {
		if strings.HasPrefix(l, "kv ") {
			// "kv 3 llama.embedding_length u32 = 256": index, key, type.
			fs := strings.Fields(l)
			want[strings.Join(fs[:4], " ")] = true
		} else if l != "" {
			want[l] = true
		}
	}
	typeName := map[gguf.ValueType]string{gguf.TypeString: "str", gguf.TypeUint32: "u32", gguf.TypeFloat32: "f32", gguf.TypeArray: "arr[%s,%d]"}
	elemName := map[gguf.ValueType]string{gguf.TypeString: "str", gguf.TypeFloat32: "f32", gguf.TypeInt32: "i32"}
	got := []string{
		"version: 3",
		fmt.Sprintf("alignment: %d", r.Alignment),
		fmt.Sprintf("data_offset: %d", r.DataOffset),
		fmt.Sprintf("n_kv: %d", r.Metadata.Len()),
		fmt.Sprintf("n_tensors: %d", len(r.Tensors)),
	}
	for i, kv := range r.Metadata.KVs() {
		tn := typeName[kv.Value.Type()]
		if kv.Value.IsArray() {
			tn = fmt.Sprintf(tn, elemName[kv.Value.ElemType()], kv.Value.Len())
		}
		got = append(got, fmt.Sprintf("kv %d %s %s", i, kv.Key, tn))
	}
	for i, ti := range r.Tensors {
		ne := []string{"1", "1", "1", "1"}
		for j, d := range ti.Dims {
			ne[j] = strconv.FormatUint(d, 10)
		}
		got = append(got, fmt.Sprintf("tensor %d %s type=f32(0) ne=[%s] offset=%d size=%d", i, ti.Name, strings.Join(ne, ","), ti.Offset, ti.Size()))
	}
	if len(got) != len(want) {
		t.Errorf("%d header lines, dump has %d", len(got), len(want))
	}
	for _, l := range got {
		if !want[l] {
			t.Errorf("not in ggml's dump: %s", l)
		}
	}
}

// TestQuantizedMatchLlamaCpp quantizes the regenerated F32 models with the
// toolkit's quantizer and compares every file with the sha256 the README
// gives for llama-quantize's output (--pure, and the default Q4_K_M mix),
// stored in shared/ or not.
func TestQuantizedMatchLlamaCpp(t *testing.T) {
	sums := readmeSums(t)
	dir := t.TempDir()
	for _, s := range []Spec{Dense256, Tied512, MoE256} {
		if testing.Short() && s != Dense256 {
			continue
		}
		f32 := filepath.Join(dir, s.Name+"-F32.gguf")
		if err := WriteFile(f32, s, shared.Path(t, "models", "stories260K-f32.gguf")); err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(sums)) {
			tag := strings.TrimSuffix(name, ".gguf")
			m, typ, pure, err := Models(tag)
			if err != nil {
				t.Fatal(err)
			}
			if m != s || typ == gguf.TypeF32 {
				continue
			}
			out := filepath.Join(dir, name)
			if err := Quantize(f32, out, typ, pure); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			n, sum := fileSum(t, out)
			if want := sums[name]; n != want.Size || sum != want.Sum {
				t.Errorf("%s: %d bytes sha256 %s, llama-quantize %d %s", name, n, sum, want.Size, want.Sum)
			} else {
				t.Logf("%s: identical to llama-quantize's (%d bytes)", name, n)
			}
			os.Remove(out)
		}
	}
}

// TestREADME checks the parsed reference table on rows whose values the
// README also states in prose.
func TestREADME(t *testing.T) {
	_, refs, err := README(shared.Path(t, "refdata", "synthetic", "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := refs["syn-dense-256-Q4_0"]
	if r.PPL != 4112.2994 || r.PPLNoRepack != 4113.55 || r.NoRepackGreedyFrom != 7 || len(r.Greedy) != 8 || r.Greedy[0] != 188 || r.Greedy[7] != 141 {
		t.Errorf("syn-dense-256-Q4_0: %+v", r)
	}
	if r := refs["syn-moe-256-F32"]; r.PPL != 4299.6307 || r.PPLNoRepack != 0 || r.NoRepackGreedyFrom != -1 {
		t.Errorf("syn-moe-256-F32: %+v", r)
	}
	if _, _, _, err := Models("syn-tiny-F32"); err == nil {
		t.Error("Models accepted an unknown tag")
	}
}
