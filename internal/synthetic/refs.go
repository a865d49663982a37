package synthetic

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// FileSum is a model file's size and sha256 as the README lists it.
type FileSum struct {
	Size int64
	Sum  string
}

// Ref is one row of the README's section 5 table: what llama.cpp measured
// on one model file (TAG = model-type).
type Ref struct {
	Tag string
	// PPL is llama-perplexity's final estimate (-c 128, F32 KV cache);
	// PPLNoRepack the same with --no-repack, 0 where ggml-cpu does not
	// repack the file's weights.
	PPL, PPLNoRepack float64
	// Greedy are the first 8 greedy ids after the prompt.
	Greedy []int32
	// NoRepackGreedyFrom is the first index where the --no-repack greedy
	// ids differ (-1: the same or not measured).
	NoRepackGreedyFrom int
}

var (
	// "  syn-dense-256-F32.gguf   13654336  39f03d21...  5 shards"
	sumLine = regexp.MustCompile(`^\s+(syn-[\w.-]+\.gguf)\s+(\d+)\s+([0-9a-f]{64})\s`)
	// "  syn-dense-256-Q4_0   4112.2994   4113.5500   0   188 151 ... 141 differs from #7"
	refLine = regexp.MustCompile(`^\s+(syn-[\w.-]+)\s+([\d.]+)\s+([\d.]+|-)\s+\S+\s+((?:\d+ ){7}\d+)\s+(.*)$`)
	differs = regexp.MustCompile(`^differs from #(\d+)$`)
)

// README reads the file table (section 3) and the reference table
// (section 5) of refdata/synthetic/README.txt.
func README(path string) (map[string]FileSum, map[string]Ref, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sums, refs := map[string]FileSum{}, map[string]Ref{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if m := sumLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			sums[m[1]] = FileSum{n, m[3]}
			continue
		}
		m := refLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		r := Ref{Tag: m[1], NoRepackGreedyFrom: -1}
		r.PPL, _ = strconv.ParseFloat(m[2], 64)
		if m[3] != "-" {
			r.PPLNoRepack, _ = strconv.ParseFloat(m[3], 64)
		}
		for _, s := range strings.Fields(m[4]) {
			id, _ := strconv.Atoi(s)
			r.Greedy = append(r.Greedy, int32(id))
		}
		if d := differs.FindStringSubmatch(strings.TrimSpace(m[5])); d != nil {
			r.NoRepackGreedyFrom, _ = strconv.Atoi(d[1])
		}
		refs[r.Tag] = r
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(sums) != 33 || len(refs) != 33 {
		return nil, nil, fmt.Errorf("%s: %d file sums and %d reference rows, want 33 each", path, len(sums), len(refs))
	}
	return sums, refs, nil
}

// Models returns the spec of a TAG's model and the type and mix of its
// file: "syn-moe-256-Q4_K" is MoE256, Q4_K, pure; "syn-dense-256-Q4_K_M-mix"
// is Dense256, Q4_K with llama-quantize's default mix.
func Models(tag string) (s Spec, typ gguf.Type, pure bool, err error) {
	for _, s := range []Spec{Tied512, Dense256, MoE256} {
		rest, ok := strings.CutPrefix(tag, s.Name+"-")
		if !ok {
			continue
		}
		name, mix := strings.CutSuffix(rest, "_M-mix")
		typ, err := gguf.ParseType(name)
		return s, typ, !mix, err
	}
	return Spec{}, 0, false, fmt.Errorf("%q is not a synthetic model tag", tag)
}

// Build makes the model file of TAG in dir, once: the F32 model from the
// recipe (tokenizer from tokPath, models/stories260K-f32.gguf), quantized
// with package ops for the other types. It returns the file's path.
func Build(dir, tag, tokPath string) (string, error) {
	s, typ, pure, err := Models(tag)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, tag+".gguf")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	f32 := filepath.Join(dir, s.Name+"-F32.gguf")
	if _, err := os.Stat(f32); err != nil {
		if err := WriteFile(f32, s, tokPath); err != nil {
			return "", err
		}
	}
	if typ == gguf.TypeF32 {
		return f32, nil
	}
	return path, Quantize(f32, path, typ, pure)
}
