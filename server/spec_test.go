package server

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/vocabselect"
)

// newMTPServer serves a generated qwen35 model with an MTP block (the
// crosscheck shape qwen35mtp, whose MTP logits are libllama's) from one
// slot, with speculative decoding spec.
func newMTPServer(t *testing.T, path string, spec engine.SpecOptions) *httptest.Server {
	t.Helper()
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
	s, err := engine.NewState(m, engine.Options{Ctx: 256, Threads: 2, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	srv, err := New(Config{Model: m, Tokenizer: tok, Template: tm, TemplateText: "chatml", Name: "mtp", Path: path,
		Queue: 1, NPredict: -1, Sampler: engine.DefaultSampler(), Build: "test", Slots: []*engine.State{s}, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// mtpModel writes the generated qwen35 model with an MTP block (crosscheck
// shape qwen35mtp, Q8_0) to a new directory and returns its path.
func mtpModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mtp.gguf")
	b, err := crosscheck.Build(crosscheck.Case{Shape: "qwen35mtp", Type: "Q8_0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ids formats token ids as a JSON array.
func ids(p []int32) string {
	s := make([]string, len(p))
	for i, x := range p {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// metric returns the value of a /metrics line.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	_, b := get(t, url+"/metrics")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	t.Fatalf("no %s in /metrics:\n%s", name, b)
	return 0
}

// TestServeDraftMTP: the server drafting with the model's MTP block
// (--spec-type draft-mtp) answers greedy requests with the text it gives
// without drafting, a conversation's second request reusing the slot's
// cache (and the MTP block's, attached to the slot); llama-server's
// spec_decode counters on /metrics and draft_n in the timings count the
// drafts, and /slots says the slot drafts.
func TestServeDraftMTP(t *testing.T) {
	path := mtpModel(t)
	plain := newMTPServer(t, path, engine.DefaultSpec())
	spec := newMTPServer(t, path, engine.SpecOptions{Type: engine.SpecDraftMTP, NMax: 2})
	// turn streams a completion of prompt (token ids) and returns the
	// tokens generated and the timings.
	turn := func(url string, prompt []int32) ([]int32, map[string]any) {
		code, _, b := post(t, url+"/completion", fmt.Sprintf(`{"prompt":%s,"n_predict":10,"temperature":0,"stream":true}`, ids(prompt)))
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		var out []int32
		var tm map[string]any
		for _, l := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(l, "data: ")
			if !ok {
				continue
			}
			v := decodeJSON(t, []byte(data))
			for _, x := range v["tokens"].([]any) {
				out = append(out, int32(x.(float64)))
			}
			if x, ok := v["timings"].(map[string]any); ok {
				tm = x
			}
		}
		return out, tm
	}
	p1 := crosscheck.TextIDs(30)
	a1, _ := turn(plain.URL, p1)
	b1, tm1 := turn(spec.URL, p1)
	p2 := append(append(slices.Clone(p1), a1...), 40, 41, 42)
	a2, _ := turn(plain.URL, p2)
	b2, tm2 := turn(spec.URL, p2)
	if !slices.Equal(a1, b1) || !slices.Equal(a2, b2) || len(a1) != 10 {
		t.Fatalf("drafting changed the tokens:\n%v %v\n%v %v", a1, a2, b1, b2)
	}
	if tm2["cache_n"].(float64) == 0 {
		t.Errorf("the second request reused no cache: %v", tm2)
	}
	drafted := tm1["draft_n"].(float64) + tm2["draft_n"].(float64)
	accepted := tm1["draft_n_accepted"].(float64) + tm2["draft_n_accepted"].(float64)
	if drafted == 0 {
		t.Fatalf("no drafts: %v %v", tm1, tm2)
	}
	if got := metric(t, spec.URL, "llamacpp:spec_decode_num_draft_tokens_total"); got != drafted {
		t.Errorf("spec_decode_num_draft_tokens_total %g, the timings' draft_n sum %g", got, drafted)
	}
	if got := metric(t, spec.URL, "llamacpp:spec_decode_num_accepted_tokens_total"); got != accepted {
		t.Errorf("spec_decode_num_accepted_tokens_total %g, the timings' %g", got, accepted)
	}
	if got := metric(t, spec.URL, `llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"}`) +
		metric(t, spec.URL, `llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="1"}`); got != accepted {
		t.Errorf("accepted per position sum to %g, not %g", got, accepted)
	}
	if metric(t, spec.URL, "llamacpp:spec_decode_num_drafts_total") == 0 {
		t.Error("no verification steps counted")
	}
	if _, b := get(t, spec.URL+"/slots"); !strings.Contains(string(b), `"speculative":true`) {
		t.Errorf("/slots: %s", b)
	}
	if _, b := get(t, plain.URL+"/metrics"); strings.Contains(string(b), "spec_decode") {
		t.Error("a server that does not draft reports spec_decode counters")
	}
	t.Logf("drafted %g, accepted %g: %v / %v, %v cached", drafted, accepted, b1, b2, tm2["cache_n"])
}

// TestServeDraftMTPNoBlock: draft-mtp on a model without an MTP block is
// refused when the server is made, not at the first request.
func TestServeDraftMTPNoBlock(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	var err error
	newTestServer(t, 1, 64, func(c *Config) {
		c.Spec = engine.SpecOptions{Type: engine.SpecDraftMTP, NMax: 2}
		_, err = New(*c)
		c.Spec = engine.DefaultSpec()
	})
	if err == nil || !strings.Contains(err.Error(), "no NextN/MTP block") {
		t.Errorf("draft-mtp without a block: %v", err)
	}
}

// TestServeSpecPerRequest: llama-server's per-request speculative fields
// within the server's draft-mtp (--spec-draft-n-max 3): speculative.n_max
// 0 (or speculative.type none) drafts nothing, the counters on /metrics
// unchanged; n_max 2 drafts at most 2 tokens per verification step where
// the server's own 3 drafts 3; the greedy tokens are the plain server's
// each time, and generation_settings shows what the request drafted with.
// Values out of range, or another type than the server's, are 400s naming
// the field.
func TestServeSpecPerRequest(t *testing.T) {
	path := mtpModel(t)
	plain := newMTPServer(t, path, engine.DefaultSpec())
	spec := newMTPServer(t, path, engine.SpecOptions{Type: engine.SpecDraftMTP, NMax: 3})
	prompt := ids(crosscheck.TextIDs(30))
	complete := func(url, extra string) (int, map[string]any) {
		code, _, b := post(t, url+"/completion", `{"prompt":`+prompt+`,"n_predict":12,"temperature":0,"cache_prompt":false`+extra+`}`)
		return code, decodeJSON(t, b)
	}
	counters := func() (drafts, drafted float64) {
		return metric(t, spec.URL, "llamacpp:spec_decode_num_drafts_total"), metric(t, spec.URL, "llamacpp:spec_decode_num_draft_tokens_total")
	}
	_, want := complete(plain.URL, "")
	for _, tc := range []struct {
		extra   string
		perStep float64 // the most drafted per step; 0: no drafts
		types   string
	}{
		{`,"speculative.n_max":0`, 0, "none"},
		{`,"speculative.type":"none"`, 0, "none"},
		{`,"speculative.n_max":2,"speculative.n_min":1,"speculative.p_min":0.05`, 2, "draft-mtp"},
		{`,"speculative.p_min":1`, 0, "draft-mtp"}, // no draft is that sure
		{`,"speculative.n_max":2,"speculative.types":"draft-mtp"`, 2, "draft-mtp"},
		{``, 3, "draft-mtp"},
	} {
		d0, n0 := counters()
		code, got := complete(spec.URL, tc.extra)
		if code != 200 || got["content"] != want["content"] {
			t.Fatalf("%s: %d %q, want the plain server's %q", tc.extra, code, got["content"], want["content"])
		}
		d1, n1 := counters()
		steps, drafted := d1-d0, n1-n0
		switch {
		case tc.perStep == 0 && (steps != 0 || drafted != 0):
			t.Errorf("%s: %g steps drafted %g tokens, want none", tc.extra, steps, drafted)
		case tc.perStep > 0 && (drafted == 0 || drafted > tc.perStep*steps):
			t.Errorf("%s: %g steps drafted %g tokens, want some and at most %g a step", tc.extra, steps, drafted, tc.perStep)
		case tc.perStep == 3 && drafted <= 2*steps:
			t.Errorf("the server's n_max 3: %g steps drafted only %g tokens", steps, drafted)
		}
		if gs := got["generation_settings"].(map[string]any); gs["speculative.types"] != tc.types {
			t.Errorf("%s: generation_settings %v", tc.extra, gs)
		}
		t.Logf("%s: %g steps, %g drafted", tc.extra, steps, drafted)
	}
	for _, tc := range []struct{ url, extra, want string }{
		{spec.URL, `,"speculative.n_max":-1`, "speculative.n_max -1 must be between 0 (no drafts) and the server's --spec-draft-n-max 3"},
		{spec.URL, `,"speculative.n_max":4`, "--spec-draft-n-max 3"},
		{spec.URL, `,"speculative.n_max":2,"speculative.n_min":3`, "speculative.n_min 3 must be between 0 and speculative.n_max 2"},
		{spec.URL, `,"speculative.n_min":-1`, "speculative.n_min -1"},
		{spec.URL, `,"speculative.p_min":1.5`, "speculative.p_min 1.5 must be between 0 and 1"},
		{spec.URL, `,"speculative.type":"ngram-simple"`, `speculative.type "ngram-simple": this server drafts with draft-mtp`},
		{spec.URL, `,"speculative.types":"draft-mtp,eagle3"`, `speculative.types "draft-mtp,eagle3"`},
		{spec.URL, `,"speculative.n_max":"2"`, "speculative.n_max"},
		{plain.URL, `,"speculative.type":"draft-mtp"`, "this server drafts with none"},
	} {
		code, got := complete(tc.url, tc.extra)
		e, _ := got["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want a 400 with %q", tc.extra, code, got, tc.want)
		}
	}
}
