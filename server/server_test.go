package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/memguard"
	"github.com/ggufkit/gguf/internal/moegen"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/vocabselect"
)

// newTestServer serves stories260K (llama2.c's 260K-parameter story model,
// context 128) from slots states of ctx tokens; edit adjusts the config.
func newTestServer(t *testing.T, slots, ctx int, edit func(*Config)) (*Server, *httptest.Server) {
	t.Helper()
	path := shared.Path(t, "models", "stories260K-f32.gguf")
	m, err := engine.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := vocabselect.NewTokenizer(m.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := chat.New("chatml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: m, Tokenizer: tok, Template: tm, TemplateText: "chatml", Name: "stories", Path: path,
		Queue: 4, NPredict: -1, Sampler: engine.DefaultSampler(), Build: "test"}
	for range slots {
		s, err := engine.NewState(m, engine.Options{Ctx: ctx, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		cfg.Slots = append(cfg.Slots, s)
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs
}

// post sends body as JSON and returns the status, headers and body.
func post(t *testing.T, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// kinds maps each field of v to its JSON kind, one level down into
// objects, as the comparison with llama-server's responses checks them.
func kinds(v map[string]any, prefix string, out map[string]string) map[string]string {
	if out == nil {
		out = map[string]string{}
	}
	for k, x := range v {
		switch x := x.(type) {
		case map[string]any:
			out[prefix+k] = "object"
			if prefix == "" {
				kinds(x, k+".", out)
			}
		case []any:
			out[prefix+k] = "array"
		case string:
			out[prefix+k] = "string"
		case float64:
			out[prefix+k] = "number"
		case bool:
			out[prefix+k] = "bool"
		case nil:
			out[prefix+k] = "null"
		}
	}
	return out
}

// llamaServer holds what Debian's llama-server (llama.cpp 0.7.0, build
// b11669) answered to the same requests on stories260K-f32.gguf (-c 128):
// the greedy texts, and the fields (with their JSON kinds) that both
// servers give; llama-server gives more (its sampler chain's parameters).
var llamaServer = struct {
	completionText, chatText string
	completion, chatResp     map[string]string
}{
	completionText: ", there was a little", // {"prompt":"Once upon a time","n_predict":5,"temperature":0}
	chatText:       `"He`,                  // {"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"temperature":0}
	completion: map[string]string{"index": "number", "content": "string", "tokens": "array", "id_slot": "number",
		"stop": "bool", "model": "string", "tokens_predicted": "number", "tokens_evaluated": "number",
		"generation_settings": "object", "prompt": "string", "has_new_line": "bool", "truncated": "bool",
		"stop_type": "string", "stopping_word": "string", "tokens_cached": "number", "timings": "object",
		"completion_probabilities": "array", "timings.cache_n": "number", "timings.prompt_n": "number",
		"timings.prompt_ms": "number", "timings.prompt_per_token_ms": "number", "timings.prompt_per_second": "number",
		"timings.predicted_n": "number", "timings.predicted_ms": "number", "timings.predicted_per_token_ms": "number",
		"timings.predicted_per_second": "number", "generation_settings.seed": "number",
		"generation_settings.temperature": "number", "generation_settings.top_k": "number",
		"generation_settings.top_p": "number", "generation_settings.min_p": "number", "generation_settings.n_predict": "number",
		"generation_settings.stop": "array", "generation_settings.n_probs": "number", "generation_settings.stream": "bool"},
	chatResp: map[string]string{"choices": "array", "created": "number", "model": "string", "system_fingerprint": "string",
		"object": "string", "usage": "object", "id": "string", "timings": "object", "usage.completion_tokens": "number",
		"usage.prompt_tokens": "number", "usage.total_tokens": "number", "usage.prompt_tokens_details": "object"},
}

// TestEndpoints: every route answers with llama-server's fields and
// kinds, and greedy requests give llama-server's text.
func TestEndpoints(t *testing.T) {
	_, hs := newTestServer(t, 1, 128, nil)
	code, _, b := post(t, hs.URL+"/completion", `{"prompt":"Once upon a time","n_predict":5,"temperature":0,"n_probs":2}`)
	if code != 200 {
		t.Fatalf("/completion: %d %s", code, b)
	}
	v := decodeJSON(t, b)
	if v["content"] != llamaServer.completionText {
		t.Errorf("/completion greedy text %q, llama-server's %q", v["content"], llamaServer.completionText)
	}
	got := kinds(v, "", nil)
	for k, want := range llamaServer.completion {
		if got[k] != want {
			t.Errorf("/completion field %s: %q, llama-server's %q", k, got[k], want)
		}
	}
	probs := v["completion_probabilities"].([]any)
	if len(probs) != 5 || len(probs[0].(map[string]any)["top_logprobs"].([]any)) != 2 {
		t.Errorf("/completion n_probs 2: %v", probs)
	}
	code, _, b = post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"temperature":0,"logprobs":true,"top_logprobs":2}`)
	if code != 200 {
		t.Fatalf("/v1/chat/completions: %d %s", code, b)
	}
	v = decodeJSON(t, b)
	got = kinds(v, "", nil)
	for k, want := range llamaServer.chatResp {
		if got[k] != want {
			t.Errorf("chat field %s: %q, llama-server's %q", k, got[k], want)
		}
	}
	choice := v["choices"].([]any)[0].(map[string]any)
	if msg := choice["message"].(map[string]any); msg["content"] != llamaServer.chatText || msg["role"] != "assistant" {
		t.Errorf("chat greedy message %v, llama-server's content %q", msg, llamaServer.chatText)
	}
	if choice["finish_reason"] != "length" || len(choice["logprobs"].(map[string]any)["content"].([]any)) != 3 {
		t.Errorf("chat choice %v", choice)
	}
	if u := v["usage"].(map[string]any); u["prompt_tokens"] != 42.0 || u["completion_tokens"] != 3.0 {
		t.Errorf("chat usage %v, llama-server's 42 prompt and 3 completion tokens", u)
	}
	code, _, b = post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon","max_tokens":3,"temperature":0}`)
	if v := decodeJSON(t, b); code != 200 || v["object"] != "text_completion" || v["choices"].([]any)[0].(map[string]any)["text"] != " a time," {
		t.Errorf("/v1/completions: %d %s (llama-server: \" a time,\")", code, b)
	}
	for _, c := range []struct{ path, body, want string }{
		{"/tokenize", `{"content":"Once upon"}`, `{"tokens":[403,407]}`},
		{"/tokenize", `{"content":"Once upon","with_pieces":true}`, `{"tokens":[{"id":403,"piece":" Once"},{"id":407,"piece":" upon"}]}`},
		{"/detokenize", `{"tokens":[1,403]}`, `{"content":"\u003cs\u003e Once"}`},
		{"/apply-template", `{"messages":[{"role":"user","content":"hi"}]}`, `{"prompt":"\u003c|im_start|\u003euser\nhi\u003c|im_end|\u003e\n\u003c|im_start|\u003eassistant\n"}`},
	} {
		if code, _, b := post(t, hs.URL+c.path, c.body); code != 200 || string(b) != c.want {
			t.Errorf("%s %s: %d %s, llama-server: %s", c.path, c.body, code, b, c.want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/health", `"status":"ok"`}, {"/v1/models", `"owned_by":"llamacpp"`}, {"/props", `"total_slots":1`},
		{"/slots", `"n_ctx":128`}, {"/metrics", "llamacpp:tokens_predicted_total 11\n"},
	} {
		if code, b := get(t, hs.URL+c.path); code != 200 || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %d %s, want %s in it", c.path, code, b, c.want)
		}
	}
}

// events reads a server-sent event stream: each event must be "data: "
// and one line, followed by an empty line.
func readEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("event line %q does not start with \"data: \"", line)
		}
		out = append(out, strings.TrimPrefix(line, "data: "))
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %q is not followed by an empty line", line)
		}
	}
	return out
}

// TestStreamFraming: the OpenAI streams are data: events ending with
// data: [DONE]; the chat stream starts with the assistant role and ends
// with a finish reason and, when asked, a usage chunk; /completion's
// stream ends with its full object (stop true), as llama-server's.
func TestStreamFraming(t *testing.T) {
	_, hs := newTestServer(t, 1, 128, nil)
	stream := func(path, body string) []string {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, ct)
		}
		return readEvents(t, resp.Body)
	}
	ev := stream("/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`)
	if len(ev) != 7 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("chat stream: %d events %q, want role, 3 tokens, finish, usage, [DONE]", len(ev), ev)
	}
	var text string
	for i, e := range ev[:len(ev)-1] {
		v := decodeJSON(t, []byte(e))
		if v["object"] != "chat.completion.chunk" {
			t.Errorf("event %d: object %v", i, v["object"])
		}
		ch := v["choices"].([]any)
		switch {
		case i == 0:
			if d := ch[0].(map[string]any)["delta"].(map[string]any); d["role"] != "assistant" {
				t.Errorf("first event %s", e)
			}
		case i == 4:
			if ch[0].(map[string]any)["finish_reason"] != "length" || v["timings"] == nil {
				t.Errorf("finish event %s", e)
			}
		case i == 5:
			if len(ch) != 0 || v["usage"] == nil {
				t.Errorf("usage event %s", e)
			}
		default:
			text += ch[0].(map[string]any)["delta"].(map[string]any)["content"].(string)
		}
	}
	if text != llamaServer.chatText {
		t.Errorf("streamed text %q, llama-server's %q", text, llamaServer.chatText)
	}
	ev = stream("/v1/completions", `{"prompt":"Once upon","max_tokens":2,"temperature":0,"stream":true}`)
	if len(ev) != 4 || ev[3] != "[DONE]" || !strings.Contains(ev[2], `"finish_reason":"length"`) {
		t.Errorf("/v1/completions stream %q", ev)
	}
	ev = stream("/completion", `{"prompt":"Once upon a time","n_predict":2,"temperature":0,"stream":true}`)
	if len(ev) != 3 || !strings.Contains(ev[0], `"content":","`) || !strings.Contains(ev[2], `"stop":true`) {
		t.Errorf("/completion stream %q", ev)
	}
}

// TestErrors: bad requests get llama-server's {"error": {code, message,
// type}} with the right status.
func TestErrors(t *testing.T) {
	_, hs := newTestServer(t, 1, 128, nil)
	long := strings.Repeat("Once upon a time ", 60)
	for _, c := range []struct {
		path, body string
		code       int
		typ        string
	}{
		{"/completion", `{bad`, 400, "invalid_request_error"},
		{"/v1/chat/completions", `{"prompt":"x"}`, 400, "invalid_request_error"},
		{"/completion", `{"prompt":"` + long + `","n_predict":2}`, 400, "exceed_context_size_error"},
		{"/completion", `{"prompt":[1,9999]}`, 400, "invalid_request_error"},
		{"/completion", `{"prompt":"a","n_probs":1000}`, 400, "invalid_request_error"},
		{"/completion", `{"prompt":"` + strings.Repeat("a", maxBody+10) + `"}`, 413, "invalid_request_error"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 501, "not_supported_error"},
		{"/nothing", `{}`, 404, "not_found_error"},
		{"/health", `{}`, 405, "invalid_request_error"},
	} {
		code, _, b := post(t, hs.URL+c.path, c.body)
		var v struct {
			Error apiError `json:"error"`
		}
		if err := json.Unmarshal(b, &v); err != nil || code != c.code || v.Error.Code != c.code || v.Error.Type != c.typ || v.Error.Message == "" {
			t.Errorf("%s %.40s: %d %.200s, want %d %s", c.path, c.body, code, b, c.code, c.typ)
		}
	}
}

// TestAPIKey: with a key, requests without it (or with another) get 401
// as llama-server's; /health and the page stay open.
func TestAPIKey(t *testing.T) {
	_, hs := newTestServer(t, 1, 128, func(c *Config) { c.APIKey = "sekret" })
	body := `{"content":"a"}`
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"X-Api-Key", "sekre"}} {
		code, _, b := post(t, hs.URL+"/tokenize", body, h...)
		if code != 401 || string(b) != `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}` {
			t.Errorf("key %v: %d %s", h, code, b)
		}
	}
	for _, h := range [][]string{{"Authorization", "Bearer sekret"}, {"X-Api-Key", "sekret"}} {
		if code, _, b := post(t, hs.URL+"/tokenize", body, h...); code != 200 {
			t.Errorf("key %v: %d %s", h, code, b)
		}
	}
	if code, _ := get(t, hs.URL+"/v1/models"); code != 401 {
		t.Errorf("/v1/models without the key: %d", code)
	}
	for _, p := range []string{"/health", "/"} {
		if code, _ := get(t, hs.URL+p); code != 200 {
			t.Errorf("%s without the key: %d", p, code)
		}
	}
}

// TestQueueFull: with the slot busy and Queue requests waiting, the next
// gets 503 with Retry-After; the waiting one is served when the slot
// frees.
func TestQueueFull(t *testing.T) {
	srv, hs := newTestServer(t, 1, 128, func(c *Config) { c.Queue = 1 })
	sl, err := srv.acquire(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"prompt":"Once","n_predict":2}`
	waited := make(chan int)
	go func() {
		resp, err := http.Post(hs.URL+"/completion", "application/json", strings.NewReader(body))
		if err != nil {
			waited <- 0
			return
		}
		resp.Body.Close()
		waited <- resp.StatusCode
	}()
	for srv.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	code, h, b := post(t, hs.URL+"/completion", body)
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(string(b), `"type":"unavailable_error"`) {
		t.Errorf("queue full: %d %v %s", code, h, b)
	}
	srv.release(sl)
	if code := <-waited; code != 200 {
		t.Errorf("the queued request: %d", code)
	}
	if _, b := get(t, hs.URL+"/metrics"); !strings.Contains(string(b), "gguf:requests_refused_total 1\n") {
		t.Errorf("metrics do not count the refusal:\n%s", b)
	}
}

// TestCancelWithinOneToken: a generation whose request context ends stops
// before the next token is evaluated: at most one token after it.
func TestCancelWithinOneToken(t *testing.T) {
	srv, _ := newTestServer(t, 1, 1024, nil)
	ids := srv.cfg.Tokenizer.Encode("Once upon a time", true, true)
	for _, at := range []int{1, 5, 40} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		r, err := srv.run(ctx, &job{ids: ids, n: 500, sampler: engine.SamplerOptions{Temp: 0}, cache: true}, func(c chunk) error {
			n += len(c.tokens)
			if n >= at {
				cancel()
			}
			return nil
		})
		cancel()
		if err != context.Canceled || r.stats.Generated > at+1 {
			t.Errorf("cancelled at token %d: %v, %d tokens generated", at, err, r.stats.Generated)
		}
	}
}

// TestDisconnectStopsGeneration: a client that goes away mid-stream
// frees the slot at once: the server generates far fewer than the
// tokens asked, and serves the next request.
func TestDisconnectStopsGeneration(t *testing.T) {
	srv, hs := newTestServer(t, 1, 4096, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/completion",
		strings.NewReader(`{"prompt":"Once upon a time","n_predict":4000,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for srv.met.requests.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := srv.met.predicted.Load(); got == 0 || got >= 4000 {
		t.Errorf("%d tokens generated for a client that left after the first", got)
	}
	if code, _, b := post(t, hs.URL+"/completion", `{"prompt":"Once","n_predict":2}`); code != 200 {
		t.Errorf("next request: %d %s", code, b)
	}
}

// timingsOf returns a response's timings.
func timingsOf(t *testing.T, b []byte) (promptN, cacheN int) {
	t.Helper()
	tm := decodeJSON(t, b)["timings"].(map[string]any)
	return int(tm["prompt_n"].(float64)), int(tm["cache_n"].(float64))
}

// TestCacheReuse: a prompt that extends the slot's cache evaluates only
// its new tokens, for /completion and for a chat's second turn.
func TestCacheReuse(t *testing.T) {
	srv, hs := newTestServer(t, 1, 256, nil)
	_, _, b := post(t, hs.URL+"/completion", `{"prompt":"Once upon a time","n_predict":8,"temperature":0}`)
	first := decodeJSON(t, b)["content"].(string)
	next := "Once upon a time" + first + " and the dog"
	_, _, b = post(t, hs.URL+"/completion", fmt.Sprintf(`{"prompt":%q,"n_predict":4,"temperature":0}`, next))
	total := len(srv.cfg.Tokenizer.Encode(next, true, true))
	promptN, cacheN := timingsOf(t, b)
	if promptN+cacheN != total || cacheN < 5+8-1 {
		t.Errorf("/completion second prompt: %d evaluated + %d cached of %d tokens, want at least the first prompt and answer (12) cached", promptN, cacheN, total)
	}
	_, _, b = post(t, hs.URL+"/completion", fmt.Sprintf(`{"prompt":%q,"n_predict":4,"temperature":0,"cache_prompt":false}`, next))
	if promptN, cacheN := timingsOf(t, b); promptN != total || cacheN != 0 {
		t.Errorf("cache_prompt false: %d evaluated, %d cached of %d", promptN, cacheN, total)
	}

	turn := func(msgs string) (string, []byte) {
		_, _, b := post(t, hs.URL+"/v1/chat/completions", `{"messages":[`+msgs+`],"max_tokens":6,"temperature":0}`)
		return decodeJSON(t, b)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string), b
	}
	one := `{"role":"user","content":"Tell me a story."}`
	answer, b := turn(one)
	p1, _ := timingsOf(t, b)
	msgs := one + fmt.Sprintf(`,{"role":"assistant","content":%q},{"role":"user","content":"More."}`, answer)
	_, b = turn(msgs)
	p2, c2 := timingsOf(t, b)
	u := decodeJSON(t, b)["usage"].(map[string]any)
	if c2 < p1 || p2+c2 != int(u["prompt_tokens"].(float64)) || p2 >= int(u["prompt_tokens"].(float64))-p1 {
		t.Errorf("second turn: %d evaluated, %d cached of %v; the first turn's prompt was %d", p2, c2, u["prompt_tokens"], p1)
	}
}

// TestContextOverflowDropsTurns: a conversation longer than the context
// loses its oldest turns (the system message stays) and is answered.
func TestContextOverflowDropsTurns(t *testing.T) {
	srv, hs := newTestServer(t, 1, 128, nil)
	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"Be kind."}`)
	for i := range 6 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"Once upon a time there was a dog number %d."}`, i),
			`{"role":"assistant","content":"The dog was happy and played in the sun."}`)
	}
	msgs = append(msgs, `{"role":"user","content":"The end?"}`)
	code, h, b := post(t, hs.URL+"/v1/chat/completions", `{"messages":[`+strings.Join(msgs, ",")+`],"max_tokens":8,"temperature":0}`)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	v := decodeJSON(t, b)
	prompt := int(v["usage"].(map[string]any)["prompt_tokens"].(float64))
	if v["truncated"] != true || h.Get("X-Dropped-Messages") == "" || prompt+8 > 128 {
		t.Errorf("truncated %v, dropped %q, prompt %d tokens + 8 in a context of 128", v["truncated"], h.Get("X-Dropped-Messages"), prompt)
	}
	// What was kept: the system message and the last turns.
	var all []chat.Message
	json.Unmarshal([]byte("["+strings.Join(msgs, ",")+"]"), &all)
	ids, dropped, _, err := srv.chatPrompt(all, chat.ReasoningAuto, 8)
	if err != nil || len(ids) != prompt || dropped%2 != 0 || dropped == 0 {
		t.Errorf("chatPrompt: %d tokens, %d dropped (whole turns), %v", len(ids), dropped, err)
	}
}

// TestPage: the chat page is one self-contained file of ES5 script.
func TestPage(t *testing.T) {
	_, hs := newTestServer(t, 1, 128, nil)
	code, b := get(t, hs.URL+"/")
	if code != 200 || !bytes.Contains(b, []byte("v1/chat/completions")) {
		t.Fatalf("GET /: %d", code)
	}
	for _, bad := range []string{"http://", "https://", "=>", "let ", "const ", "`", "async ", "import "} {
		if bytes.Contains(b, []byte(bad)) {
			t.Errorf("the page holds %q: an external URL or JavaScript newer than ES5", bad)
		}
	}
}

// TestLoad: 200 requests from 8 clients with 2 slots and a queue of 2:
// each is answered (200) or refused (503), in bounded time, and no
// goroutine is left behind.
func TestLoad(t *testing.T) {
	srv, hs := newTestServer(t, 2, 256, func(c *Config) { c.Queue = 2 })
	before := runtime.NumGoroutine()
	start := time.Now()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				body := fmt.Sprintf(`{"prompt":"Once upon a time %d","n_predict":16,"seed":%d,"stream":%v}`, i, c, i%2 == 0)
				resp, err := http.Post(hs.URL+"/completion", "application/json", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	http.DefaultClient.CloseIdleConnections()
	hs.CloseClientConnections()
	after := runtime.NumGoroutine()
	for i := 0; i < 100 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if codes[200]+codes[503] != 200 || codes[200] == 0 || took > 60*time.Second {
		t.Errorf("answers %v in %s", codes, took)
	}
	if after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
	if srv.waiting.Load() != 0 || len(srv.tickets) != 0 {
		t.Errorf("%d waiting, %d slots held after the load", srv.waiting.Load(), len(srv.tickets))
	}
	// The process's peak resident memory (the test binary's, this test's
	// load included), where Linux tells it.
	peak := "unknown (no /proc/self/status)"
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				peak = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
			}
		}
	}
	t.Logf("200 requests, 8 clients: %v in %s; goroutines %d before, %d after; peak RSS %s", codes, took, before, after, peak)
}

// TestMemoryGuard: with a simulated cgroup, memory falling below the
// guard's reserve shrinks the slots' expert pools by what is short,
// /health answers 503, new generations are refused with 503 and
// Retry-After, /metrics counts it all; memory back above the reserve
// serves again, with the smaller pools until there is room for more
// slots above the reserve and a margin (hysteresis), then grows them back
// to their size at start, as /health and /metrics show.
func TestMemoryGuard(t *testing.T) {
	dir := t.TempDir()
	spec := moegen.Spec{Model: fixture.Named["ci-moe"], ExpertsLast: true, Skew: 3}
	spec.Experts, spec.ExpertsUsed, spec.Type, spec.HeadType = 8, 2, gguf.TypeF32, gguf.TypeF32
	var buf bytes.Buffer
	if _, err := spec.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "moe.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := engine.OpenWith(path, engine.OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tok, err := vocabselect.NewTokenizer(m.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := chat.New("chatml")
	const limit, reserve = 1 << 30, 64 << 20
	sim := func(current int64) {
		for p, c := range map[string]string{"proc/meminfo": "MemTotal: 8000000 kB\nMemAvailable: 6000000 kB\n",
			"proc/self/cgroup": "0::/\n", "cg/memory.max": fmt.Sprint(limit), "cg/memory.current": fmt.Sprint(current)} {
			p = filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	sim(limit / 2)
	g := memguard.New(memguard.Roots{Proc: filepath.Join(dir, "proc"), Cgroup: filepath.Join(dir, "cg")}, reserve)
	cfg := Config{Model: m, Tokenizer: tok, Template: tm, TemplateText: "chatml", Name: "moe", Queue: 1, NPredict: 4,
		Sampler: engine.DefaultSampler(), Guard: g}
	for range 2 {
		s, err := engine.NewState(m, engine.Options{Ctx: 64, Threads: 1, Pager: &engine.PagerOptions{Pool: 8, Readers: 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cfg.Slots = append(cfg.Slots, s)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	req := `{"prompt": "t1 t2", "n_predict": 3, "temperature": 0}`
	if code, _, b := post(t, hs.URL+"/completion", req); code != 200 {
		t.Fatalf("before: %d %s", code, b)
	}
	slotBytes := m.ExpertSlotBytes() * 2   // one slot per layer in each of the 2 server slots
	sim(limit - reserve + 2*slotBytes - 1) // short by a little under 2 slots
	code, b := get(t, hs.URL+"/health")
	if code != 503 || !strings.Contains(string(b), `"type":"unavailable_error"`) || !strings.Contains(string(b), "memory is low") ||
		!strings.Contains(string(b), "expert pools at 6 slots per layer") {
		t.Fatalf("health while low: %d %s", code, b)
	}
	for i, s := range cfg.Slots {
		if p := s.PagerStats(); p.Slots != 6 {
			t.Fatalf("slot %d: pools of %d slots, not shrunk to 6", i, p.Slots)
		}
	}
	code, h, b := post(t, hs.URL+"/completion", req)
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(string(b), "below the 64 MiB reserve") {
		t.Fatalf("completion while low: %d %v %s", code, h, b)
	}
	_, b = get(t, hs.URL+"/metrics")
	for _, want := range []string{"gguf:memory_low 1", "gguf:pager_pool_slots 4", "gguf:memory_refused_total 1", "gguf:memory_reserve_bytes 6.7108864e+07"} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("metrics lack %q:\n%s", want, b)
		}
	}
	// Just above the reserve, below the reserve plus a slot and the
	// margin: served again, the pools stay small (no growth that would
	// bring memory straight back below the reserve).
	sim(limit - reserve - slotBytes)
	if code, b := get(t, hs.URL+"/health"); code != 200 || !strings.Contains(string(b), `"expert_pool_slots":4,"expert_pool_slots_max":8`) {
		t.Fatalf("health after: %d %s", code, b)
	}
	poolOf := func(b []byte) int {
		var r struct {
			Pager struct {
				Slots int `json:"slots_per_layer"`
			} `json:"pager"`
		}
		json.Unmarshal(b, &r)
		return r.Pager.Slots
	}
	if code, _, b := post(t, hs.URL+"/completion", req); code != 200 || poolOf(b) != 4 {
		t.Fatalf("after: %d %s", code, b)
	}
	if _, b = get(t, hs.URL+"/metrics"); !strings.Contains(string(b), "gguf:memory_low 0") || !strings.Contains(string(b), "gguf:memory_pool_shrinks_total 2") ||
		!strings.Contains(string(b), "gguf:memory_pool_grows_total 0") {
		t.Fatalf("metrics after:\n%s", b)
	}
	// Room for 3 more slots in each server slot's pools above the reserve
	// and its margin: they grow by 3, then back to their size at start.
	sim(limit - reserve - reserve/growMargin - 3*slotBytes)
	if code, b := get(t, hs.URL+"/health"); code != 200 || !strings.Contains(string(b), `"expert_pool_slots":7,`) {
		t.Fatalf("health with room for 3 slots: %d %s", code, b)
	}
	sim(limit / 2)
	if code, b := get(t, hs.URL+"/health"); code != 200 || !strings.Contains(string(b), `"expert_pool_slots":8,`) {
		t.Fatalf("health with memory back: %d %s", code, b)
	}
	for i, s := range cfg.Slots {
		if p := s.PagerStats(); p.Slots != 8 || p.PoolBytes != 8*m.ExpertSlotBytes() {
			t.Fatalf("slot %d: pools of %d slots (%d bytes), not grown back to 8", i, p.Slots, p.PoolBytes)
		}
	}
	if code, _, b := post(t, hs.URL+"/completion", req); code != 200 || poolOf(b) != 8 {
		t.Fatalf("grown back: %d %s", code, b)
	}
	if _, b = get(t, hs.URL+"/metrics"); !strings.Contains(string(b), "gguf:pager_pool_slots 8") || !strings.Contains(string(b), "gguf:memory_pool_grows_total 2") {
		t.Fatalf("metrics grown back:\n%s", b)
	}
}

// TestDisconnectDuringPrompt: a client that goes away while a long
// prompt is evaluated stops it at the next batch boundary, not at the
// prompt's end: the slot's cache then holds whole batches, fewer than
// the prompt's tokens, and the slot serves the next request.
func TestDisconnectDuringPrompt(t *testing.T) {
	const batch = 32
	srv, hs := newTestServer(t, 1, 4096, func(c *Config) {
		s, err := engine.NewState(c.Model, engine.Options{Ctx: 4096, Threads: 1, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		c.Slots = []*engine.State{s}
	})
	prompt := strings.Repeat("Once upon a time there was a little dog. ", 300)
	n := len(srv.cfg.Tokenizer.Encode(prompt, true, true))
	if n < 2000 || n >= 4096 {
		t.Fatalf("the prompt is %d tokens", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/completion",
			strings.NewReader(fmt.Sprintf(`{"prompt":%q,"n_predict":4,"stream":true}`, prompt)))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	sl := srv.slots[0]
	deadline := time.Now().Add(10 * time.Second)
	for !sl.busy.Load() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
	<-done
	for sl.busy.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pos := sl.s.Pos()
	if pos >= n || pos%batch != 0 || len(sl.cached) != pos {
		t.Errorf("a client that left during a %d-token prompt: %d tokens evaluated (%d cached), want fewer, in whole batches of %d", n, pos, len(sl.cached), batch)
	}
	t.Logf("prompt of %d tokens: stopped after %d", n, pos)
	if code, _, b := post(t, hs.URL+"/completion", `{"prompt":"Once","n_predict":2}`); code != 200 {
		t.Errorf("next request: %d %s", code, b)
	}
}

// TestPrefillSameTokens: a prompt evaluated batch by batch (to stop
// between batches) gives the tokens one engine.Generate gives.
func TestPrefillSameTokens(t *testing.T) {
	srv, _ := newTestServer(t, 1, 512, func(c *Config) {
		s, err := engine.NewState(c.Model, engine.Options{Ctx: 512, Threads: 1, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		c.Slots = []*engine.State{s}
	})
	ids := srv.cfg.Tokenizer.Encode(strings.Repeat("Once upon a time there was a dog. ", 6), true, true)
	r, err := srv.run(context.Background(), &job{ids: ids, n: 20, sampler: engine.SamplerOptions{Temp: 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.NewState(srv.cfg.Model, engine.Options{Ctx: 512, Threads: 1, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var want []int32
	engine.Generate(st, engine.NewSampler(engine.SamplerOptions{Temp: 0}, srv.cfg.Model.Config.Vocab), ids, 20,
		srv.cfg.Tokenizer.IsEOG, func(id int32) error { want = append(want, id); return nil })
	if fmt.Sprint(r.tokens) != fmt.Sprint(want) || r.stats.PromptTokens != len(ids) {
		t.Errorf("prefilled: %v (%d prompt tokens)\nGenerate: %v (%d)", r.tokens, r.stats.PromptTokens, want, len(ids))
	}
}

// TestMultiplePrompts: a list of prompts gets a result per prompt, as
// Debian's llama-server (0.7.0) answered the same requests on
// stories260K (the texts and token counts below are its): strings, token
// ids and a mixed list (one prompt: BOS only before a leading string),
// an array of results (one prompt: one object), choices with their
// index, streams with each chunk's index, one prompt after the other.
func TestMultiplePrompts(t *testing.T) {
	_, hs := newTestServer(t, 1, 256, nil)
	type res struct {
		Index           int    `json:"index"`
		Content         string `json:"content"`
		Prompt          string `json:"prompt"`
		TokensEvaluated int    `json:"tokens_evaluated"`
	}
	code, _, b := post(t, hs.URL+"/completion", `{"prompt":["Once upon","The dog",[1,403,29]],"n_predict":3,"temperature":0}`)
	var list []res
	if err := json.Unmarshal(b, &list); code != 200 || err != nil {
		t.Fatalf("%d %v %s", code, err, b)
	}
	want := []res{{0, " a time,", "<s> Once upon", 3}, {1, " was a big", "<s> The dog", 4}, {2, "s were", "<s> Once\x1a", 3}}
	if fmt.Sprint(list) != fmt.Sprint(want) {
		t.Errorf("three prompts:\n got %+v\nwant %+v", list, want)
	}
	for body, want := range map[string]res{
		`{"prompt":["Once upon",403,29],"n_predict":3,"temperature":0}`: {0, "cy day", "<s> Once upon Once\x1a", 5},
		`{"prompt":["Once upon"],"n_predict":3,"temperature":0}`:        {0, " a time,", "<s> Once upon", 3},
	} {
		var one res
		if code, _, b := post(t, hs.URL+"/completion", body); code != 200 || json.Unmarshal(b, &one) != nil || one != want {
			t.Errorf("%s: %d %s, want %+v", body, code, b, want)
		}
	}
	var two []res
	_, _, b = post(t, hs.URL+"/completion", `{"prompt":[["Once upon",403],"The"],"n_predict":3,"temperature":0}`)
	if json.Unmarshal(b, &two) != nil || len(two) != 2 || two[0].TokensEvaluated != 4 || two[0].Content != " upon a time" || two[1].Content != "re was a" {
		t.Errorf("a mixed prompt and a string: %s", b)
	}
	for _, bad := range []string{`[[1,2],3]`, `["a",[1,99999]]`, `[]`, `["a",[]]`} {
		if code, _, b := post(t, hs.URL+"/completion", `{"prompt":`+bad+`,"n_predict":1}`); code != 400 || !bytes.Contains(b, []byte(`"invalid_request_error"`)) {
			t.Errorf("prompt %s: %d %s", bad, code, b)
		}
	}

	_, _, b = post(t, hs.URL+"/v1/completions", `{"prompt":["Once upon","The dog"],"max_tokens":3,"temperature":0}`)
	var oai struct {
		Choices []struct {
			Text  string `json:"text"`
			Index int    `json:"index"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(b, &oai) != nil || fmt.Sprint(oai.Choices) != "[{ a time, 0} { was a big 1}]" || oai.Usage.Prompt != 7 || oai.Usage.Completion != 6 {
		t.Errorf("/v1/completions of two prompts: %s", b)
	}

	for _, path := range []string{"/completion", "/v1/completions"} {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(`{"prompt":["Once upon","The dog"],"n_predict":2,"temperature":0,"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		evs := readEvents(t, resp.Body)
		resp.Body.Close()
		var order []string
		for _, e := range evs {
			var v struct {
				Index   *int `json:"index"`
				Stop    bool `json:"stop"`
				Choices []struct {
					Index  int     `json:"index"`
					Finish *string `json:"finish_reason"`
				} `json:"choices"`
			}
			if e == "[DONE]" {
				order = append(order, "done")
				continue
			}
			json.Unmarshal([]byte(e), &v)
			switch {
			case v.Index != nil:
				order = append(order, fmt.Sprint(*v.Index, v.Stop))
			case len(v.Choices) == 1:
				order = append(order, fmt.Sprint(v.Choices[0].Index, v.Choices[0].Finish != nil))
			}
		}
		want := "[0 false 0 false 0 true 1 false 1 false 1 true]"
		if path == "/v1/completions" {
			want = "[0 false 0 false 0 true 1 false 1 false 1 true done]"
		}
		if fmt.Sprint(order) != want {
			t.Errorf("%s streamed: %v, want %s", path, order, want)
		}
	}
}
