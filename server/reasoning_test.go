package server

import (
	"net/http"
	"strings"

	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/internal/shared"
)

// TestThinkingSplit: replies split into thinking and answer as Debian's
// llama-server (0.7.0) split them with its default reasoning format,
// after a prompt that opened <think> and after one that did not
// (testdata/llama-server-reasoning.txt, bench/llama-server-reasoning.sh):
// whole, and streamed a character at a time (the deltas of each field
// joining to llama-server's message).
func TestThinkingSplit(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "llama-server-reasoning.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Opened  bool   `json:"opened"`
			Reply   string `json:"reply"`
			Message struct {
				Content   string `json:"content"`
				Reasoning string `json:"reasoning_content"`
			} `json:"message"`
			Deltas []map[string]string `json:"deltas"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		var lr, lc string
		for _, d := range c.Deltas {
			lr += d["reasoning_content"]
			lc += d["content"]
		}
		if lr != c.Message.Reasoning || lc != c.Message.Content {
			t.Fatalf("%q: llama-server's deltas (%q, %q) are not its message", c.Reply, lr, lc)
		}
		r, content := newThinking(c.Opened).split(c.Reply)
		if r != c.Message.Reasoning || content != c.Message.Content {
			t.Errorf("opened %v, %q: reasoning %q content %q, llama-server's %q %q", c.Opened, c.Reply, r, content, c.Message.Reasoning, c.Message.Content)
		}
		th := newThinking(c.Opened)
		var sr, sco string
		for _, ch := range c.Reply {
			a, b := th.Add(string(ch))
			sr, sco = sr+a, sco+b
		}
		a, b := th.Flush()
		if sr+a != c.Message.Reasoning || sco+b != c.Message.Content {
			t.Errorf("opened %v, %q streamed: reasoning %q content %q, llama-server's %q %q", c.Opened, c.Reply, sr+a, sco+b, c.Message.Reasoning, c.Message.Content)
		}
	}
	if n < 10 {
		t.Fatalf("%d replies in the test data", n)
	}
}

// TestStreamedReasoning: with Qwen3's template and thinking on (the
// prompt opens <think>), a chat reply that never closes the block is
// all thinking: streamed as delta.reasoning_content, never content, and
// not streamed as message.reasoning_content with an empty content, as
// llama-server answers (testdata/llama-server-reasoning.txt, "No think
// at all.").
func TestStreamedReasoning(t *testing.T) {
	b, err := os.ReadFile(shared.Path(t, "models", "tokenizers", "qwen2", "qwen3-4b_tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Template string `json:"chat_template"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	tm, err := chat.New(cfg.Template)
	if err != nil || !tm.HasReasoning() {
		t.Fatalf("Qwen3 template: %v %v", tm, err)
	}
	_, hs := newTestServer(t, 1, 256, func(c *Config) { c.Template, c.TemplateText = tm, cfg.Template })
	req := `{"messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":12,"temperature":0,"chat_template_kwargs":{"enable_thinking":true}`
	_, _, body := post(t, hs.URL+"/v1/chat/completions", req+`}`)
	var v struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Choices) != 1 {
		t.Fatalf("%v %s", err, body)
	}
	msg := v.Choices[0].Message
	thought, _ := msg["reasoning_content"].(string)
	if thought == "" || msg["content"] != "" {
		t.Fatalf("message %v: want the reply as reasoning_content, content empty", msg)
	}
	resp, err := http.Post(hs.URL+"/v1/chat/completions", "application/json", strings.NewReader(req+`,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var streamed string
	for _, e := range readEvents(t, resp.Body) {
		var c struct {
			Choices []struct {
				Delta map[string]any `json:"delta"`
			} `json:"choices"`
		}
		if e == "[DONE]" || json.Unmarshal([]byte(e), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if s, ok := d["content"].(string); ok && s != "" {
			t.Errorf("a content delta %q while thinking", s)
		}
		s, _ := d["reasoning_content"].(string)
		streamed += s
	}
	if streamed != thought {
		t.Errorf("streamed reasoning %q, not streamed %q", streamed, thought)
	}
}
