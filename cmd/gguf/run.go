package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newRunCmd()) }

// runFlags are llama-cli's generation flags.
type runFlags struct {
	prompt        string
	n             int
	temp          float32
	seed          int64
	topK          int
	topP, minP    float32
	repeatPenalty float32
	repeatLastN   int
	threads       int
	ctx           int
	chat          chatFlags
	model         string // -m, llama-cli's spelling of the MODEL argument
	promptFile    string // -f, the prompt read from a file
	mf            modelFlags
}

// defaultThreads is every core, as llama.cpp's tools default to.
func defaultThreads() int { return runtime.NumCPU() }

func newRunCmd() *cobra.Command {
	var f runFlags
	d := engine.DefaultSampler()
	cmd := &cobra.Command{
		Use:   "run MODEL [-p PROMPT] [--chat]",
		Short: "Generate text with a llama-family GGUF model (pure Go, no C toolchain)",
		Long: `run loads a GGUF model (memory-mapped; split files from their first part; pruned,
padded or quantized heads as the toolkit writes them), encodes the prompt with the
model's own tokenizer and prints the prompt and then the generated text as it comes,
like llama-completion. At the end stderr gets the prompt and generation speed,
token counts, peak RSS and why generation stopped.

Sampling follows llama.cpp's default chain: repeat penalty, top-k, top-p, min-p,
temperature; --temp 0 is greedy. The same --seed gives the same text.

--chat (-cnv) talks to an instruction-tuned model in its own chat format: the
model's tokenizer.chat_template is matched to one of llama.cpp's built-in
templates (chatml, llama3, gemma, phi3, mistral, deepseek, Ling/bailing, ...;
--chat-template names one), --system gives the system turn, -p asks one
question and exits, and without -p every line of stdin is a user turn (with
a "> " prompt on a terminal). --reasoning off/on switches thinking off or on
where the template has a switch (Qwen3's <think> block, Ling's). An answer
ends at the model's end-of-turn token or a stop string of the template; the
KV cache is kept from turn to turn.`,
		Example: `  # the 260K-parameter story model (llama2.c's stories260K), greedy, 341 tokens
  gguf run stories260K-f32.gguf -p "Once upon a time" -n 341 --temp 0 --ctx 512

  # a build with a pruned 104-row head (see gguf build --head-ids), 4 threads
  gguf run stories260K-h104.gguf -p "Once upon a time" -n 200 -t 4

  # one question in the model's chat format, thinking off
  gguf run qwen3-1.7b.gguf --chat --reasoning off --system "Answer briefly." -p "Capital of Australia?"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := f.model
			switch {
			case len(args) == 1 && path != "":
				return usageError("give MODEL or -m MODEL, not both")
			case len(args) == 1:
				path = args[0]
			case path == "":
				return usageError("missing MODEL (or -m MODEL)")
			}
			if f.promptFile != "" {
				if cmd.Flags().Changed("prompt") {
					return usageError("give -p PROMPT or -f FILE, not both")
				}
				b, err := os.ReadFile(f.promptFile)
				if err != nil {
					return usageError("-f: %v", err)
				}
				f.prompt = string(b)
			}
			return runModel(cmd, path, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.prompt, "prompt", "p", "", "prompt text")
	fl.StringVarP(&f.promptFile, "file", "f", "", "read the prompt from FILE")
	fl.StringVarP(&f.model, "model", "m", "", "the model (llama-cli's spelling of MODEL)")
	fl.IntVarP(&f.n, "n-predict", "n", -1, "tokens to generate (-1: until end of text or a full context)")
	fl.Float32Var(&f.temp, "temp", d.Temp, "temperature (0: greedy)")
	fl.Int64VarP(&f.seed, "seed", "s", -1, "sampling seed (-1: random)")
	fl.IntVar(&f.topK, "top-k", d.TopK, "top-k sampling (0: off)")
	fl.Float32Var(&f.topP, "top-p", d.TopP, "top-p sampling (1: off)")
	fl.Float32Var(&f.minP, "min-p", d.MinP, "min-p sampling (0: off)")
	fl.Float32Var(&f.repeatPenalty, "repeat-penalty", d.RepeatPenalty, "penalty for recent tokens (1: off)")
	fl.IntVar(&f.repeatLastN, "repeat-last-n", d.RepeatLastN, "tokens the repeat penalty looks back over")
	fl.IntVarP(&f.threads, "threads", "t", defaultThreads(), "worker threads")
	fl.IntVarP(&f.ctx, "ctx", "c", 0, "context size in tokens (0: the model's context_length; also --ctx-size)")
	fl.BoolVar(&f.chat.on, "chat", false, "conversation in the model's chat format (llama-cli's -cnv, also accepted)")
	fl.StringVar(&f.chat.system, "system", "", "system message of the conversation (with --chat)")
	fl.StringVar(&f.chat.template, "chat-template", "", "chat template: a built-in name or Jinja text (default: the model's tokenizer.chat_template)")
	fl.StringVar(&f.chat.reasoning, "reasoning", "auto", "thinking: auto (the template's default), on or off, where the template has a switch")
	fl.BoolVar(&f.chat.verbosePrompt, "verbose-prompt", false, "print each chat prompt's token ids on stderr")
	kernelsFlag(cmd)
	addModelFlags(cmd, &f.mf)
	return cmd
}

// kernelsFlag adds --kernels to cmd: the engine's dot-product kernels,
// installed before the command runs (engine.SelectKernels; the
// GGUF_KERNELS environment variable does the same for any command).
func kernelsFlag(cmd *cobra.Command) {
	var name string
	cmd.Flags().StringVar(&name, "kernels", "auto", "dot-product kernels: auto (the CPU's best), portable (Go), avx2 or vnni (amd64), neon or dotprod (arm64)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if err := engine.SelectKernels(name); err != nil {
			return usageError("--kernels: %v", err)
		}
		return nil
	}
}

// loadModel opens a model, its tokenizer and an inference state with the
// model flags mf (nil: the defaults); verb names the command in the
// message for a model that is not a local file. The moeRun holds the
// pager's trace: close it when done.
func loadModel(verb, path string, mf *modelFlags, ctx, threads, batch int) (*engine.Model, *vocabselect.Tokenizer, *engine.State, *moeRun, error) {
	if mf == nil {
		mf = &modelFlags{policy: "lru"}
	}
	fail := func(err error) (*engine.Model, *vocabselect.Tokenizer, *engine.State, *moeRun, error) {
		return nil, nil, nil, nil, err
	}
	if threads < 1 {
		return fail(usageError("--threads must be at least 1"))
	}
	if ctx < 0 {
		return fail(usageError("--ctx must not be negative"))
	}
	// The runtime memory-maps the weights, and pages experts from them.
	if path == "-" {
		return fail(usageError("-: %s needs a local file, not stdin: save the model to a file first", verb))
	}
	if hfremote.IsRemote(path) {
		return fail(usageError("%s: %s needs a local file: download it first with `gguf fetch %s -o model.gguf`", path, verb, path))
	}
	oo, err := mf.openOptions()
	if err != nil {
		return fail(err)
	}
	po, err := mf.pagerOptions()
	if err != nil {
		return fail(err)
	}
	m, err := engine.OpenWith(path, oo)
	if err != nil {
		return fail(err)
	}
	tok, err := vocabselect.NewTokenizer(m.Metadata)
	if err != nil {
		m.Close()
		return fail(fmt.Errorf("%s: tokenizer: %w", path, err))
	}
	if tok.NumTokens() != m.Config.Vocab {
		m.Close()
		return fail(fmt.Errorf("%s: the tokenizer has %d tokens, token_embd %d rows", path, tok.NumTokens(), m.Config.Vocab))
	}
	mr := &moeRun{f: mf}
	if err := mr.openTrace(path, m.Config.Experts); err != nil {
		m.Close()
		return fail(err)
	}
	so := engine.Options{Ctx: ctx, Threads: threads, Batch: batch, Pager: po, Trace: mr.trace}
	if po == nil {
		if so.Thrash, err = mf.flash(); err != nil {
			mr.abort()
			m.Close()
			return fail(err)
		}
	}
	s, err := engine.NewState(m, so)
	if err != nil {
		mr.abort()
		m.Close()
		return fail(err)
	}
	return m, tok, s, mr, nil
}

func runModel(cmd *cobra.Command, path string, f runFlags) error {
	if !f.chat.on && (f.chat.system != "" || f.chat.template != "" || f.chat.reasoning != "auto" || f.chat.verbosePrompt) {
		return usageError("--system, --chat-template, --reasoning and --verbose-prompt need --chat")
	}
	if f.chat.on {
		if _, err := chat.ParseReasoning(f.chat.reasoning); err != nil {
			return usageError("%v", err)
		}
	}
	f.mf.inputs = []string{f.promptFile}
	m, tok, s, mr, err := loadModel("run", path, &f.mf, f.ctx, f.threads, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	defer s.Close()
	defer mr.abort()
	seed := uint64(f.seed)
	if f.seed < 0 {
		seed = rand.Uint64()
	}
	sm := engine.NewSampler(engine.SamplerOptions{
		Temp: f.temp, TopK: f.topK, TopP: f.topP, MinP: f.minP,
		RepeatPenalty: f.repeatPenalty, RepeatLastN: f.repeatLastN, Seed: seed,
	}, m.Config.Vocab)
	if f.chat.on {
		mr.startDecode()
		cs, err := newChatSession(m, tok, s, sm, f)
		if err != nil {
			return err
		}
		if f.prompt != "" {
			err = cs.turn(f.prompt)
		} else {
			err = cs.loop(stdin)
		}
		if err != nil {
			return err
		}
		cs.report(m, f.threads, seed)
		mr.report(stderr, s, cs.total.PromptTokens+cs.total.Generated)
		return mr.close()
	}
	prompt := tok.Encode(f.prompt, true, false)
	out := bufio.NewWriter(stdout)
	for _, id := range prompt {
		out.Write(tok.TokenToPiece(id, false))
	}
	out.Flush()
	mr.startDecode()
	st, err := engine.Generate(s, sm, prompt, f.n, tok.IsEOG, func(id int32) error {
		if _, err := out.Write(tok.TokenToPiece(id, false)); err != nil {
			return err
		}
		return out.Flush()
	})
	out.WriteString("\n")
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gguf: prompt %d tokens in %s (%.1f tok/s), generated %d tokens in %s (%.1f tok/s), %d threads, ctx %d, seed %d\n",
		st.PromptTokens, st.PromptTime.Round(time.Microsecond), tokPerSec(st.PromptTokens, st.PromptTime),
		st.Generated, st.GenTime.Round(time.Microsecond), tokPerSec(st.Generated, st.GenTime), f.threads, s.Ctx(), seed)
	fmt.Fprintf(stderr, "gguf: peak RSS %s (%s, KV cache %s); stopped: %s\n",
		humanize.IBytes(uint64(engine.PeakRSS())), weightsLine(m, s),
		humanize.IBytes(uint64(m.KVCacheBytes(s.Ctx()))), st.Stop)
	mr.report(stderr, s, st.PromptTokens+st.Generated)
	return mr.close()
}

func tokPerSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// weightsLine describes the weights' memory: all of them, or for a paged
// model the resident part and the pools.
func weightsLine(m *engine.Model, s *engine.State) string {
	if st := s.PagerStats(); st != nil {
		return fmt.Sprintf("weights %s resident of %s, expert pools %s", humanize.IBytes(uint64(m.ResidentBytes)),
			humanize.IBytes(uint64(m.WeightBytes)), humanize.IBytes(uint64(st.PoolBytes)))
	}
	return "weights " + humanize.IBytes(uint64(m.WeightBytes))
}
