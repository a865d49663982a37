package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
)

// realModels maps each real GGUF file of the reference data to llama.cpp's
// dump of it.
func realModels(t testing.TB) map[string]string {
	dumps := shared.Path(t, "refdata", "llama-cpp", "gguf-dumps")
	m := map[string]string{
		shared.Path(t, "models", "stories260K-f32.gguf"):                filepath.Join(dumps, "stories260K-f32.gguf-dump.txt"),
		shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"): filepath.Join(dumps, "stories260K-Q8_0.gguf-dump.txt"),
	}
	for _, p := range shared.Glob(t, "models/vocab/*.gguf") {
		m[p] = filepath.Join(dumps, "vocab", filepath.Base(p)+"-dump.txt")
	}
	for _, p := range shared.Glob(t, "refdata/synthetic/models/*.gguf") {
		m[p] = shared.Path(t, "refdata", "synthetic", "gguf-dumps", filepath.Base(p)+"-dump.txt")
	}
	return m
}

// dumpFacts reads the header fields, keys with types, and tensor lines of a
// llama.cpp dump.
func dumpFacts(t testing.TB, path string) (header map[string]string, keys []string, tensors []string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header = map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "kv "):
			fs := strings.SplitN(l, " ", 5) // kv N key type = ...
			keys = append(keys, fs[2]+" "+fs[3])
		case strings.HasPrefix(l, "tensor "):
			tensors = append(tensors, l)
		default:
			k, v, _ := strings.Cut(l, ": ")
			header[k] = v
		}
	}
	return header, keys, tensors
}

// TestInfoJSONMatchesLlamaCpp: `gguf info --json` on every real file agrees
// with llama.cpp's reading of it: header fields, keys and their types in
// order, and every tensor's name, type, shape, offset and size.
func TestInfoJSONMatchesLlamaCpp(t *testing.T) {
	t.Parallel()
	for path, dump := range realModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := mustRun(t, nil, "info", "--json", path)
			var s inspect.Summary
			if err := json.Unmarshal(r.stdout, &s); err != nil {
				t.Fatal(err)
			}
			header, keys, tensors := dumpFacts(t, dump)
			for k, v := range map[string]any{"version": s.Version, "alignment": s.Alignment, "data_offset": s.DataOffset,
				"n_kv": s.MetadataCount, "n_tensors": s.TensorCount} {
				if fmt.Sprint(v) != header[k] {
					t.Errorf("%s = %v, llama.cpp %s", k, v, header[k])
				}
			}
			if len(s.Metadata) != len(keys) {
				t.Fatalf("%d keys, llama.cpp %d", len(s.Metadata), len(keys))
			}
			for i, kv := range s.Metadata {
				typ := kv.Type
				if kv.Count != nil {
					typ = fmt.Sprintf("arr[%s,%d]", kv.ElemType, *kv.Count)
				}
				if got := kv.Key + " " + typ; got != keys[i] {
					t.Errorf("key %d: %s, llama.cpp %s", i, got, keys[i])
				}
			}
			if len(s.Tensors) != len(tensors) {
				t.Fatalf("%d tensors, llama.cpp %d", len(s.Tensors), len(tensors))
			}
			for i, ti := range s.Tensors {
				ne := []string{"1", "1", "1", "1"}
				for j, d := range ti.Shape {
					ne[j] = fmt.Sprint(d)
				}
				got := fmt.Sprintf("tensor %d %s type=%s(%d) ne=[%s] offset=%d size=%d", i, ti.Name,
					strings.ToLower(ti.Type), ti.TypeID, strings.Join(ne, ","), ti.Offset, ti.Bytes)
				if !strings.EqualFold(got, tensors[i]) {
					t.Errorf("\n got  %s\n want %s", got, tensors[i])
				}
			}
		})
	}
}

// TestBuildIdentity: `gguf build` with no operations is byte-identical for
// every real file, to a file, to stdout, and from stdin.
func TestBuildIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for path := range realModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, filepath.Base(path))
			r := mustRun(t, nil, "build", path, "-o", out)
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Errorf("file output differs")
			}
			if !strings.Contains(string(r.stderr), "wrote "+out) {
				t.Errorf("no summary line: %q", r.stderr)
			}
			if r := mustRun(t, nil, "build", path, "-o", "-"); !bytes.Equal(r.stdout, want) {
				t.Errorf("stdout output differs")
			}
			if r := mustRun(t, bytes.NewReader(want), "build", "-", "-o", "-"); !bytes.Equal(r.stdout, want) {
				t.Errorf("stdin to stdout differs")
			}
		})
	}
}

// TestBadInputCLI: hostile, truncated and missing inputs give exit 2 and one
// clear line, and never create the output.
func TestBadInputCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, m := range fixture.MalformedFiles() {
		p := filepath.Join(dir, m.Name+".gguf")
		if err := os.WriteFile(p, m.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, m.Name+".out.gguf")
		r := runGGUF(t, nil, "build", p, "-o", out)
		checkOneLineError(t, r, 2, m.Error)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output was created", m.Name)
		}
		checkOneLineError(t, runGGUF(t, nil, "info", p), 2, m.Error)
	}
	checkOneLineError(t, runGGUF(t, nil, "info", filepath.Join(dir, "missing.gguf")), 2, "no such file")
	checkOneLineError(t, runGGUF(t, nil, "build", shared.Path(t, "models", "stories260K-f32.gguf")), 2, "-o")
	checkOneLineError(t, runGGUF(t, nil, "info", "--bogus", "x"), 2, "unknown flag")
	// A file cut inside its data: the build fails and leaves nothing.
	data, _ := os.ReadFile(shared.Path(t, "models", "stories260K-f32.gguf"))
	cut := filepath.Join(dir, "cut.gguf")
	os.WriteFile(cut, data[:len(data)-1000], 0o644)
	out := filepath.Join(dir, "cut.out.gguf")
	checkOneLineError(t, runGGUF(t, nil, "build", cut, "-o", out), 2, "truncated")
	checkOneLineError(t, runGGUF(t, bytes.NewReader(data[:len(data)-1000]), "build", "-", "-o", out), 2, "before the end")
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed build left its output")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestDiffCLI: exit 0 for the same content, 1 with a readable list of
// differences, 2 on error; --json reports the same.
func TestDiffCLI(t *testing.T) {
	t.Parallel()
	f32 := shared.Path(t, "models", "stories260K-f32.gguf")
	q8 := shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")
	dir := t.TempDir()
	same := filepath.Join(dir, "same.gguf")
	mustRun(t, nil, "build", f32, "-o", same)
	r := mustRun(t, nil, "diff", f32, same)
	if !strings.Contains(string(r.stdout), "same metadata, tensor table and tensor data") {
		t.Errorf("identical files: %s", r.stdout)
	}
	r = runGGUF(t, nil, "diff", f32, q8)
	if r.code != 1 {
		t.Fatalf("different files: exit %d", r.code)
	}
	for _, want := range []string{"+ key general.file_type", "~ tensor token_embd.weight: type F32 -> Q8_0", "ffn_down.weight: type F32 -> F16"} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("diff output lacks %q", want)
		}
	}
	r = runGGUF(t, nil, "diff", "--json", f32, q8)
	var d inspect.Diff
	if err := json.Unmarshal(r.stdout, &d); err != nil || r.code != 1 {
		t.Fatalf("json: %v, exit %d", err, r.code)
	}
	if d.Same || len(d.KeysAdded) != 2 || len(d.TensorsChanged) != 48 {
		t.Errorf("json diff: same=%v added=%d changed=%d", d.Same, len(d.KeysAdded), len(d.TensorsChanged))
	}
	// Same header, one flipped data byte: found through the checksums.
	data, _ := os.ReadFile(f32)
	data[len(data)-5] ^= 1
	flipped := filepath.Join(dir, "flipped.gguf")
	os.WriteFile(flipped, data, 0o644)
	r = runGGUF(t, nil, "diff", f32, flipped)
	if r.code != 1 || !strings.Contains(string(r.stdout), "~ tensor blk.4.ffn_norm.weight: data sha256") {
		t.Errorf("flipped data byte: exit %d\n%s", r.code, r.stdout)
	}
	checkOneLineError(t, runGGUF(t, nil, "diff", f32, filepath.Join(dir, "nope.gguf")), 2, "nope.gguf")

	// --numeric: Q8_0 rounds each value to within half a step of its block
	// scale (max |x| / 127), so the error is above 0 and below max|x|/254.
	r = runGGUF(t, nil, "diff", "--numeric", "--json", f32, q8)
	var nd inspect.Diff
	if err := json.Unmarshal(r.stdout, &nd); err != nil {
		t.Fatal(err)
	}
	if len(nd.Numeric) != 48 {
		t.Fatalf("%d numeric rows", len(nd.Numeric))
	}
	for _, n := range nd.Numeric {
		switch n.BType {
		case "F32":
			if n.MaxAbs != 0 {
				t.Errorf("%s: unchanged F32 differs by %g", n.Name, n.MaxAbs)
			}
		case "Q8_0":
			if n.MaxAbs <= 0 || n.RMSE <= 0 || n.MaxAbs > 4*n.RMS/254*8 {
				t.Errorf("%s: Q8_0 error %g (rmse %g, rms %g)", n.Name, n.MaxAbs, n.RMSE, n.RMS)
			}
		}
	}
}

// TestInfoText: the human summary names what matters.
func TestInfoText(t *testing.T) {
	t.Parallel()
	r := mustRun(t, nil, "info", "--tensors", "--metadata", shared.Path(t, "models", "stories260K-f32.gguf"))
	for _, want := range []string{"architecture    llama", "parameters", "(292,800)", "context length  128",
		"vocab size      512", "where the bytes go", "token_embedding", "output_head", "blk.4.ffn_norm.weight",
		"tokenizer.ggml.tokens", `arr[str,512]`, "(504 more)"} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("info output lacks %q", want)
		}
	}
}

// TestDemo: README's first command runs every step and its checks pass:
// both recipes' outputs are verified against their pinned sha256 and the
// device file's greedy story is llama2.c's and llama.cpp's reference
// story; --dir keeps every file it names, and the commands it prints, run
// as printed, write the same files (the ids files: the same ids) and tell
// the same story.
func TestDemo(t *testing.T) {
	t.Parallel()
	completion, err := os.ReadFile(shared.Path(t, "refdata", "llama-cpp", "generation", "llama-completion-f32-n341.stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "demo dir") // a space: the commands must quote it
	r := mustRun(t, nil, "demo", "--dir", dir)
	out := string(r.stdout)
	// llama-completion's stdout is the story with one more newline.
	if !strings.Contains(out, "\n\n"+string(completion)) {
		t.Errorf("the demo's story is not llama-completion's greedy story:\n%s", out)
	}
	for _, want := range []string{"1. import-llama2c", "loopback Hub at http://", "fetched", "requests",
		"sha256 9500698b368edaf601f3b516618213bf1d44fb99262cb2afc5560d101fd9f091, as the recipe pins: ok",
		"sha256 8436a1c16c426b6e60440ed6933396af58d7f890b6858600ada3504a0aab5cf3, as the recipe pins: ok",
		"the story is llama2.c's reference story", "tok/s", "byte-identical to a direct build", "none outside the", "all checks passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	before := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		before[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	ran := 0
	for _, line := range strings.Split(string(r.stdout), "\n") {
		cmdline, ok := strings.CutPrefix(line, "   $ ")
		if !ok {
			continue
		}
		args := shellSplit(t, cmdline)
		for _, a := range args[1:] {
			if p, _ := strings.CutPrefix(a, "demo="); strings.HasPrefix(p, dir) {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: names %s, which --dir did not keep", cmdline, p)
				}
			}
		}
		switch args[0] {
		case "gguf":
			// diff exits 1 when the files differ, as they do here.
			r := runGGUF(t, nil, args[1:]...)
			if r.code != 0 && !(args[1] == "diff" && r.code == exitFound) {
				t.Errorf("%s: exit %d: %s", cmdline, r.code, r.stderr)
			}
			if args[1] == "run" && slices.Contains(args, "--temp") && args[slices.Index(args, "--temp")+1] == "0" && string(r.stdout)+"\n" != string(completion) {
				t.Errorf("%s: not the reference story: %q", cmdline, r.stdout)
			}
		case "cmp":
			a, _ := os.ReadFile(args[1])
			b, _ := os.ReadFile(args[2])
			if !bytes.Equal(a, b) {
				t.Errorf("%s: the files differ", cmdline)
			}
		default:
			t.Fatalf("unexpected command %q", cmdline)
		}
		ran++
	}
	if ran < 10 {
		t.Fatalf("only %d commands printed", ran)
	}
	for name, old := range before {
		now, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.HasSuffix(name, ".txt") && strings.HasPrefix(name, "head-ids") {
			a, errA := headprune.ReadIDs(bytes.NewReader(old), 512)
			b, errB := headprune.ReadIDs(bytes.NewReader(now), 512)
			if errA != nil || errB != nil || !slices.Equal(a, b) {
				t.Errorf("%s: the printed command chose other ids (%v %v)", name, errA, errB)
			}
		} else if !bytes.Equal(old, now) {
			t.Errorf("%s: the printed command wrote other bytes than the demo", name)
		}
	}
}

// shellSplit splits a command line as a POSIX shell does for words that
// are plain or single-quoted (what demoCmd prints).
func shellSplit(t *testing.T, line string) []string {
	var args []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

// TestBuildIdentityZeroTensors: a file without tensors keeps its form through
// an identity build, to a file, to stdout and from stdin: ggml's writer pads
// the header to the alignment (header-only-padded is what gguf_write_to_file
// makes, gguf/testdata/ggml-verdicts.txt), gguf-py does not.
func TestBuildIdentityZeroTensors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range fixture.VerdictCases() {
		if !strings.HasPrefix(c.Name, "header-only") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			in := filepath.Join(dir, c.Name+".gguf")
			if err := os.WriteFile(in, c.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, c.Name+".out.gguf")
			mustRun(t, nil, "build", in, "-o", out)
			if got, _ := os.ReadFile(out); !bytes.Equal(got, c.Data) {
				t.Errorf("file output: %d bytes from %d", len(got), len(c.Data))
			}
			if r := mustRun(t, nil, "build", in, "-o", "-"); !bytes.Equal(r.stdout, c.Data) {
				t.Errorf("stdout output: %d bytes from %d", len(r.stdout), len(c.Data))
			}
			if r := mustRun(t, bytes.NewReader(c.Data), "build", "-", "-o", "-"); !bytes.Equal(r.stdout, c.Data) {
				t.Errorf("stdin to stdout: %d bytes from %d", len(r.stdout), len(c.Data))
			}
			mustRun(t, bytes.NewReader(c.Data), "build", "-", "-o", out)
			if got, _ := os.ReadFile(out); !bytes.Equal(got, c.Data) {
				t.Errorf("stdin to file: %d bytes from %d", len(got), len(c.Data))
			}
		})
	}
}
