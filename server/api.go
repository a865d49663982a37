package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ggufkit/gguf/chat"
)

// events writes server-sent events: "data: JSON\n\n", flushed at once,
// each write with its own deadline so a client that stops reading ends
// the generation instead of holding the slot. Headers go out with the
// first event, so an error found before it (a full queue) still gets its
// status code.
type events struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func newEvents(w http.ResponseWriter, timeout time.Duration) *events {
	return &events{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (e *events) write(b []byte) error {
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.rc.Flush()
}

// data sends v as one event.
func (e *events) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.write(append(append([]byte("data: "), b...), '\n', '\n'))
}

// done ends an OpenAI stream.
func (e *events) done() error { return e.write([]byte("data: [DONE]\n\n")) }

// fail reports err: as the response when nothing was sent yet, else as a
// last event (the status is gone).
func (e *events) fail(err error) {
	if errors.Is(err, context.Canceled) {
		return // the client went away: nobody reads
	}
	ae := asAPIError(err)
	if !e.started {
		writeError(e.w, ae)
		return
	}
	e.data(map[string]any{"error": ae})
}

// respond sends a non-streamed response, or err's.
func (s *Server) respond(w http.ResponseWriter, v any, err error) {
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			writeError(w, asAPIError(err))
		}
		return
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.Timeout))
	writeJSON(w, http.StatusOK, v)
}

// timings is llama-server's timings object.
func timings(r *result) map[string]any {
	st := r.stats
	pms := float64(st.PromptTime) / 1e6
	gms := float64(st.GenTime) / 1e6
	per := func(ms float64, n int) (perTok, perSec float64) {
		if n > 0 && ms > 0 {
			return ms / float64(n), 1e3 * float64(n) / ms
		}
		return 0, 0
	}
	ppt, pps := per(pms, st.PromptTokens)
	gpt, gps := per(gms, st.Generated)
	t := map[string]any{"cache_n": r.cacheN, "prompt_n": st.PromptTokens, "prompt_ms": pms,
		"prompt_per_token_ms": ppt, "prompt_per_second": pps, "predicted_n": st.Generated,
		"predicted_ms": gms, "predicted_per_token_ms": gpt, "predicted_per_second": gps}
	if st.Drafted > 0 {
		// llama-server adds these when the generation drafted
		t["draft_n"], t["draft_n_accepted"] = st.Drafted, st.Accepted
	}
	return t
}

// pagerInfo is the expert pager's counts in a response (a field of this
// server's, absent for a model that is not paged): the chat page shows
// the hit rate and bytes read per token.
func pagerInfo(r *result) map[string]any {
	p := r.pager
	if p == nil {
		return nil
	}
	return map[string]any{"hits": p.Hits, "misses": p.Misses, "hit_rate": p.HitRate(), "bytes_read": p.BytesRead,
		"pool_bytes": p.PoolBytes, "slots_per_layer": p.Slots}
}

// usage is OpenAI's usage object.
func usage(r *result, promptTokens int) map[string]any {
	return map[string]any{"completion_tokens": r.stats.Generated, "prompt_tokens": promptTokens,
		"total_tokens": promptTokens + r.stats.Generated, "prompt_tokens_details": map[string]any{"cached_tokens": r.cacheN}}
}

// newID returns a response id with prefix, as llama-server's.
func newID(prefix string) string { return prefix + rand.Text() }

// settings is llama-server's generation_settings (the fields this
// runtime has).
func (s *Server) settings(req *request, j *job, stream bool) map[string]any {
	stop := j.stops
	if stop == nil {
		stop = []string{}
	}
	return map[string]any{"seed": req.seedShown(), "temperature": j.sampler.Temp, "top_k": j.sampler.TopK,
		"top_p": j.sampler.TopP, "min_p": j.sampler.MinP, "repeat_last_n": j.sampler.RepeatLastN,
		"repeat_penalty": j.sampler.RepeatPenalty, "stop": stop, "max_tokens": j.n, "n_predict": j.n,
		"ignore_eos": req.IgnoreEOS, "stream": stream, "n_probs": j.nProbs,
		"samplers":          []string{"penalties", "top_k", "top_p", "min_p", "temperature"},
		"speculative.types": j.spec.Type, "speculative.n_max": j.spec.NMax, "speculative.n_min": j.spec.NMin, "speculative.p_min": j.spec.PMin}
}

// newJob turns a request's sampling fields into a job for ids.
func (s *Server) newJob(req *request, ids []int32) (*job, error) {
	n, err := req.limit(s.cfg.NPredict)
	if err != nil {
		return nil, err
	}
	stops, err := req.stops()
	if err != nil {
		return nil, err
	}
	np, _, err := req.nProbs()
	if err != nil {
		return nil, err
	}
	spec, err := req.spec(s.cfg.Spec)
	if err != nil {
		return nil, err
	}
	j := &job{ids: ids, n: n, sampler: req.sampler(s.cfg.Sampler), stops: stops, nProbs: np,
		cache: req.CachePrompt == nil || *req.CachePrompt, spec: spec}
	if req.IgnoreEOS {
		tok := s.cfg.Tokenizer
		for id := range int32(tok.NumTokens()) {
			if tok.IsEOG(id) || s.eogIDs[id] {
				j.sampler.Banned = append(j.sampler.Banned, id)
			}
		}
	}
	return j, nil
}

// prompts reads a completion request's prompt as llama-server does: a
// string, a list of token ids, or a list mixing strings and ids is one
// prompt; any other list holds one prompt per element, each a string, a
// list of ids or a mixed list. A string is tokenized with BOS as the
// model adds it, ids are taken as they are.
func (s *Server) prompts(raw json.RawMessage) ([][]int32, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return [][]int32{s.cfg.Tokenizer.Encode(text, true, true)}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("'prompt' must be a string, a list of token ids, or a list of prompts")
	}
	if len(list) == 0 {
		return nil, badRequest("'prompt' must not be empty")
	}
	if ids, ok, err := s.mixedPrompt(list); ok || err != nil {
		return [][]int32{ids}, err
	}
	out := make([][]int32, len(list))
	for i, e := range list {
		if err := json.Unmarshal(e, &text); err == nil {
			out[i] = s.cfg.Tokenizer.Encode(text, true, true)
			continue
		}
		var parts []json.RawMessage
		if json.Unmarshal(e, &parts) != nil {
			return nil, errPromptElement
		}
		ids, ok, err := s.mixedPrompt(parts)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errPromptElement
		}
		out[i] = ids
	}
	return out, nil
}

// errPromptElement refuses a list of prompts with an element that is none.
var errPromptElement = badRequest("'prompt' elements must be a string, a list of token ids, or a list of mixed strings and token ids")

// mixedPrompt reads a list of token ids, or of strings and token ids,
// as one prompt, as llama-server's tokenize_mixed does: the strings
// tokenized (BOS only for a string first in the list), the ids taken as
// they are. ok is false for any other list: one with an element neither
// a string nor an integer, or strings only (a list of prompts).
func (s *Server) mixedPrompt(list []json.RawMessage) (ids []int32, ok bool, err error) {
	anyID := len(list) == 0
	for i, e := range list {
		var text string
		var id int32
		switch {
		case json.Unmarshal(e, &text) == nil:
			ids = append(ids, s.cfg.Tokenizer.Encode(text, i == 0, true)...)
		case json.Unmarshal(e, &id) == nil:
			ids = append(ids, id)
			anyID = true
		default:
			return nil, false, nil
		}
	}
	if !anyID {
		return nil, false, nil
	}
	return ids, true, s.checkIDs(ids)
}

// checkIDs refuses token ids outside the vocabulary.
func (s *Server) checkIDs(ids []int32) error {
	n := int32(s.cfg.Tokenizer.NumTokens())
	for _, id := range ids {
		if id < 0 || id >= n {
			return badRequest("token id %d is outside the vocabulary (0..%d)", id, n-1)
		}
	}
	return nil
}

// chatPrompt renders msgs and tokenizes them; when the conversation does
// not fit the context with room for the answer, the oldest turns (after
// any system message) are dropped, a user message with the answer that
// followed it, as smolchat did, until it fits or only the last message
// is left. dropped counts the messages left out; think, for a template
// with a thinking switch, splits the reply's thinking from its answer.
func (s *Server) chatPrompt(msgs []chat.Message, r chat.Reasoning, n int) (ids []int32, dropped int, think *thinking, err error) {
	ctx := s.ctxLen()
	room := ctx / 4
	if n >= 0 {
		room = n
	}
	room = max(1, min(room, ctx/2))
	for {
		text, err := s.cfg.Template.Render(msgs, r)
		if err != nil {
			return nil, 0, nil, badRequest("chat template %s: %v", s.cfg.Template, err)
		}
		ids = s.cfg.Tokenizer.Encode(text, true, true)
		first := 0
		for first < len(msgs) && msgs[first].Role == "system" {
			first++
		}
		if len(ids)+room <= ctx || first >= len(msgs)-1 {
			if s.cfg.Template.HasReasoning() {
				think = newThinking(promptOpensThinking(text))
			}
			return ids, dropped, think, nil
		}
		k := first + 1
		for k < len(msgs)-1 && msgs[k].Role != "user" {
			k++ // drop a whole turn: up to the next user message
		}
		msgs = append(msgs[:first:first], msgs[k:]...)
		dropped += k - first
	}
}

// decodeChat reads a request that carries messages, answering the client
// with the error when the body or its messages are wrong: the prologue
// /v1/chat/completions and /apply-template share.
func decodeChat(w http.ResponseWriter, hr *http.Request, req *request) ([]chat.Message, bool) {
	if err := decode(w, hr, req); err != nil {
		writeError(w, asAPIError(err))
		return nil, false
	}
	msgs, err := req.chatMessages()
	if err != nil {
		writeError(w, asAPIError(err))
		return nil, false
	}
	return msgs, true
}

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, hr *http.Request) {
	var req request
	msgs, ok := decodeChat(w, hr, &req)
	if !ok {
		return
	}
	n, err := req.limit(s.cfg.NPredict)
	if err != nil {
		writeError(w, asAPIError(err))
		return
	}
	ids, dropped, think, err := s.chatPrompt(msgs, req.reasoning(s.cfg.Reasoning), n)
	if err != nil {
		writeError(w, asAPIError(err))
		return
	}
	j, err := s.newJob(&req, ids)
	if err != nil {
		writeError(w, asAPIError(err))
		return
	}
	j.chat = true
	j.stops = append(j.stops, s.cfg.Template.Stops()...)
	_, wantProbs, _ := req.nProbs()
	id, created := newID("chatcmpl-"), time.Now().Unix()
	base := func(object string) map[string]any {
		return map[string]any{"id": id, "created": created, "model": s.cfg.Name, "system_fingerprint": s.cfg.Build, "object": object}
	}
	if dropped > 0 {
		w.Header().Set("X-Dropped-Messages", strconv.Itoa(dropped))
	}
	if !req.Stream {
		r, err := s.run(hr.Context(), j, nil)
		if err != nil {
			s.respond(w, nil, err)
			return
		}
		content := r.text
		var reasoning string
		if think != nil {
			reasoning, content = think.split(r.text)
		}
		msg := map[string]any{"role": "assistant", "content": content}
		if reasoning != "" {
			msg["reasoning_content"] = reasoning
		}
		choice := map[string]any{"finish_reason": r.finishReason(), "index": 0, "message": msg}
		if wantProbs {
			choice["logprobs"] = map[string]any{"content": probsOrEmpty(r.probs)}
		}
		v := base("chat.completion")
		v["choices"] = []any{choice}
		v["usage"] = usage(r, len(ids))
		v["timings"] = timings(r)
		v["truncated"] = dropped > 0
		if p := pagerInfo(r); p != nil {
			v["pager"] = p
		}
		s.respond(w, v, nil)
		return
	}
	ev := newEvents(w, s.cfg.Timeout)
	chunkOf := func(delta map[string]any, finish any, c *chunk) map[string]any {
		choice := map[string]any{"finish_reason": finish, "index": 0, "delta": delta}
		if wantProbs && c != nil && len(c.probs) > 0 {
			choice["logprobs"] = map[string]any{"content": c.probs}
		}
		v := base("chat.completion.chunk")
		v["choices"] = []any{choice}
		return v
	}
	r, err := s.run(hr.Context(), j, func(c chunk) error {
		if !ev.started {
			if err := ev.data(chunkOf(map[string]any{"role": "assistant", "content": nil}, nil, nil)); err != nil {
				return err
			}
		}
		reasoning, content := "", c.text
		if think != nil {
			reasoning, content = think.Add(c.text)
		}
		d := thinkDelta(reasoning, content)
		if d == nil && len(c.probs) == 0 {
			return nil
		}
		if d == nil {
			d = map[string]any{"content": ""}
		}
		return ev.data(chunkOf(d, nil, &c))
	})
	if err != nil {
		ev.fail(err)
		return
	}
	if think != nil {
		if d := thinkDelta(think.Flush()); d != nil && ev.data(chunkOf(d, nil, nil)) != nil {
			return
		}
	}
	last := chunkOf(map[string]any{}, r.finishReason(), nil)
	last["timings"] = timings(r)
	if p := pagerInfo(r); p != nil {
		last["pager"] = p
	}
	if ev.data(last) != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := base("chat.completion.chunk")
		u["choices"] = []any{}
		u["usage"] = usage(r, len(ids))
		u["timings"] = timings(r)
		if ev.data(u) != nil {
			return
		}
	}
	ev.done()
}

// thinkDelta is a streamed chat delta of thinking and answer text, as
// llama-server sends them (reasoning_content, content), or nil when both
// are empty.
func thinkDelta(reasoning, content string) map[string]any {
	d := map[string]any{}
	if reasoning != "" {
		d["reasoning_content"] = reasoning
	}
	if content != "" {
		d["content"] = content
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

func probsOrEmpty(p []tokenInfo) []tokenInfo {
	if p == nil {
		return []tokenInfo{}
	}
	return p
}

// promptJobs reads a completion request (the body, its prompts, the job
// each asks for), answering the client with the error when one of them
// fails: the prologue /completion and /v1/completions share. Every prompt
// is checked before any is generated.
func (s *Server) promptJobs(w http.ResponseWriter, hr *http.Request, req *request) ([]*job, bool) {
	if err := decode(w, hr, req); err != nil {
		writeError(w, asAPIError(err))
		return nil, false
	}
	if len(req.Prompt) == 0 {
		writeError(w, badRequest("'prompt' is required"))
		return nil, false
	}
	all, err := s.prompts(req.Prompt)
	if err != nil {
		writeError(w, asAPIError(err))
		return nil, false
	}
	jobs := make([]*job, len(all))
	for i, ids := range all {
		err := s.checkPrompt(ids)
		if err == nil {
			jobs[i], err = s.newJob(req, ids)
		}
		if err != nil {
			writeError(w, asAPIError(err))
			return nil, false
		}
	}
	return jobs, true
}

// oaiCompletions serves POST /v1/completions: a choice per prompt (its
// index the prompt's), one usage over them all.
func (s *Server) oaiCompletions(w http.ResponseWriter, hr *http.Request) {
	var req request
	jobs, ok := s.promptJobs(w, hr, &req)
	if !ok {
		return
	}
	_, wantProbs, _ := req.nProbs()
	id, created := newID("cmpl-"), time.Now().Unix()
	choiceOf := func(i int, text string, probs []tokenInfo, finish any) map[string]any {
		var lp any
		if wantProbs {
			lp = map[string]any{"content": probsOrEmpty(probs)}
		}
		return map[string]any{"text": text, "index": i, "logprobs": lp, "finish_reason": finish}
	}
	base := func(choices ...any) map[string]any {
		return map[string]any{"choices": choices, "created": created, "model": s.cfg.Name,
			"system_fingerprint": s.cfg.Build, "object": "text_completion", "id": id}
	}
	if !req.Stream {
		rs, err := s.runAll(hr.Context(), jobs, nil, nil)
		if err != nil {
			s.respond(w, nil, err)
			return
		}
		v := base()
		choices := make([]any, len(rs))
		for i, r := range rs {
			choices[i] = choiceOf(i, r.text, r.probs, r.finishReason())
		}
		v["choices"] = choices
		t, promptTokens := total(rs)
		v["usage"] = usage(t, promptTokens)
		v["timings"] = timings(t)
		s.respond(w, v, nil)
		return
	}
	// Streamed, each prompt's chunks come in turn, its last with its
	// finish_reason, usage and timings, as llama-server sends them.
	ev := newEvents(w, s.cfg.Timeout)
	_, err := s.runAll(hr.Context(), jobs, func(i int, c chunk) error {
		if c.text == "" && len(c.probs) == 0 {
			return nil
		}
		return ev.data(base(choiceOf(i, c.text, c.probs, nil)))
	}, func(i int, r *result) error {
		last := base(choiceOf(i, "", nil, r.finishReason()))
		last["usage"] = usage(r, len(jobs[i].ids))
		last["timings"] = timings(r)
		return ev.data(last)
	})
	if err != nil {
		ev.fail(err)
		return
	}
	ev.done()
}

// completion serves llama.cpp's POST /completion: for a list of prompts,
// a list of results (each with its prompt's index), streamed one prompt
// after the other.
func (s *Server) completion(w http.ResponseWriter, hr *http.Request) {
	var req request
	jobs, ok := s.promptJobs(w, hr, &req)
	if !ok {
		return
	}
	final := func(i int, r *result) map[string]any {
		j := jobs[i]
		content := r.text
		if req.Stream {
			content = ""
		}
		v := map[string]any{"index": i, "content": content, "tokens": []int32{}, "id_slot": r.slot, "stop": true,
			"model": s.cfg.Name, "tokens_predicted": r.stats.Generated, "tokens_evaluated": len(j.ids),
			"generation_settings": s.settings(&req, j, req.Stream), "prompt": s.detok(j.ids),
			"has_new_line": strings.Contains(r.text, "\n"), "truncated": false, "stop_type": r.stopType,
			"stopping_word": r.stoppingWord, "tokens_cached": len(j.ids) + r.stats.Generated - 1, "timings": timings(r)}
		if j.nProbs > 0 && !req.Stream {
			v["completion_probabilities"] = probsOrEmpty(r.probs)
		}
		if p := pagerInfo(r); p != nil {
			v["pager"] = p
		}
		return v
	}
	if !req.Stream {
		rs, err := s.runAll(hr.Context(), jobs, nil, nil)
		if err != nil {
			s.respond(w, nil, err)
			return
		}
		if len(rs) == 1 {
			s.respond(w, final(0, rs[0]), nil)
			return
		}
		out := make([]any, len(rs))
		for i, r := range rs {
			out[i] = final(i, r)
		}
		s.respond(w, out, nil)
		return
	}
	ev := newEvents(w, s.cfg.Timeout)
	predicted := 0
	_, err := s.runAll(hr.Context(), jobs, func(i int, c chunk) error {
		predicted += len(c.tokens)
		if c.text == "" && len(c.tokens) == 0 {
			return nil
		}
		v := map[string]any{"index": i, "content": c.text, "tokens": c.tokens, "stop": false, "id_slot": -1,
			"tokens_predicted": predicted, "tokens_evaluated": len(jobs[i].ids)}
		if jobs[i].nProbs > 0 {
			v["completion_probabilities"] = c.probs
		}
		return ev.data(v)
	}, func(i int, r *result) error {
		predicted = 0
		return ev.data(final(i, r))
	})
	if err != nil {
		ev.fail(err)
	}
}

// detok returns the text of ids with special tokens spelled out, as
// llama-server's prompt and /detokenize show them.
func (s *Server) detok(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.Write(s.cfg.Tokenizer.TokenToPiece(id, true))
	}
	return b.String()
}

// tokenize serves POST /tokenize: {content, add_special, parse_special,
// with_pieces} to {tokens}.
func (s *Server) tokenize(w http.ResponseWriter, hr *http.Request) {
	var req request
	if err := decode(w, hr, &req); err != nil {
		writeError(w, asAPIError(err))
		return
	}
	if req.Content == nil {
		writeError(w, badRequest("'content' is required"))
		return
	}
	add := req.AddSpecial != nil && *req.AddSpecial
	parse := req.ParseSpecial == nil || *req.ParseSpecial
	ids := s.cfg.Tokenizer.Encode(*req.Content, add, parse)
	if !req.WithPieces {
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
		return
	}
	type withPiece struct {
		ID    int32 `json:"id"`
		Piece any   `json:"piece"`
	}
	out := make([]withPiece, len(ids))
	for i, id := range ids {
		p := s.cfg.Tokenizer.TokenToPiece(id, true)
		out[i] = withPiece{ID: id, Piece: string(p)}
		if !utf8.Valid(p) {
			b := make([]int, len(p))
			for k, c := range p {
				b[k] = int(c)
			}
			out[i].Piece = b // llama-server gives a piece that is not UTF-8 as its bytes
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// detokenize serves POST /detokenize: {tokens} to {content}.
func (s *Server) detokenize(w http.ResponseWriter, hr *http.Request) {
	var req request
	if err := decode(w, hr, &req); err != nil {
		writeError(w, asAPIError(err))
		return
	}
	if err := s.checkIDs(req.Tokens); err != nil {
		writeError(w, asAPIError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"content": s.detok(req.Tokens)})
}

// applyTemplate serves POST /apply-template: {messages} to {prompt}.
func (s *Server) applyTemplate(w http.ResponseWriter, hr *http.Request) {
	var req request
	msgs, ok := decodeChat(w, hr, &req)
	if !ok {
		return
	}
	text, err := s.cfg.Template.Render(msgs, req.reasoning(s.cfg.Reasoning))
	if err != nil {
		writeError(w, badRequest("chat template %s: %v", s.cfg.Template, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt": text})
}

// health serves GET /health: {"status": "ok"}, with the slots' use.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if e := s.memoryHealth(); e != nil {
		writeError(w, e)
		return
	}
	busy := 0
	for _, sl := range s.slots {
		if sl.busy.Load() {
			busy++
		}
	}
	v := map[string]any{"status": "ok", "slots_idle": len(s.slots) - busy, "slots_processing": busy}
	if p := s.mem.pool.Load(); p > 0 {
		// A paged model's pools: smaller than at start while the guard
		// holds them shrunk.
		v["expert_pool_slots"], v["expert_pool_slots_max"] = p, s.mem.max
	}
	writeJSON(w, http.StatusOK, v)
}

// models serves GET /v1/models: OpenAI's list of one model, with
// llama-server's meta.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	m := s.cfg.Model
	c := m.Config
	meta := map[string]any{"n_vocab": c.Vocab, "n_ctx": s.ctxLen(), "n_ctx_train": c.ContextLength,
		"n_embd": c.Embd, "n_params": s.cfg.Params, "size": m.WeightBytes}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []any{map[string]any{"id": s.cfg.Name, "aliases": []string{s.cfg.Name}, "tags": []string{},
			"object": "model", "created": s.created, "owned_by": "llamacpp", "meta": meta}},
		"models": []any{map[string]any{"name": s.cfg.Name, "model": s.cfg.Name, "type": "model",
			"capabilities": []string{"completion"}, "details": map[string]any{"format": "gguf", "family": c.Arch}}},
	})
}

// props serves GET /props.
func (s *Server) props(w http.ResponseWriter, _ *http.Request) {
	tok := s.cfg.Tokenizer
	so := s.cfg.Sampler
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": s.ctxLen(), "params": map[string]any{
			"seed": uint32(0xFFFFFFFF), "temperature": so.Temp, "top_k": so.TopK, "top_p": so.TopP, "min_p": so.MinP,
			"repeat_last_n": so.RepeatLastN, "repeat_penalty": so.RepeatPenalty, "max_tokens": s.cfg.NPredict,
			"n_predict": s.cfg.NPredict, "stream": false, "n_probs": 0, "ignore_eos": false,
			"samplers": []string{"penalties", "top_k", "top_p", "min_p", "temperature"}}},
		"total_slots": len(s.slots), "model_alias": s.cfg.Name, "model_path": filepath.Clean(s.cfg.Path),
		"modalities":    map[string]any{"vision": false, "audio": false},
		"chat_template": s.cfg.TemplateText, "bos_token": string(tok.TokenToPiece(tok.BOS(), true)),
		"eos_token": string(tok.TokenToPiece(tok.EOS(), true)), "build_info": s.cfg.Build,
		"endpoint_slots": true, "endpoint_props": false, "endpoint_metrics": true,
	})
}

// slotsInfo serves GET /slots.
func (s *Server) slotsInfo(w http.ResponseWriter, _ *http.Request) {
	out := make([]any, len(s.slots))
	for i, sl := range s.slots {
		out[i] = map[string]any{"id": sl.id, "n_ctx": sl.s.Ctx(), "speculative": s.speculative(), "is_processing": sl.busy.Load(),
			"id_task": sl.task.Load(), "n_prompt_tokens": sl.nPrompt.Load(), "n_prompt_tokens_cache": sl.nCache.Load()}
	}
	writeJSON(w, http.StatusOK, out)
}
