package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/vocabselect"
)

// qwenStyleTemplate is a Qwen3-style chatml Jinja template (the parts
// llama.cpp's detection and our thinking switch look at).
const qwenStyleTemplate = `{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endfor %}` +
	`{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}{%- endif %}`

// chatFixture writes the dense llama fixture with a chatml vocabulary (ids
// 92-95 become <think>, </think>, <|im_start|>, <|im_end|>) and the
// Qwen3-style template. forceEOG makes every answer end at once: the
// output rows of <|im_end|> and </s> become plus and minus one random row
// and all others zero, so one of the two ends of generation always has
// the largest logit.
func chatFixture(t *testing.T, forceEOG bool) (string, *vocabselect.Tokenizer) {
	t.Helper()
	m := fixture.Dense()
	md := m.Metadata()
	tokens, types := m.Tokens()
	for i, w := range []string{"<think>", "</think>", "<|im_start|>", "<|im_end|>"} {
		tokens[92+i], types[92+i] = w, 3
	}
	md.Set(gguf.KeyTokens, gguf.MustArray(tokens))
	md.Set(gguf.KeyTokenType, gguf.MustArray(types))
	md.Set(vocabselect.KeyChatTemplate, gguf.String(qwenStyleTemplate))
	ts := m.Tensors()
	if forceEOG {
		for _, tn := range ts {
			if tn.Info.Name != "output.weight" {
				continue
			}
			row := func(r int) []byte { return tn.Data[r*m.Embd*4 : (r+1)*m.Embd*4] }
			w := slices.Clone(row(40))
			clear(tn.Data)
			for j := 0; j < m.Embd; j++ {
				v := math.Float32frombits(binary.LittleEndian.Uint32(w[4*j:]))
				binary.LittleEndian.PutUint32(row(95)[4*j:], math.Float32bits(v))
				binary.LittleEndian.PutUint32(row(2)[4*j:], math.Float32bits(-v))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "chat.gguf")
	if err := os.WriteFile(path, fixture.Write(md, ts), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := vocabselect.NewTokenizer(md)
	if err != nil {
		t.Fatal(err)
	}
	return path, tok
}

var promptIDs = regexp.MustCompile(`gguf: prompt tokens \((\d+)\): \[([0-9 ]*)\]`)

// verbosePrompts returns the prompt ids run --verbose-prompt printed.
func verbosePrompts(t *testing.T, stderr []byte) [][]int32 {
	t.Helper()
	var out [][]int32
	for _, m := range promptIDs.FindAllStringSubmatch(string(stderr), -1) {
		var ids []int32
		for _, f := range strings.Fields(m[2]) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, int32(id))
		}
		out = append(out, ids)
	}
	return out
}

// TestRunChatEndsAtEOG runs --chat end to end on a llama fixture carrying a
// Qwen3-style chatml template: a system message and two user turns from
// stdin. Each prompt is the conversation so far in the template, tokenized
// with special tokens parsed (the chat package, checked against llama.cpp,
// renders the same conversation); each answer ends at an
// end-of-generation token; the second turn evaluates only from where its
// prompt departs from the cached tokens.
func TestRunChatEndsAtEOG(t *testing.T) {
	path, tok := chatFixture(t, true)
	r := mustRun(t, strings.NewReader("Hello t5\n\nt7 t9\n"), "run", path, "--chat", "--system", "You are t3.", "--temp", "0",
		"--verbose-prompt", "--reasoning", "off")
	if got, want := string(r.stdout), "> Hello t5\n\n> t7 t9\n\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	tm, err := chat.New(qwenStyleTemplate)
	if err != nil {
		t.Fatal(err)
	}
	conv := []chat.Message{{Role: "system", Content: "You are t3."}, {Role: "user", Content: "Hello t5"}}
	first, _ := tm.Render(conv, chat.ReasoningOff)
	conv = append(conv, chat.Message{Role: "assistant"}, chat.Message{Role: "user", Content: "t7 t9"})
	second, _ := tm.Render(conv, chat.ReasoningOff)
	want := [][]int32{tok.Encode(first, true, true), tok.Encode(second, true, true)}
	got := verbosePrompts(t, r.stderr)
	if len(got) != 2 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("prompt ids\n got %v\nwant %v", got, want)
	}
	if i := slices.Index(want[0], 92); !strings.HasSuffix(first, "<|im_start|>assistant\n<think>\n\n</think>\n\n") || i < 0 || slices.Index(want[0][i:], 93) < 0 {
		t.Errorf("reasoning off: the prompt does not end in the empty think block: %q", first)
	}
	// The second prompt repeats the first up to the assistant header (the
	// template does not repeat the empty think block of past answers), so
	// the second turn evaluates only from there.
	common := 0
	for want[0][common] == want[1][common] {
		common++
	}
	fed := len(want[0]) + len(want[1]) - common
	stats := string(r.stderr)
	for _, s := range []string{fmt.Sprintf("2 turns: prompts %d tokens", fed), "generated 0 tokens", "last answer stopped: end of generation token", "chatml (Qwen3 thinking)"} {
		if !strings.Contains(stats, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stats)
		}
	}
}

// TestRunChatOneShot asks one question with -p on the plain fixture
// (random weights): greedy, 6 tokens, the answer printed without the
// prompt; the same run twice gives the same answer.
func TestRunChatOneShot(t *testing.T) {
	path, _ := chatFixture(t, false)
	args := []string{"run", path, "-cnv", "-p", "t1 t2 t3", "-n", "6", "--temp", "0"}
	a, b := mustRun(t, nil, args...), mustRun(t, nil, args...)
	if string(a.stdout) != string(b.stdout) || strings.Contains(string(a.stdout), "t1 t2 t3") || !strings.HasSuffix(string(a.stdout), "\n") {
		t.Errorf("answers %q and %q", a.stdout, b.stdout)
	}
	if !strings.Contains(string(a.stderr), "1 turns") {
		t.Errorf("stderr: %s", a.stderr)
	}
}

// TestRunChatErrors checks the one-line usage errors of the chat flags.
func TestRunChatErrors(t *testing.T) {
	path, _ := chatFixture(t, false)
	plain := filepath.Join(t.TempDir(), "plain.gguf")
	if err := os.WriteFile(plain, fixture.Dense().Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"run", path, "--system", "x", "-p", "t1"}, "need --chat"},
		{[]string{"run", path, "--chat", "--reasoning", "maybe", "-p", "t1"}, "auto, on or off"},
		{[]string{"run", plain, "--chat", "-p", "t1"}, "no tokenizer.chat_template"},
		{[]string{"run", path, "--chat", "--chat-template", "kimi-k2", "-p", "t1"}, "not supported"},
	} {
		checkOneLineError(t, runGGUF(t, nil, c.args...), 2, c.mentions)
	}
}

// TestRunChatLongLine: a chat turn (a line of stdin) over the limit ends
// the chat with one line saying which line was too long and the limit,
// not bufio's "token too long".
func TestRunChatLongLine(t *testing.T) {
	path, _ := chatFixture(t, true)
	in := "t1\n" + strings.Repeat("t2 ", (1<<20)/3+1) + "\n"
	r := runGGUF(t, strings.NewReader(in), "run", path, "--chat", "-n", "2", "--temp", "0")
	checkOneLineError(t, r, exitUsage, "chat turns on stdin: line 2 is longer than 1.0 MiB")
}
