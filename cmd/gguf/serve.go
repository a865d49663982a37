package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/server"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newServeCmd()) }

// serveFlags are llama-server's flags that this server has.
type serveFlags struct {
	model     string
	host      string
	port      int
	apiKey    string
	alias     string
	parallel  int
	queue     int
	timeout   int
	threads   int
	ctx       int
	n         int
	temp      float32
	topK      int
	topP      float32
	minP      float32
	repeat    float32
	repeatN   int
	template  string
	reasoning string
	spec      engine.SpecOptions
	mf        modelFlags
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	d := engine.DefaultSampler()
	cmd := &cobra.Command{
		Use:   "serve MODEL [--host H] [--port P] [--api-key KEY]",
		Short: "Serve a model over HTTP with llama-server's API and a chat page",
		Long: `serve loads a model as run does and answers llama-server's requests on
http://HOST:PORT: the OpenAI routes POST /v1/chat/completions, POST /v1/completions
and GET /v1/models, and llama.cpp's POST /completion, /tokenize, /detokenize,
/apply-template, GET /health, /props, /metrics (Prometheus text, with the expert
pager's counts) and /slots, with llama-server's field names, server-sent events
("stream": true) and {"error": {...}} objects. GET / is a chat page for a browser
or a TV: streamed tokens coloured by probability, the alternatives on focus,
tok/s and the pager's hit rate.

--parallel (-np) slots generate at once (one by default: a small device's memory
holds one KV cache); --queue more requests wait for one, and the rest get 503
with Retry-After. A generation stops within one token when its client goes
away. A request whose prompt starts with what a slot's cache holds evaluates
only the rest (cache_prompt, on by default); a recurrent model (qwen35,
bailingmoe3) cannot cut its state back, so a prompt that does not extend the
cache starts over. A conversation longer than the context loses its oldest
turns (after the system message) instead of failing.

--api-key (or LLAMA_API_KEY) is then required of every request but /health and
the page, as "Authorization: Bearer KEY". Requests never name a file: the
model, templates and every path are given here.`,
		Example: `  # the chat page on http://127.0.0.1:8080/
  gguf serve qwen3-1.7b.gguf -c 4096

  # on the TV box, for the living room, with a key and an expert pool
  gguf serve ling-mini.gguf --host 0.0.0.0 --api-key secret --moe-pool 20

  # an OpenAI client against it
  curl http://127.0.0.1:8080/v1/chat/completions -d '{"messages":[{"role":"user","content":"Hi"}]}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := modelPath(args, f.model)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("api-key") {
				f.apiKey = os.Getenv("LLAMA_API_KEY")
			}
			return serve(cmd, path, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "the model (llama-server's spelling of MODEL)")
	fl.StringVar(&f.host, "host", "127.0.0.1", "address to listen on (0.0.0.0: every interface)")
	fl.IntVar(&f.port, "port", 8080, "port to listen on (0: any free port, printed)")
	fl.StringVar(&f.apiKey, "api-key", "", "require this key of every request but /health and the page (default: LLAMA_API_KEY)")
	fl.StringVarP(&f.alias, "alias", "a", "", "the model's name in responses (default: the path)")
	fl.IntVar(&f.parallel, "parallel", 1, "requests generated at once, each with its own KV cache (also -np)")
	fl.IntVar(&f.queue, "queue", 4, "requests that may wait for a busy slot; more get 503")
	fl.IntVar(&f.timeout, "timeout", 600, "seconds to read a request, and for each write to a slow client (also -to)")
	fl.IntVarP(&f.threads, "threads", "t", defaultThreads(), "worker threads")
	fl.IntVarP(&f.ctx, "ctx", "c", 0, "context size per slot in tokens (0: the model's context_length, at most 4096; also --ctx-size)")
	fl.IntVarP(&f.n, "n-predict", "n", -1, "default token limit of a request (-1: until end of text or a full context)")
	fl.Float32Var(&f.temp, "temp", d.Temp, "default temperature (0: greedy)")
	fl.IntVar(&f.topK, "top-k", d.TopK, "default top-k (0: off)")
	fl.Float32Var(&f.topP, "top-p", d.TopP, "default top-p (1: off)")
	fl.Float32Var(&f.minP, "min-p", d.MinP, "default min-p (0: off)")
	fl.Float32Var(&f.repeat, "repeat-penalty", d.RepeatPenalty, "default repeat penalty (1: off)")
	fl.IntVar(&f.repeatN, "repeat-last-n", d.RepeatLastN, "tokens the repeat penalty looks back over")
	fl.StringVar(&f.template, "chat-template", "", "chat template: a built-in name or Jinja text (default: the model's tokenizer.chat_template, else chatml as llama-server)")
	fl.StringVar(&f.reasoning, "reasoning", "auto", "default thinking: auto (the template's default), on or off; a request's chat_template_kwargs.enable_thinking overrides it")
	addSpecFlags(cmd, &f.spec)
	kernelsFlag(cmd)
	addLlamaCPUFlags(cmd)
	addModelFlags(cmd, &f.mf)
	return cmd
}

// serve loads the model and serves it until interrupted.
func serve(cmd *cobra.Command, path string, f serveFlags) error {
	r, err := chat.ParseReasoning(f.reasoning)
	if err != nil {
		return usageError("%v", err)
	}
	if err := f.spec.Check(); err != nil {
		return usageError("%v", err)
	}
	if f.mf.trace != "" {
		// An interrupted command's outputs are removed, and a server ends
		// by an interrupt: the trace would never be kept.
		return usageError("--moe-trace: serve runs until interrupted, which removes the trace; record one with gguf run")
	}
	m, tok, states, mr, err := loadModelSlots("serve", path, &f.mf, f.ctx, f.threads, 0, f.parallel)
	if err != nil {
		return err
	}
	defer m.Close()
	defer mr.abort()
	for _, s := range states {
		defer s.Close()
	}
	samplingDefaults(cmd, m.Metadata, &f.repeat, &f.repeatN)
	tm, text, err := serveTemplate(m, f.template)
	if err != nil {
		return err
	}
	params, err := countParams(cmd, path)
	if err != nil {
		return err
	}
	name := f.alias
	if name == "" {
		name = path
	}
	cfg := server.Config{Model: m, Tokenizer: tok, Slots: states, Template: tm, TemplateText: text, Reasoning: r, Spec: f.spec,
		Name: name, Path: path, APIKey: f.apiKey, Queue: f.queue, NPredict: f.n, Params: params,
		Timeout: time.Duration(f.timeout) * time.Second, Build: "gguf-" + version(),
		Sampler: engine.SamplerOptions{Temp: f.temp, TopK: f.topK, TopP: f.topP, MinP: f.minP, RepeatPenalty: f.repeat, RepeatLastN: f.repeatN},
		Logf:    func(format string, args ...any) { fmt.Fprintf(stderr, "gguf: serve: "+format+"\n", args...) },
		Guard:   mr.guard}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return usageError("listen: %v", err)
	}
	mr.startDecode()
	fmt.Fprintf(stderr, "gguf: serving %s (%s, %d slots of %d tokens, %s, template %s) on http://%s/\n", name,
		m.Config.Arch, len(states), states[0].Ctx(), weightsLine(m, states[0]), tm, ln.Addr())
	return srv.Serve(cmd.Context(), ln)
}

// serveTemplate returns the chat template: --chat-template, else the
// model's, else chatml (llama-server's fallback), and the text /props
// reports for it.
func serveTemplate(m *engine.Model, spec string) (*chat.Template, string, error) {
	if spec == "" {
		if v, ok := m.Metadata.Get(vocabselect.KeyChatTemplate); ok {
			spec, _ = v.Str()
		}
	}
	if spec == "" {
		spec = "chatml"
	}
	tm, err := chat.New(spec)
	if err != nil {
		return nil, "", usageError("%v", err)
	}
	return tm, spec, nil
}

// countParams counts the model's weights from its header, as gguf info
// does.
func countParams(cmd *cobra.Command, path string) (uint64, error) {
	src, err := openSource(cmd, path)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	return inspect.Summarize(path, src.File(), src.Size()).Parameters, nil
}
