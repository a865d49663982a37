package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/ggufkit/gguf/engine"
)

// metrics are the server's counters since it started.
type metrics struct {
	promptTokens, promptNanos atomic.Int64
	predicted, predictedNanos atomic.Int64
	requests, refused         atomic.Int64
	processing                atomic.Int64
	// speculative decoding: steps that verified a draft, tokens drafted
	// and accepted
	drafts, drafted, accepted atomic.Int64
	acceptedAt                []atomic.Int64 // by place in the draft, up to --spec-draft-n-max
}

// add counts a generation.
func (m *metrics) add(st engine.GenStats) {
	m.requests.Add(1)
	m.promptTokens.Add(int64(st.PromptTokens))
	m.promptNanos.Add(int64(st.PromptTime))
	m.predicted.Add(int64(st.Generated))
	m.predictedNanos.Add(int64(st.GenTime))
	m.drafts.Add(int64(st.Drafts))
	m.drafted.Add(int64(st.Drafted))
	m.accepted.Add(int64(st.Accepted))
	for i, n := range st.AcceptedAt {
		if i < len(m.acceptedAt) {
			m.acceptedAt[i].Add(int64(n))
		}
	}
}

// pagerTotals sums the slots' pager counts as of their last generation,
// or nil for a model that is not paged.
func (s *Server) pagerTotals() *engine.PagerStats {
	var t *engine.PagerStats
	for _, sl := range s.slots {
		p := sl.pagerSnap.Load()
		if p == nil {
			continue
		}
		if t == nil {
			t = &engine.PagerStats{}
		}
		t.Slots = p.Slots
		t.PoolBytes += p.PoolBytes
		t.Stats.Add(p.Stats)
		t.BytesRead += p.BytesRead
	}
	return t
}

// metrics serves GET /metrics in Prometheus's text format, with
// llama-server's names (llamacpp:*) and the pager's (gguf:*).
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	m := &s.met
	var b strings.Builder
	put := func(name, kind, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", name, help, name, kind, name, v)
	}
	rate := func(n, ns int64) float64 {
		if ns == 0 {
			return 0
		}
		return float64(n) / (float64(ns) / 1e9)
	}
	put("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed, excluding cached tokens", float64(m.promptTokens.Load()))
	put("llamacpp:prompt_seconds_total", "counter", "Total time spent processing prompts", float64(m.promptNanos.Load())/1e9)
	put("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed", float64(m.predicted.Load()))
	put("llamacpp:tokens_predicted_seconds_total", "counter", "Total time spent generating tokens", float64(m.predictedNanos.Load())/1e9)
	put("llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s", rate(m.promptTokens.Load(), m.promptNanos.Load()))
	put("llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s", rate(m.predicted.Load(), m.predictedNanos.Load()))
	put("llamacpp:requests_processing", "gauge", "Number of requests processing", float64(m.processing.Load()))
	put("llamacpp:requests_deferred", "gauge", "Number of requests deferred", float64(s.waiting.Load()))
	if s.speculative() {
		put("llamacpp:spec_decode_num_drafts_total", "counter", "Speculative: Total speculative decoding verification steps", float64(m.drafts.Load()))
		put("llamacpp:spec_decode_num_draft_tokens_total", "counter", "Speculative: Total draft tokens generated", float64(m.drafted.Load()))
		put("llamacpp:spec_decode_num_accepted_tokens_total", "counter", "Speculative: Total draft tokens accepted by the target model", float64(m.accepted.Load()))
		name := "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"
		fmt.Fprintf(&b, "# HELP %s Accepted tokens per draft position\n# TYPE %s counter\n", name, name)
		for i := range m.acceptedAt {
			fmt.Fprintf(&b, "%s{position=\"%d\"} %d\n", name, i, m.acceptedAt[i].Load())
		}
	}
	put("gguf:requests_total", "counter", "Generations finished or stopped", float64(m.requests.Load()))
	put("gguf:requests_refused_total", "counter", "Requests refused with 503: every slot busy and the queue full", float64(m.refused.Load()))
	if p := s.pagerTotals(); p != nil {
		put("gguf:pager_hits_total", "counter", "Expert uses found in the pools", float64(p.Hits))
		put("gguf:pager_misses_total", "counter", "Expert uses read from the file", float64(p.Misses))
		put("gguf:pager_bytes_read_total", "counter", "Bytes the pager read from the file", float64(p.BytesRead))
		put("gguf:pager_hit_rate", "gauge", "Share of expert uses found in the pools", p.HitRate())
		put("gguf:pager_pool_bytes", "gauge", "Bytes of the expert pools", float64(p.PoolBytes))
	}
	s.memoryMetrics(put)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.Write([]byte(b.String()))
}
