package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// runVocab runs "gguf vocab ARGS" in-process on a fresh command tree, with
// stdin from in, and returns stdout, stderr and the error.
func runVocab(t *testing.T, in string, args ...string) (string, string, error) {
	t.Helper()
	var so, se bytes.Buffer
	oldOut, oldErr, oldIn := stdout, stderr, stdin
	stdout, stderr, stdin = &so, &se, strings.NewReader(in)
	defer func() { stdout, stderr, stdin = oldOut, oldErr, oldIn }()
	cmd := newVocabCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&se)
	cmd.SetErr(&se)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return so.String(), se.String(), err
}

func mustVocab(t *testing.T, in string, args ...string) string {
	t.Helper()
	out, errOut, err := runVocab(t, in, args...)
	if err != nil {
		t.Fatalf("gguf vocab %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// testPair reads llama.cpp test pair i of a .inp/.out file.
func testPair(t *testing.T, inp string, i int) (string, string) {
	t.Helper()
	in, err := os.ReadFile(inp)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(strings.TrimSuffix(inp, ".inp") + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(in), "\n__ggml_vocab_test__\n")
	lines := strings.Split(string(out), "\n")
	return texts[i], "[" + strings.Join(strings.Fields(lines[i]), ", ") + "]\n"
}

// TestVocabTokenize checks tokenize against llama-tokenize --ids on
// stories260K and against llama.cpp's test pairs for text given as TEXT,
// --file and --stdin (taken byte for byte: the pairs have leading and
// trailing whitespace).
func TestVocabTokenize(t *testing.T) {
	stories := shared.Path(t, "models", "stories260K-f32.gguf")
	if got := mustVocab(t, "", "tokenize", stories, "Once upon a time", "--ids"); got != "[1, 403, 407, 261, 378]\n" {
		t.Fatalf("stories260K: %q", got)
	}
	if got := mustVocab(t, "", "tokenize", stories, "a"); got != "     1 -> '<s>'\n   261 -> ' a'\n" {
		t.Fatalf("default output: %q", got)
	}
	inp := shared.Path(t, "models", "vocab", "ggml-vocab-gpt-2.gguf.inp")
	model := strings.TrimSuffix(inp, ".inp")
	for i := range 46 {
		text, want := testPair(t, inp, i)
		if text == "" {
			continue
		}
		file := filepath.Join(t.TempDir(), "in.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		flags := []string{"--ids", "--no-bos", "--no-parse-special"}
		if got := mustVocab(t, "", append([]string{"tokenize", model, "--file", file}, flags...)...); got != want {
			t.Errorf("pair %d --file: %s want %s", i, got, want)
		}
		if got := mustVocab(t, text, append([]string{"tokenize", model, "--stdin"}, flags...)...); got != want {
			t.Errorf("pair %d --stdin: %s want %s", i, got, want)
		}
		if got := mustVocab(t, "", append([]string{"tokenize", model, text}, flags...)...); got != want {
			t.Errorf("pair %d TEXT: %s want %s", i, got, want)
		}
	}
	pieces := mustVocab(t, "", "tokenize", model, "Hello  world", "--pieces")
	if pieces != "\"Hello\"\n\" \"\n\" world\"\n" {
		t.Fatalf("--pieces: %q", pieces)
	}
}

// TestVocabImportHF writes a vocab GGUF from the Qwen2 tokenizer files and
// tokenizes llama.cpp's Qwen2 test pairs with it through the CLI.
func TestVocabImportHF(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qwen2")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for to, from := range map[string]string{"vocab.json": "vocab.json", "merges.txt": "merges.txt",
		"tokenizer_config.json": "qwen2-1.5b-instruct_tokenizer_config.json", "config.json": "qwen2-1.5b-instruct_config.json"} {
		if err := os.Symlink(shared.Path(t, "models", "tokenizers", "qwen2", from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "qwen2.gguf")
	mustVocab(t, "", "import-hf", dir, "--pre", "qwen2", "-o", out)
	inp := shared.Path(t, "models", "tokenizers", "qwen2", "ggml-vocab-qwen2.gguf.inp")
	for _, i := range []int{0, 9, 17, 18, 19, 34, 45} {
		text, want := testPair(t, inp, i)
		if got := mustVocab(t, text, "tokenize", out, "--stdin", "--ids", "--no-bos", "--no-parse-special"); got != want {
			t.Errorf("pair %d: %s want %s", i, got, want)
		}
	}
	if got := mustVocab(t, "", "tokenize", out, "<|im_start|>user", "--ids"); got != "[151644, 872]\n" {
		t.Fatalf("special token parsing: %s", got)
	}
	if _, _, err := runVocab(t, "", "import-hf", dir, "--pre", "nonsense", "-o", out); err == nil {
		t.Fatal("an unknown pre-tokenizer must fail")
	}
}

// TestVocabImportHFNamedFiles imports the Qwen2 tokenizer from shared/,
// where the optional files carry a prefix: without flags each is warned
// about (naming the file and the flag) and the vocabulary lacks the added
// tokens and padding; with --config, --tokenizer-config and --added-tokens
// it has llama.cpp's 151,936 tokens and parses <|im_start|>.
func TestVocabImportHFNamedFiles(t *testing.T) {
	dir := shared.Path(t, "models", "tokenizers", "qwen2")
	out := filepath.Join(t.TempDir(), "qwen2.gguf")
	r := runGGUF(t, nil, "vocab", "import-hf", dir, "--pre", "qwen2", "-o", out)
	for _, s := range []string{"no tokenizer_config.json", "qwen2-1.5b-instruct_tokenizer_config.json", "--tokenizer-config", "--added-tokens", "--config", "151643 tokens"} {
		if !strings.Contains(string(r.stderr), s) {
			t.Errorf("stderr lacks %q: %s", s, r.stderr)
		}
	}
	file := func(name string) string { return filepath.Join(dir, "qwen2-1.5b-instruct_"+name) }
	r = mustRun(t, nil, "vocab", "import-hf", dir, "--pre", "qwen2", "-o", out,
		"--config", file("config.json"), "--tokenizer-config", file("tokenizer_config.json"), "--added-tokens", file("added_tokens.json"))
	if strings.Contains(string(r.stderr), "warning") || !strings.Contains(string(r.stderr), "151936 tokens") {
		t.Errorf("with the files named: %s", r.stderr)
	}
	if got := mustVocab(t, "", "tokenize", out, "<|im_start|>user", "--ids"); got != "[151644, 872]\n" {
		t.Errorf("special token parsing: %s", got)
	}
	checkOneLineError(t, runGGUF(t, nil, "vocab", "import-hf", dir, "--pre", "qwen2", "-o", out, "--config", file("nope.json")), exitUsage, "nope.json")
}

// TestVocabCountSelectCoverage runs count, select (from counts files and
// from text, twice: same bytes) and coverage on shared corpora.
func TestVocabCountSelectCoverage(t *testing.T) {
	model := shared.Path(t, "models", "vocab", "ggml-vocab-deepseek-coder.gguf")
	en := shared.Path(t, "corpus", "eval", "eval-en.txt")
	multi := shared.Path(t, "corpus", "eval", "eval-multi.txt")
	tmp := t.TempDir()
	counts := filepath.Join(tmp, "en.tsv")
	mustVocab(t, "", "count", model, "--corpus", en, "-o", counts)
	data, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# gguf vocab count\n") || !strings.Contains(string(data), "\nid\tcount\ttext\n") {
		t.Fatalf("counts file:\n%.300s", data)
	}
	sel := func(out string, enArg string) []byte {
		mustVocab(t, "", "select", model, "--rows", "3001", "--keep-below", "256",
			"--corpus", "en="+enArg+":1000", "--corpus", "multi="+multi, "--corpus", "code="+shared.Path(t, "corpus", "eval"), "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fromCounts := sel(filepath.Join(tmp, "a.txt"), counts)
	again := sel(filepath.Join(tmp, "b.txt"), counts)
	fromText := sel(filepath.Join(tmp, "c.txt"), en)
	if !bytes.Equal(fromCounts, again) {
		t.Fatal("select is not reproducible")
	}
	strip := func(b []byte) string { // the ids, without the header naming the file
		i := bytes.Index(b, []byte("\n0\n"))
		return string(b[i:])
	}
	if strip(fromCounts) != strip(fromText) {
		t.Fatal("selecting from a counts file and from its text differ")
	}
	lines := strings.Split(strings.TrimSpace(string(fromCounts)), "\n")
	ids := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			ids++
		}
	}
	if ids != 3008 || !strings.HasPrefix(lines[0], "# gguf vocab select") {
		t.Fatalf("%d ids (want 3008), header %q", ids, lines[0])
	}
	out := mustVocab(t, "", "coverage", model, "--ids", filepath.Join(tmp, "a.txt"), "--text", en, "--text", multi, "--json")
	var reps []struct {
		File   string  `json:"file"`
		Tokens uint64  `json:"tokens"`
		Misses uint64  `json:"misses"`
		Share  float64 `json:"share"`
		Top    []struct {
			ID    int32  `json:"id"`
			Count uint64 `json:"count"`
			Text  string `json:"text"`
		} `json:"top_missing"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(reps) != 2 || reps[0].Tokens == 0 || reps[0].Misses >= reps[0].Tokens || len(reps[1].Top) == 0 {
		t.Fatalf("coverage: %+v", reps)
	}
	text := mustVocab(t, "", "coverage", model, "--ids", filepath.Join(tmp, "a.txt"), "--text", en)
	if !strings.Contains(text, "tokens,") || !strings.Contains(text, "misses") {
		t.Fatalf("coverage text: %s", text)
	}
}

// TestVocabUsageErrors checks that bad invocations are usage errors.
func TestVocabUsageErrors(t *testing.T) {
	stories := shared.Path(t, "models", "stories260K-f32.gguf")
	ids := filepath.Join(t.TempDir(), "ids.txt")
	if err := os.WriteFile(ids, []byte("1\n2\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tokenize", stories, "text", "--stdin"},
		{"tokenize", stories},
		{"tokenize", stories, "x", "--ids", "--pieces"},
		{"select", stories, "--corpus", "en=x"},
		{"select", stories, "--rows", "10", "--corpus", "nofile"},
		{"select", stories, "--rows", "10", "--keep-below", "100", "--corpus", "en=" + stories},
		{"coverage", stories, "--ids", ids, "--text", stories},
		{"count", stories},
	} {
		_, _, err := runVocab(t, "", args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
	if _, _, err := runVocab(t, "", "tokenize", filepath.Join(t.TempDir(), "missing.gguf"), "x"); err == nil {
		t.Fatal("a missing model must fail")
	}
}
