package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
)

// TestQuantizeMatchesLlamaQuantize: the same options as llama.cpp's run
// give llama.cpp's file byte for byte, with any thread count and from a
// pipe.
func TestQuantizeMatchesLlamaQuantize(t *testing.T) {
	t.Parallel()
	f32 := shared.Path(t, "models", "stories260K-f32.gguf")
	want, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, threads := range []string{"1", "8"} {
		out := filepath.Join(dir, "q8-"+threads+".gguf")
		mustRun(t, nil, "quantize", f32, out, "--type", "Q8_0", "--tensor-type", "ffn_down=F16", "-t", threads)
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Errorf("threads %s: output differs from llama-quantize's stories260K-Q8_0.gguf", threads)
		}
	}
	in, _ := os.ReadFile(f32)
	r := mustRun(t, bytes.NewReader(in), "quantize", "-", "-", "--type", "q8_0", "--tensor-type", "ffn_down=f16")
	if !bytes.Equal(r.stdout, want) {
		t.Error("stdin to stdout differs from llama-quantize's file")
	}
	// The same through gguf build.
	r = mustRun(t, nil, "build", f32, "-o", "-", "--type", "Q8_0", "--tensor-type", "ffn_down=F16")
	if !bytes.Equal(r.stdout, want) {
		t.Error("gguf build --type differs from llama-quantize's file")
	}
}

var logLine = regexp.MustCompile(`^\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[.*\], type =\s+(\w+),( converting to (\w+))?`)

// llamaQuantizeLog reads the tensors, in order, and their output types
// from a llama-quantize log.
func llamaQuantizeLog(t *testing.T, name string) (names, types []string) {
	f, err := os.Open(shared.Path(t, "refdata", "llama-cpp", "quantize-logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := logLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		typ := m[2]
		if m[4] != "" {
			typ = m[4]
		}
		names = append(names, m[1])
		types = append(types, strings.ToUpper(typ))
	}
	return names, types
}

// TestQuantizeTypesMatchLogs: for the Q4_0 and Q4_K runs of llama.cpp (whose
// files are not in the reference data, only their logs) every tensor gets
// the type llama-quantize gave it, in llama-quantize's order; tensors whose
// type is the same as in llama.cpp's Q8_0 file have its bytes.
func TestQuantizeTypesMatchLogs(t *testing.T) {
	t.Parallel()
	f32 := shared.Path(t, "models", "stories260K-f32.gguf")
	q8data, _ := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
	q8, err := gguf.NewReader(bytes.NewReader(q8data), int64(len(q8data)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		log  string
		args []string
	}{
		{"quantize-Q4_0.log", []string{"--type", "Q4_0", "--tensor-type", "ffn_down=F16", "--output-type", "Q8_0"}},
		{"quantize-Q4_K.log", []string{"--type", "Q4_K"}},
	} {
		t.Run(tc.log, func(t *testing.T) {
			out := filepath.Join(dir, tc.log+".gguf")
			mustRun(t, nil, append([]string{"quantize", f32, out}, tc.args...)...)
			data, _ := os.ReadFile(out)
			r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			names, types := llamaQuantizeLog(t, tc.log)
			if len(names) != len(r.Tensors) || len(names) != 48 {
				t.Fatalf("%d tensors, log has %d", len(r.Tensors), len(names))
			}
			same := 0
			for i, ti := range r.Tensors {
				if ti.Name != names[i] || ti.Type.String() != types[i] {
					t.Errorf("tensor %d: %s %s, llama-quantize %s %s", i, ti.Name, ti.Type, names[i], types[i])
				}
				j := q8.TensorIndex(ti.Name)
				if q8.Tensors[j].Type == ti.Type {
					a, _ := io.ReadAll(r.TensorData(i))
					b, _ := io.ReadAll(q8.TensorData(j))
					if !bytes.Equal(a, b) {
						t.Errorf("%s (%s) differs from llama.cpp's bytes", ti.Name, ti.Type)
					}
					same++
				}
			}
			if same == 0 {
				t.Error("no tensor could be compared byte for byte")
			}
		})
	}
}

// TestQuantizeFileTypeNames: --type takes llama-quantize's file-type names
// in any case and its numbers, records the file type llama-quantize records,
// and rejects names it does not know with a usage error.
func TestQuantizeFileTypeNames(t *testing.T) {
	t.Parallel()
	f32 := shared.Path(t, "models", "stories260K-f32.gguf")
	want, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// 7 is Q8_0's number in llama-quantize --help.
	out := filepath.Join(dir, "q8.gguf")
	mustRun(t, nil, "quantize", f32, out, "--type", "7", "--tensor-type", "ffn_down=F16", "-t", "2")
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("--type 7 differs from llama-quantize's Q8_0 file")
	}
	for _, c := range []struct {
		typ    string
		ftype  uint64
		sample gguf.Type // type of blk.0.attn_v.weight (rows of 64: the K-quants fall back)
	}{
		{"q4_k_s", 14, gguf.TypeQ5_1},
		{"Q3_K_L", 13, gguf.TypeQ5_1},
		{"Q5_K_S", 16, gguf.TypeQ5_1},
		{"iq4_xs", 30, gguf.TypeIQ4_NL},
	} {
		out := filepath.Join(dir, c.typ+".gguf")
		mustRun(t, nil, "quantize", f32, out, "--type", c.typ, "-t", "2", "-q")
		data, _ := os.ReadFile(out)
		r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if ft, _ := r.Metadata.Uint(gguf.KeyFileType); ft != c.ftype {
			t.Errorf("--type %s: general.file_type %d, want %d", c.typ, ft, c.ftype)
		}
		if ti, ok := r.Tensor("blk.0.attn_v.weight"); !ok || ti.Type != c.sample {
			t.Errorf("--type %s: blk.0.attn_v.weight is %v, want %s", c.typ, ti, c.sample)
		}
	}
	r := runGGUF(t, nil, "quantize", f32, filepath.Join(dir, "x.gguf"), "--type", "Q4_K_X")
	checkOneLineError(t, r, 2, "Q4_K_X")
}
