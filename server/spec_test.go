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
	path := filepath.Join(t.TempDir(), "mtp.gguf")
	b, err := crosscheck.Build(crosscheck.Case{Shape: "qwen35mtp", Type: "Q8_0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
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
