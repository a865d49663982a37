package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/internal/memguard"
	"github.com/ggufkit/gguf/vocabselect"
)

// Config is what a Server serves and how.
type Config struct {
	// Model and Tokenizer are the loaded model and its tokenizer.
	Model     *engine.Model
	Tokenizer *vocabselect.Tokenizer
	// Slots are the inference states, one per request generated at once
	// (llama-server's --parallel); each holds its own KV cache. At least
	// one.
	Slots []*engine.State
	// Template renders chat messages; TemplateText is what /props reports
	// as chat_template (the model's Jinja text or the name given).
	Template     *chat.Template
	TemplateText string
	// Reasoning is the thinking mode of a request that does not set
	// chat_template_kwargs.enable_thinking.
	Reasoning chat.Reasoning
	// Name is the model's id in responses (llama-server's --alias, else
	// the path); Path is the model file as the operator named it.
	Name, Path string
	// APIKey, when set, is required of every request but /health and the
	// chat page, as "Authorization: Bearer KEY" or "X-Api-Key: KEY".
	APIKey string
	// Queue is how many requests may wait for a busy slot; more are
	// refused with 503.
	Queue int
	// Sampler holds the default sampling parameters of a request; Seed is
	// not used (a request without a seed gets a random one).
	Sampler engine.SamplerOptions
	// NPredict is the default token limit of a request (-1: none).
	NPredict int
	// Timeout bounds reading a request and each write of a response to a
	// slow client (llama-server's --timeout); 0: 600 s.
	Timeout time.Duration
	// Params is the number of weights, as /v1/models reports it.
	Params uint64
	// Build is what /props reports as build_info and the responses as
	// system_fingerprint.
	Build string
	// Logf, if set, gets a line per request served and per error.
	Logf func(format string, args ...any)
	// Guard, when not nil, keeps a reserve of memory: below it the
	// slots' expert pools shrink by what is short, new generations are
	// refused with 503 and /health says so; with the pools at one
	// token's working set, running generations stop too. It is read at
	// every generation request and /health, and every GuardEvery (0: 1
	// s) while Serve runs.
	Guard      *memguard.Guard
	GuardEvery time.Duration
	// Spec is speculative decoding (llama-server's --spec-type and
	// --spec-draft-*): drafts are verified in one batch, the output is
	// unchanged. With draft-mtp New attaches the model's MTP block to
	// every slot (engine.State.AttachMTP), so it mirrors the prompts and
	// keeps its cache with the slot's across requests.
	Spec engine.SpecOptions
}

// maxBody is the largest request body read: a long conversation's
// messages fit many times, and reading more could exhaust a small
// device's memory.
const maxBody = 8 << 20

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = "1"

// Server serves one model. Create it with New.
type Server struct {
	cfg     Config
	tickets chan struct{} // one per busy slot
	mu      sync.Mutex
	free    []*slot
	slots   []*slot
	waiting atomic.Int64
	nextID  atomic.Int64
	met     metrics
	mux     *http.ServeMux
	eogIDs  map[int32]bool // the template's end-of-turn tokens besides the vocabulary's
	created int64
	mem     memState
}

// slot is one inference state and what its cache holds.
type slot struct {
	id     int
	s      *engine.State
	cached []int32 // the tokens at positions 0..s.Pos()-1
	pool   int     // slots per layer of its expert pools (0: not paged)
	busy   atomic.Bool
	// last is the slot's progress, read by /slots while it works.
	task      atomic.Int64
	nPrompt   atomic.Int64
	nCache    atomic.Int64
	pagerSnap atomic.Pointer[engine.PagerStats]
}

// New checks cfg and returns a Server; its Handler serves the routes.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Model == nil || cfg.Tokenizer == nil:
		return nil, errors.New("server: no model")
	case len(cfg.Slots) == 0:
		return nil, errors.New("server: no slot")
	case cfg.Template == nil:
		return nil, errors.New("server: no chat template")
	case cfg.Queue < 0:
		return nil, errors.New("server: negative queue")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 600 * time.Second
	}
	if cfg.GuardEvery <= 0 {
		cfg.GuardEvery = time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := cfg.Spec.Check(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.Spec.Type == engine.SpecDraftMTP {
		for _, st := range cfg.Slots {
			if err := st.AttachMTP(cfg.Spec.NMax); err != nil {
				return nil, fmt.Errorf("server: %w", err)
			}
		}
	}
	s := &Server{cfg: cfg, tickets: make(chan struct{}, len(cfg.Slots)), eogIDs: map[int32]bool{}, created: time.Now().Unix()}
	if s.speculative() {
		s.met.acceptedAt = make([]atomic.Int64, cfg.Spec.NMax)
	}
	for i, st := range cfg.Slots {
		sl := &slot{id: i, s: st}
		s.slots = append(s.slots, sl)
		s.free = append(s.free, sl)
	}
	// A stop string that is one control token (chatml's <|im_end|>) ends
	// a turn as that token: its piece prints as nothing, so the text
	// would never show it (as run --chat does).
	for _, st := range cfg.Template.Stops() {
		if ids := cfg.Tokenizer.Encode(st, false, true); len(ids) == 1 && cfg.Tokenizer.IsControl(ids[0]) {
			s.eogIDs[ids[0]] = true
		}
	}
	if p := cfg.Slots[0].PagerStats(); p != nil {
		s.mem.pool.Store(int64(p.Slots))
		s.mem.max = int64(p.Slots)
		for _, sl := range s.slots {
			sl.pool = p.Slots
		}
	}
	s.routes()
	return s, nil
}

// Handler returns the server's routes, behind the API key check.
func (s *Server) Handler() http.Handler { return s.mux }

// HTTPServer returns an http.Server for h on addr with the timeouts a
// small device needs against slow or stalled clients: headers within 10
// s, a body within Timeout; each response write gets its own deadline of
// Timeout, so a long generation streams as long as the client reads.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.mux,
		ReadHeaderTimeout: min(10*time.Second, s.cfg.Timeout),
		ReadTimeout:       s.cfg.Timeout,
		IdleTimeout:       s.cfg.Timeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Serve accepts connections on ln until ctx ends or the listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer(ln.Addr().String())
	hs.BaseContext = func(net.Listener) context.Context { return ctx }
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if s.cfg.Guard != nil {
		go s.watchMemory(ctx)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		return nil
	}
}

// routes registers every endpoint under llama-server's paths and aliases.
func (s *Server) routes() {
	m := http.NewServeMux()
	handle := func(method string, h func(http.ResponseWriter, *http.Request), paths ...string) {
		for _, p := range paths {
			m.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
					w.Header().Set("Allow", method)
					writeError(w, &apiError{Code: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: r.Method + " " + p + ": use " + method})
					return
				}
				if p != "/health" && p != "/v1/health" && !s.authorized(r) {
					writeError(w, &apiError{Code: http.StatusUnauthorized, Type: "authentication_error", Message: "Invalid API Key"})
					return
				}
				h(w, r)
			})
		}
	}
	handle(http.MethodGet, s.health, "/health", "/v1/health")
	handle(http.MethodGet, s.models, "/models", "/v1/models")
	handle(http.MethodGet, s.props, "/props")
	handle(http.MethodGet, s.metrics, "/metrics")
	handle(http.MethodGet, s.slotsInfo, "/slots")
	handle(http.MethodPost, s.chatCompletions, "/v1/chat/completions", "/chat/completions")
	handle(http.MethodPost, s.oaiCompletions, "/v1/completions")
	handle(http.MethodPost, s.completion, "/completion", "/completions")
	handle(http.MethodPost, s.tokenize, "/tokenize")
	handle(http.MethodPost, s.detokenize, "/detokenize")
	handle(http.MethodPost, s.applyTemplate, "/apply-template")
	// The chat page holds no secret: it asks for the key when a request
	// is refused, as llama-server's web UI does.
	m.HandleFunc("/{$}", s.page)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Code: http.StatusNotFound, Type: "not_found_error", Message: "File Not Found"})
	})
	s.mux = m
}

// authorized checks the request's API key, if the server has one.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	key := r.Header.Get("X-Api-Key")
	if a := r.Header.Get("Authorization"); key == "" && strings.HasPrefix(a, "Bearer ") {
		key = strings.TrimPrefix(a, "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.APIKey)) == 1
}

// apiError is llama-server's error object: {"error": {code, message,
// type}}, with the prompt and context sizes of a prompt too long.
type apiError struct {
	Code          int    `json:"code"`
	Message       string `json:"message"`
	Type          string `json:"type"`
	NPromptTokens int    `json:"n_prompt_tokens,omitempty"`
	NCtx          int    `json:"n_ctx,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{Code: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// errBusy is the 503 of a request that found every slot busy and the
// queue full.
var errBusy = &apiError{Code: http.StatusServiceUnavailable, Type: "unavailable_error", Message: "the server is busy: every slot is generating and the queue is full, retry later"}

// writeError sends e as llama-server does, with Retry-After on a 503.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.Code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, e.Code, map[string]any{"error": e})
}

// asAPIError turns any error into the apiError sent for it.
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &apiError{Code: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Message: fmt.Sprintf("the request is more than %d bytes", mb.Limit)}
	}
	return &apiError{Code: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":{"code":500,"message":"response encoding failed","type":"server_error"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b)
}

// decode reads a JSON request body of at most maxBody bytes into v, then
// lifts the read deadline: the rest of the request is generation, which
// must not end when the server's ReadTimeout passes (an expired deadline
// on the idle connection would cancel the request's context as if the
// client had gone).
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := d.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return badRequest("the request body is not valid JSON: %v", err)
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	return nil
}

// acquire waits for a free slot, preferring the one whose cache shares
// the longest start with ids. A request that would wait behind Queue
// others is refused (errBusy); one whose client goes away while waiting
// gets the context's error.
func (s *Server) acquire(ctx context.Context, ids []int32) (*slot, error) {
	select {
	case s.tickets <- struct{}{}:
	default:
		if s.waiting.Add(1) > int64(s.cfg.Queue) {
			s.waiting.Add(-1)
			s.met.refused.Add(1)
			return nil, errBusy
		}
		select {
		case s.tickets <- struct{}{}:
			s.waiting.Add(-1)
		case <-ctx.Done():
			s.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	best := 0
	for i, sl := range s.free {
		if commonPrefix(sl.cached, ids) > commonPrefix(s.free[best].cached, ids) {
			best = i
		}
	}
	sl := s.free[best]
	s.free = append(s.free[:best], s.free[best+1:]...)
	sl.busy.Store(true)
	return sl, nil
}

// release returns a slot to the free ones.
func (s *Server) release(sl *slot) {
	sl.busy.Store(false)
	s.mu.Lock()
	s.free = append(s.free, sl)
	s.mu.Unlock()
	<-s.tickets
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}
