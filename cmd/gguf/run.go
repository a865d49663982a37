package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/internal/prompttext"
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
	model         string   // -m, llama-cli's spelling of the MODEL argument
	promptFile    string   // -f, the prompt read from a file (-: stdin)
	reverse       []string // -r, text that ends the generation
	ignoreEOS     bool
	noDisplay     bool // --no-display-prompt
	escape        bool // -e
	raw           bool
	mf            modelFlags
	spec          engine.SpecOptions
}

func newRunCmd() *cobra.Command {
	var f runFlags
	d := engine.DefaultSampler()
	cmd := &cobra.Command{
		Use:   "run MODEL [-p PROMPT | -f FILE] [--chat]",
		Short: "Generate text with a llama-family GGUF model (pure Go, no C toolchain)",
		Long: `run loads a GGUF model (memory-mapped; split files from their first part; pruned,
padded or quantized heads as the toolkit writes them), encodes the prompt with the
model's own tokenizer and prints the prompt and then the generated text as it comes,
like llama-completion. At the end stderr gets the prompt and generation speed,
token counts, peak RSS and why generation stopped.

The prompt is -p TEXT, -f FILE (-f -: stdin), or, without either, stdin when it is
not a terminal (echo text | gguf run MODEL). A file or stdin is read up to what the
context can hold, and refused past it.

On a terminal, control characters other than newline and tab in the text (a model's
token can hold any bytes, such as an escape sequence that clears the screen) are
printed escaped (\x1b); --raw prints them as they are. To a pipe or a file the bytes
pass unchanged.

Sampling follows llama.cpp's default chain: repeat penalty, top-k, top-p, min-p,
temperature; --temp 0 is greedy. The same --seed gives the same text.

--chat (-cnv, -i) talks to an instruction-tuned model in its own chat format: the
model's tokenizer.chat_template is matched to one of llama.cpp's built-in
templates (chatml, llama3, gemma, phi3, mistral, deepseek, Ling/bailing, ...;
--chat-template names one), --system (-sys) gives the system turn, -p asks one
question and exits, and without -p every line of stdin is a user turn (with
a "> " prompt on a terminal; -st: only the first). --reasoning off/on switches
thinking off or on where the template has a switch (Qwen3's <think> block, Ling's).
An answer ends at the model's end-of-turn token or a stop string of the template
or of -r; the KV cache is kept from turn to turn.

The KV cache holds f16 keys and values by default (-ctk/-ctv f32, f16, q8_0, as
llama.cpp). --attn-eps E prunes attention for long contexts: a position whose
probability is below E times the largest one's (score below max + ln E) is neither
exponentiated nor summed, and the softmax is normalized over the kept positions.
0 (the default) is exact; 1e-3 kept 22 % of stories260K's positions at +0.18 %
perplexity.

llama.cpp's spellings are read too: -m, --ctx-size, -sys, -cnv, -no-cnv, -i, -st,
-r/--reverse-prompt, --ignore-eos, --no-display-prompt, -e (escapes are processed
only with -e here; llama.cpp processes them by default), --prompt-file; -ngl,
-fa and -tb are accepted and ignored with a note (this runtime runs on the CPU).`,
		Example: `  # the 260K-parameter story model (llama2.c's stories260K), greedy, 341 tokens
  gguf run stories260K-f32.gguf -p "Once upon a time" -n 341 --temp 0 --ctx 512

  # a build with a pruned 104-row head (see gguf build --head-ids), 4 threads
  gguf run stories260K-h104.gguf -p "Once upon a time" -n 200 -t 4

  # the prompt from a pipe, stopping at the first full stop
  echo "Once upon a time" | gguf run stories260K-f32.gguf -r . --temp 0

  # one question in the model's chat format, thinking off
  gguf run qwen3-1.7b.gguf --chat --reasoning off --system "Answer briefly." -p "Capital of Australia?"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := modelPath(args, f.model)
			if err != nil {
				return err
			}
			src, err := promptSource(cmd, f)
			if err != nil {
				return err
			}
			if src != nil {
				defer src.Close()
			}
			return runModel(cmd, path, f, src)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.prompt, "prompt", "p", "", "prompt text")
	fl.StringVarP(&f.promptFile, "file", "f", "", "read the prompt from FILE (-: stdin)")
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
	fl.IntVarP(&f.ctx, "ctx", "c", 0, "context size in tokens (0: the model's context_length, at most 4096; also --ctx-size)")
	fl.StringArrayVarP(&f.reverse, "reverse-prompt", "r", nil, "stop generating when the text reaches PROMPT (repeatable; with --chat, end the answer)")
	fl.BoolVar(&f.ignoreEOS, "ignore-eos", false, "never sample an end-of-generation token: generate until -n or a full context")
	fl.BoolVar(&f.noDisplay, "no-display-prompt", false, "print only the generated text, not the prompt")
	fl.BoolVarP(&f.escape, "escape", "e", false, `process escapes (\n, \r, \t, \', \", \\, \xNN) in the prompt, system message and -r`)
	fl.BoolVar(&f.raw, "raw", false, "print the generated text's bytes unescaped on a terminal too")
	fl.BoolVar(&f.chat.on, "chat", false, "conversation in the model's chat format (llama-cli's -cnv and -i, also accepted)")
	fl.StringVar(&f.chat.system, "system", "", "system message of the conversation (with --chat; also -sys)")
	fl.StringVar(&f.chat.template, "chat-template", "", "chat template: a built-in name or Jinja text (default: the model's tokenizer.chat_template)")
	fl.StringVar(&f.chat.reasoning, "reasoning", "auto", "thinking: auto (the template's default), on or off, where the template has a switch")
	fl.BoolVar(&f.chat.verbosePrompt, "verbose-prompt", false, "print each chat prompt's token ids on stderr")
	fl.BoolVar(&f.chat.singleTurn, "single-turn", false, "with --chat and no -p: answer the first line of stdin and exit (also -st)")
	addSpecFlags(cmd, &f.spec)
	kernelsFlag(cmd)
	addLlamaCPUFlags(cmd)
	addModelFlags(cmd, &f.mf)
	return cmd
}

// promptSource opens where a run's prompt comes from when it is not -p:
// -f FILE, -f - (stdin), or stdin when it is not a terminal and neither -p
// nor -f is given (echo text | gguf run MODEL; a chat without -p reads its
// turns from stdin instead). Nil: the prompt is -p's (or empty).
func promptSource(cmd *cobra.Command, f runFlags) (io.ReadCloser, error) {
	switch {
	case f.promptFile != "" && cmd.Flags().Changed("prompt"):
		return nil, usageError("give -p PROMPT or -f FILE, not both")
	case f.promptFile == "-":
		return io.NopCloser(stdin), nil
	case f.promptFile != "":
		r, err := os.Open(f.promptFile)
		if err != nil {
			return nil, usageError("-f: %v", err)
		}
		return r, nil
	case cmd.Flags().Changed("prompt") || f.chat.on || isTerminal(stdin):
		return nil, nil
	}
	return io.NopCloser(stdin), nil
}

// readPrompt reads a prompt from r, at most limit bytes: past that it
// cannot fit the context, and reading it all could take more memory than
// the machine has.
func readPrompt(r io.Reader, name string, limit int64, ctx int) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", usageError("-f %s: %v", name, err)
	}
	if int64(len(b)) > limit {
		return "", usageError("-f %s: the prompt is more than %d bytes, more than a context of %d tokens can hold (raise --ctx or shorten the prompt)", name, limit, ctx)
	}
	return string(b), nil
}

// errReversePrompt ends a generation whose text reached a -r prompt.
var errReversePrompt = errors.New("reverse prompt")

// runModel generates from the prompt: -p's, or read from src when not nil.
func runModel(cmd *cobra.Command, path string, f runFlags, src io.Reader) error {
	if !f.chat.on && (f.chat.system != "" || f.chat.template != "" || f.chat.reasoning != "auto" || f.chat.verbosePrompt || f.chat.singleTurn) {
		return usageError("--system, --chat-template, --reasoning, --verbose-prompt and --single-turn need --chat")
	}
	if _, err := chat.ParseReasoning(f.chat.reasoning); f.chat.on && err != nil {
		return usageError("%v", err)
	}
	if err := f.spec.Check(); err != nil {
		return usageError("%v", err)
	}
	f.mf.inputs = []string{f.promptFile}
	m, tok, s, mr, err := loadModel("run", path, &f.mf, f.ctx, f.threads, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	defer s.Close()
	defer mr.abort()
	if src != nil {
		name := f.promptFile
		if name == "" {
			name = "-"
		}
		if f.prompt, err = readPrompt(src, name, prompttext.MaxBytes(tok, s.Ctx(), f.escape), s.Ctx()); err != nil {
			return err
		}
	}
	if f.escape {
		f.prompt, f.chat.system = prompttext.ProcessEscapes(f.prompt), prompttext.ProcessEscapes(f.chat.system)
		for i, r := range f.reverse {
			f.reverse[i] = prompttext.ProcessEscapes(r)
		}
	}
	seed := uint64(f.seed)
	if f.seed < 0 {
		seed = rand.Uint64()
	}
	samplingDefaults(cmd, m.Metadata, &f.repeatPenalty, &f.repeatLastN)
	so := engine.SamplerOptions{
		Temp: f.temp, TopK: f.topK, TopP: f.topP, MinP: f.minP,
		RepeatPenalty: f.repeatPenalty, RepeatLastN: f.repeatLastN, Seed: seed,
	}
	if f.ignoreEOS {
		for id := range int32(tok.NumTokens()) {
			if tok.IsEOG(id) {
				so.Banned = append(so.Banned, id)
			}
		}
	}
	sm := engine.NewSampler(so, m.Config.Vocab)
	text := generatedOutput(stdout, isTerminal(stdout) && !f.raw)
	mw := newMemWatch("run", mr.guard, m, s)
	if f.chat.on {
		mr.startDecode()
		cs, err := newChatSession(m, tok, s, sm, f, text)
		if err != nil {
			return err
		}
		cs.mem = mw
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
	if len(prompt) > s.Ctx() {
		return usageError("the prompt is %d tokens, the context %d (raise --ctx)", len(prompt), s.Ctx())
	}
	out := bufio.NewWriter(text)
	if !f.noDisplay {
		for _, id := range prompt {
			out.Write(tok.TokenToPiece(id, false))
		}
	}
	out.Flush()
	mr.startDecode()
	rp := prompttext.NewReverseWatch(f.reverse)
	st, err := engine.GenerateSpec(s, sm, prompt, f.n, tok.IsEOG, func(id int32) error {
		piece := tok.TokenToPiece(id, false)
		if _, err := out.Write(piece); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
		if rp.Add(piece) {
			return errReversePrompt
		}
		return mw.check()
	}, f.spec)
	if errors.Is(err, errReversePrompt) {
		st.Stop, err = "reverse prompt (-r)", nil
	}
	out.WriteString("\n")
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gguf: prompt %d tokens in %s (%.1f tok/s), generated %d tokens in %s (%.1f tok/s), %d threads, ctx %d, seed %d\n",
		st.PromptTokens, st.PromptTime.Round(time.Microsecond), st.PromptRate(),
		st.Generated, st.GenTime.Round(time.Microsecond), st.GenRate(), f.threads, s.Ctx(), seed)
	fmt.Fprintf(stderr, "gguf: peak RSS %s (%s, KV cache %s); stopped: %s\n",
		humanize.IBytes(uint64(osmem.PeakRSS())), weightsLine(m, s),
		humanize.IBytes(uint64(s.CacheBytes())), st.Stop)
	specLine(stderr, f.spec, st)
	mr.report(stderr, s, st.PromptTokens+st.Generated)
	return mr.close()
}
