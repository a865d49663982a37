package chat

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/vocabselect"
)

// The conversations of bench/llama-chat.c, by the names its records use.
var conversations = map[string][]Message{
	"sys":  {{"system", "You are a helpful assistant."}, {"user", "Hello! Who are you?"}},
	"user": {{"user", "Hello! Who are you?"}},
	"multi": {{"system", "You are a helpful assistant."}, {"user", "Hello! Who are you?"},
		{"assistant", "  I am an assistant.  "}, {"user", "What is 2+2?"}},
}

// record is one rendering by llama.cpp: template (or input file) name,
// conversation, text; refused when llama.cpp returned an error.
type record struct {
	name, conv, text string
	refused          bool
}

// readRecords parses a file of bench/llama-chat.c records ("@@ NAME CONV
// LEN", LEN bytes, a newline).
func readRecords(t *testing.T, path string) []record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		f := strings.Fields(string(b[:max(nl, 0)]))
		if nl < 0 || len(f) != 4 || f[0] != "@@" {
			t.Fatalf("%s: bad record header %q", path, b[:min(len(b), 40)])
		}
		b = b[nl+1:]
		n, err := strconv.Atoi(f[3])
		if err != nil || n > len(b) {
			t.Fatalf("%s: bad record length %q", path, f[3])
		}
		r := record{name: f[1], conv: f[2], refused: n < 0}
		if n >= 0 {
			r.text, b = string(b[:n]), b[n+1:]
		}
		out = append(out, r)
	}
	return out
}

// TestTemplatesMatchLlamaCpp renders the three conversations in every
// supported template and compares them with llama.cpp's
// llama_chat_apply_template (testdata/llamacpp/templates.txt, made by
// bench/llama-chat.sh). It also checks that builtinNames is exactly
// llama.cpp's list of built-in templates.
func TestTemplatesMatchLlamaCpp(t *testing.T) {
	recs := readRecords(t, filepath.Join("testdata", "llamacpp", "templates.txt"))
	var names []string
	checked := map[string]int{}
	for _, r := range recs {
		if !slices.Contains(names, r.name) {
			names = append(names, r.name)
		}
		if _, ok := formats[r.name]; !ok {
			continue
		}
		got, err := Apply(r.name, conversations[r.conv], true)
		if err != nil {
			t.Fatal(err)
		}
		if got != r.text {
			t.Errorf("%s %s:\n got %q\nwant %q", r.name, r.conv, got, r.text)
		}
		checked[r.name]++
	}
	if !slices.Equal(names, builtinNames) {
		t.Errorf("llama.cpp's built-in templates are\n%q\nbuiltinNames has\n%q", names, builtinNames)
	}
	for _, n := range Names() {
		if checked[n] != len(conversations) {
			t.Errorf("%s: %d of %d conversations checked against llama.cpp", n, checked[n], len(conversations))
		}
	}
	t.Logf("%d templates x %d conversations identical to llama.cpp: %s", len(checked), len(conversations), strings.Join(Names(), " "))
}

// qwen3Vocab writes the Qwen3 vocab GGUF of bench/llama-chat.sh (the
// Qwen2 tokenizer files with Qwen3-4B's tokenizer_config.json) and returns
// its tokenizer and chat template.
func qwen3Vocab(t *testing.T) (*vocabselect.Tokenizer, string) {
	t.Helper()
	dir := t.TempDir()
	for to, from := range map[string]string{"vocab.json": "vocab.json", "merges.txt": "merges.txt",
		"tokenizer_config.json": "qwen3-4b_tokenizer_config.json", "config.json": "qwen2-1.5b-instruct_config.json"} {
		if err := os.Symlink(shared.Path(t, "models", "tokenizers", "qwen2", from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	md, err := vocabselect.ImportHF(dir, "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := vocabselect.NewTokenizer(md)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := md.Get(vocabselect.KeyChatTemplate)
	text, ok := v.Str()
	if !ok {
		t.Fatal("the Qwen3 vocab has no chat template")
	}
	return tok, text
}

// TestDetectMatchesLlamaCpp gives llama.cpp's detection the template texts
// of testdata/detect (one per format, in the style of the models' Jinja
// templates, plus a built-in name and one that matches nothing) and the
// real Qwen3-4B template, and compares what Detect and Apply render with
// what llama.cpp rendered (testdata/llamacpp/detect.txt).
func TestDetectMatchesLlamaCpp(t *testing.T) {
	_, qwen := qwen3Vocab(t)
	recs := readRecords(t, filepath.Join("testdata", "llamacpp", "detect.txt"))
	if len(recs) < 20 {
		t.Fatalf("only %d detection records", len(recs))
	}
	for _, r := range recs {
		text := qwen
		if r.name != "qwen3-4b.gguf" {
			b, err := os.ReadFile(filepath.Join("testdata", "detect", r.name))
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		tm, err := New(text)
		if r.refused {
			if err == nil {
				t.Errorf("%s: llama.cpp refuses it, we detect %s", r.name, tm.Name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		got, err := tm.Render(conversations[r.conv], ReasoningAuto)
		if err != nil {
			t.Fatal(err)
		}
		if got != r.text {
			t.Errorf("%s (detected %s):\n got %q\nwant %q", r.name, tm.Name, got, r.text)
		}
	}
}

// TestQwen3PromptTokens renders the system + user conversation with the
// Qwen3-4B template from its vocab's metadata and tokenizes it as
// llama-cli does (add_special, parse_special): the ids must be llama.cpp's
// (testdata/llamacpp/qwen3-tokens.txt). With --reasoning off the prompt
// gets Qwen3's empty think block, four more tokens (<think> \n\n </think>
// \n\n).
func TestQwen3PromptTokens(t *testing.T) {
	tok, text := qwen3Vocab(t)
	tm, err := New(text)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Name != "chatml" || !tm.HasReasoning() {
		t.Fatalf("Qwen3 template detected as %s", tm)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "llamacpp", "qwen3-tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var want []int32
	for _, f := range strings.Fields(lines[len(lines)-1]) {
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, int32(id))
	}
	prompt, err := tm.Render(conversations["sys"], ReasoningAuto)
	if err != nil {
		t.Fatal(err)
	}
	got := tok.Encode(prompt, true, true)
	if !slices.Equal(got, want) {
		t.Fatalf("ids\n got %v\nwant %v", got, want)
	}
	off, _ := tm.Render(conversations["sys"], ReasoningOff)
	ids := tok.Encode(off, true, true)
	think := tok.Encode("<think>\n\n</think>\n\n", false, true)
	if !slices.Equal(ids, append(slices.Clone(want), think...)) || len(think) != 4 || think[0] != 151667 || think[2] != 151668 {
		t.Errorf("reasoning off: %v (think block %v)", ids, think)
	}
	if !tok.IsEOG(151645) {
		t.Error("<|im_end|> is not an end of generation")
	}
}

// TestReasoningSwitches checks the thinking switches of the Ling formats
// and that templates without one ignore it.
func TestReasoningSwitches(t *testing.T) {
	conv := conversations["user"]
	for _, c := range []struct {
		name string
		r    Reasoning
		want string
	}{
		{"bailing", ReasoningOn, "<role>HUMAN</role>Hello! Who are you?<role>ASSISTANT</role><think>"},
		{"bailing-think", ReasoningOff, "<role>HUMAN</role>Hello! Who are you?<role>ASSISTANT</role>"},
		{"bailing2", ReasoningOn, "<role>SYSTEM</role>detailed thinking on<|role_end|><role>HUMAN</role>Hello! Who are you?<|role_end|><role>ASSISTANT</role>"},
		{"bailing2", ReasoningOff, "<role>SYSTEM</role>detailed thinking off<|role_end|><role>HUMAN</role>Hello! Who are you?<|role_end|><role>ASSISTANT</role>"},
		{"llama3", ReasoningOff, "<|start_header_id|>user<|end_header_id|>\n\nHello! Who are you?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
	} {
		tm, err := New(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := tm.Render(conv, c.r); got != c.want {
			t.Errorf("%s %d: %q, want %q", c.name, c.r, got, c.want)
		}
	}
	if _, err := ParseReasoning("maybe"); err == nil {
		t.Error("ParseReasoning accepted maybe")
	}
	q := &Template{Name: "chatml", qwenThink: true}
	if got := q.Answer("<think>\nhmm\n</think>\n\nFour."); got != "Four." {
		t.Errorf("Answer: %q", got)
	}
}

// TestNewErrors checks the one-line errors for missing, unknown and
// recognized-but-unsupported templates.
func TestNewErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                    "no tokenizer.chat_template",
		"{{ messages }}":      "matches none",
		"[gMASK]<sop>{{ x }}": `"chatglm4" is not supported`,
		"kimi-k2":             `"kimi-k2" is not supported`,
	} {
		_, err := New(spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%q): %v, want an error with %q", spec, err, want)
		}
	}
}

// TestStream checks stop-string cutting across piece boundaries and the
// held-back text.
func TestStream(t *testing.T) {
	s := NewStream([]string{"<|im_end|>", "<|im_start|>"})
	var shown strings.Builder
	for i, p := range []string{"Hel", "lo <", "|im", "_", "x"} {
		out, stopped := s.Add(p)
		shown.WriteString(out)
		if stopped {
			t.Fatalf("piece %d stopped", i)
		}
	}
	if shown.String() != "Hello <|im_x" {
		t.Fatalf("shown %q", shown.String())
	}
	out, stopped := s.Add("<|im_e")
	if stopped || out != "" {
		t.Fatalf("prefix of a stop: %q %v", out, stopped)
	}
	out, stopped = s.Add("nd|>more")
	if !stopped || out != "" {
		t.Fatalf("stop: %q %v", out, stopped)
	}
	s = NewStream([]string{"</s>"})
	out, _ = s.Add("a</")
	if out != "a" || s.Flush() != "</" {
		t.Fatalf("flush: %q", out)
	}
}
