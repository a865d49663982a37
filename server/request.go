package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"strings"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
)

// request holds the fields of every generation endpoint, with
// llama-server's names; pointers tell a field given from one left out.
type request struct {
	Messages            []message       `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	NPredict            *int            `json:"n_predict"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float32        `json:"temperature"`
	TopK                *int            `json:"top_k"`
	TopP                *float32        `json:"top_p"`
	MinP                *float32        `json:"min_p"`
	RepeatPenalty       *float32        `json:"repeat_penalty"`
	RepeatLastN         *int            `json:"repeat_last_n"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	NProbs              int             `json:"n_probs"`
	Logprobs            json.RawMessage `json:"logprobs"`
	TopLogprobs         int             `json:"top_logprobs"`
	CachePrompt         *bool           `json:"cache_prompt"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	ChatTemplateKwargs  *templateKwargs `json:"chat_template_kwargs"`
	EnableThinking      *bool           `json:"enable_thinking"`
	Tokens              []int32         `json:"tokens"`
	Content             *string         `json:"content"`
	AddSpecial          *bool           `json:"add_special"`
	ParseSpecial        *bool           `json:"parse_special"`
	WithPieces          bool            `json:"with_pieces"`
	// llama-server's per-request speculative fields (flat keys with a
	// dot, as its params_from_json_cmpl reads them)
	SpecNMax  *int     `json:"speculative.n_max"`
	SpecNMin  *int     `json:"speculative.n_min"`
	SpecPMin  *float64 `json:"speculative.p_min"`
	SpecType  *string  `json:"speculative.type"`
	SpecTypes *string  `json:"speculative.types"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// templateKwargs are the chat template's variables a request may set;
// enable_thinking is the reasoning switch (Qwen3's, Ling's).
type templateKwargs struct {
	EnableThinking *bool `json:"enable_thinking"`
}

// message is a chat message; content is a string or OpenAI's list of
// parts, of which the text parts are kept.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// maxProbs bounds n_probs and top_logprobs: each reported token costs a
// pass over the vocabulary.
const maxProbs = 100

// text returns the message's text.
func (m message) text() (string, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return "", nil
	}
	var s string
	if c[0] == '"' {
		if err := json.Unmarshal(c, &s); err != nil {
			return "", badRequest("message content: %v", err)
		}
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return "", badRequest("message content must be a string or a list of parts")
	}
	for _, p := range parts {
		if p.Type != "text" {
			return "", &apiError{Code: 501, Type: "not_supported_error", Message: "message content of type " + p.Type + " is not supported: this server reads text"}
		}
		s += p.Text
	}
	return s, nil
}

// chatMessages returns the request's messages for a template.
func (r *request) chatMessages() ([]chat.Message, error) {
	if len(r.Messages) == 0 {
		return nil, badRequest("'messages' is required")
	}
	out := make([]chat.Message, len(r.Messages))
	for i, m := range r.Messages {
		if m.Role == "" {
			return nil, badRequest("message %d has no role", i)
		}
		t, err := m.text()
		if err != nil {
			return nil, err
		}
		out[i] = chat.Message{Role: m.Role, Content: t}
	}
	return out, nil
}

// reasoning returns the thinking mode the request asks for, def when it
// asks none.
func (r *request) reasoning(def chat.Reasoning) chat.Reasoning {
	on := r.EnableThinking
	if r.ChatTemplateKwargs != nil && r.ChatTemplateKwargs.EnableThinking != nil {
		on = r.ChatTemplateKwargs.EnableThinking
	}
	switch {
	case on == nil:
		return def
	case *on:
		return chat.ReasoningOn
	}
	return chat.ReasoningOff
}

// stops returns the request's stop strings ("stop": a string or a list).
func (r *request) stops() ([]string, error) {
	s := bytes.TrimSpace(r.Stop)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return nil, nil
	}
	if s[0] == '"' {
		var one string
		if err := json.Unmarshal(s, &one); err != nil {
			return nil, badRequest("stop: %v", err)
		}
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(s, &list); err != nil {
		return nil, badRequest("stop must be a string or a list of strings")
	}
	out := list[:0]
	for _, st := range list {
		if st != "" {
			out = append(out, st)
		}
	}
	return out, nil
}

// limit returns the token limit: n_predict, max_completion_tokens or
// max_tokens, else def (-1: none).
func (r *request) limit(def int) (int, error) {
	for _, p := range []*int{r.NPredict, r.MaxCompletionTokens, r.MaxTokens} {
		if p != nil {
			if *p < -1 {
				return 0, badRequest("the token limit must be -1 (none) or more, not %d", *p)
			}
			return *p, nil
		}
	}
	return def, nil
}

// nProbs returns how many alternatives to report per token: n_probs, or
// OpenAI's logprobs (a bool with top_logprobs for chat, a count for
// completions). want reports whether probabilities go in the response
// (logprobs true with top_logprobs 0 reports the chosen token's only).
func (r *request) nProbs() (n int, want bool, err error) {
	n = r.NProbs
	if l := bytes.TrimSpace(r.Logprobs); len(l) > 0 && !bytes.Equal(l, []byte("null")) {
		var b bool
		var k int
		switch {
		case json.Unmarshal(l, &b) == nil:
			if b {
				n, want = max(n, r.TopLogprobs, 1), true
			}
		case json.Unmarshal(l, &k) == nil:
			n, want = max(n, k, 1), k >= 0
		default:
			return 0, false, badRequest("logprobs must be a boolean or a number")
		}
	}
	if n < 0 || n > maxProbs || r.TopLogprobs < 0 || r.TopLogprobs > maxProbs {
		return 0, false, badRequest("n_probs, logprobs and top_logprobs must be between 0 and %d", maxProbs)
	}
	return n, want || n > 0, nil
}

// sampler returns the sampling options: the request's, else def's.
func (r *request) sampler(def engine.SamplerOptions) engine.SamplerOptions {
	o := def
	if r.Temperature != nil {
		o.Temp = max(0, *r.Temperature)
	}
	if r.TopK != nil {
		o.TopK = *r.TopK
	}
	if r.TopP != nil {
		o.TopP = *r.TopP
	}
	if r.MinP != nil {
		o.MinP = *r.MinP
	}
	if r.RepeatPenalty != nil && *r.RepeatPenalty > 0 {
		o.RepeatPenalty = *r.RepeatPenalty
	}
	if r.RepeatLastN != nil {
		o.RepeatLastN = max(0, *r.RepeatLastN)
	}
	// llama-server's "no seed" is -1 or 4294967295 (LLAMA_DEFAULT_SEED).
	o.Seed = rand.Uint64()
	if r.Seed != nil && *r.Seed >= 0 && *r.Seed != 0xFFFFFFFF {
		o.Seed = uint64(*r.Seed)
	}
	return o
}

// spec returns the speculative decoding of the request within the
// server's, def: speculative.n_max from 0 (no drafts) to the server's
// --spec-draft-n-max (the MTP block is attached for drafts that long, the
// per-position counters sized for them), speculative.n_min from 0 to
// n_max (left out: the server's, cut to n_max, as llama-server cuts it),
// speculative.type (or llama-server 0.7.0's speculative.types, the names
// comma-separated) the server's type or none, speculative.p_min a
// probability (draft-mtp's cutoff, --spec-draft-p-min). A value out of
// range is a 400, where llama-server clamps it or ignores the field.
func (r *request) spec(def engine.SpecOptions) (engine.SpecOptions, error) {
	o := def
	o.Type = cmp.Or(def.Type, engine.SpecNone)
	for _, f := range []struct {
		key string
		v   *string
	}{{"speculative.type", r.SpecType}, {"speculative.types", r.SpecTypes}} {
		if f.v == nil {
			continue
		}
		for name := range strings.SplitSeq(*f.v, ",") {
			switch name = strings.TrimSpace(name); name {
			case engine.SpecNone:
				o.Type = engine.SpecNone
			case cmp.Or(def.Type, engine.SpecNone):
			default:
				return o, badRequest("%s %q: this server drafts with %s (--spec-type); a request may ask for it or none", f.key, *f.v, cmp.Or(def.Type, engine.SpecNone))
			}
		}
	}
	if r.SpecNMax != nil {
		if *r.SpecNMax < 0 || *r.SpecNMax > def.NMax {
			return o, badRequest("speculative.n_max %d must be between 0 (no drafts) and the server's --spec-draft-n-max %d", *r.SpecNMax, def.NMax)
		}
		o.NMax = *r.SpecNMax
	}
	o.NMin = min(o.NMin, o.NMax)
	if r.SpecNMin != nil {
		if *r.SpecNMin < 0 || *r.SpecNMin > o.NMax {
			return o, badRequest("speculative.n_min %d must be between 0 and speculative.n_max %d", *r.SpecNMin, o.NMax)
		}
		o.NMin = *r.SpecNMin
	}
	if p := r.SpecPMin; p != nil {
		if !(*p >= 0 && *p <= 1) {
			return o, badRequest("speculative.p_min %g must be between 0 and 1", *p)
		}
		o.PMin = float32(*p)
	}
	if o.NMax == 0 {
		o.Type = engine.SpecNone
	}
	return o, nil
}

// seedShown is the seed as llama-server shows it in
// generation_settings: the request's, or 4294967295 for a random one.
func (r *request) seedShown() int64 {
	if r.Seed != nil && *r.Seed >= 0 {
		return *r.Seed
	}
	return 0xFFFFFFFF
}
