package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newPerplexityCmd()) }

// pplFigure is one perplexity figure in perplexity --json.
type pplFigure struct {
	PPL         float64 `json:"ppl"`
	PPLErr      float64 `json:"ppl_err"`
	BitsPerByte float64 `json:"bits_per_byte"`
	Targets     int     `json:"targets"`
}

// perplexityJSON is the output of perplexity --json.
type perplexityJSON struct {
	Model     string `json:"model"`
	File      string `json:"file"`
	FullModel string `json:"full_model,omitempty"`
	Ctx       int    `json:"ctx"`
	Chunks    int    `json:"chunks"`
	Tokens    int64  `json:"tokens"`
	Bytes     int64  `json:"bytes"`
	Scored    int    `json:"scored"`
	Misses    int    `json:"misses"`
	// HeadOnly skips the misses: over the head's tokens only.
	HeadOnly pplFigure `json:"head_only"`
	// Charged counts every target, each miss charged MissNLL nats.
	Charged    pplFigure `json:"charged"`
	MissCharge string    `json:"miss_charge"`
	MissNLL    float64   `json:"miss_nll"`
	// HeadShare is the unpruned model's mean probability of the head's
	// tokens (--full only).
	HeadShare float64 `json:"head_share,omitempty"`
	// Full is the unpruned model's figure over the same targets (--full).
	Full *pplFigure `json:"full,omitempty"`
	// MoE is the expert pager's counts (--moe-pool or --moe-budget).
	MoE *moeSummary `json:"moe,omitempty"`
}

func newPerplexityCmd() *cobra.Command {
	var (
		file, full, model      string
		mf                     modelFlags
		jsonOut                bool
		ctx, chunks, th, batch int
	)
	cmd := &cobra.Command{
		Use:   "perplexity MODEL -f TEXT|-",
		Short: "Score a model on a text: perplexity and bits per byte, as llama-perplexity computes them",
		Long: `perplexity tokenizes TEXT with the model's tokenizer (with BOS), cuts it into chunks of
--ctx tokens, evaluates each chunk from an empty context with its first token replaced
by BOS and scores the predictions of the second half of each chunk, exactly as
llama-perplexity does. The text is streamed: tokenized piece by piece as the chunks need
it, so a text of any size needs a few MB. It prints the running perplexity per chunk
(stderr), then the final PPL with its error estimate, the tokens scored and bits per
byte: log2(PPL) x tokens of the text / bytes of the text, which compares models with
different tokenizers.

A pruned head cannot produce some targets (misses). Two figures are then printed: the
head-only one skips the misses and is over the head's tokens only; it is lower than an
unpruned model's, since the head's softmax spreads the missing tokens' probability over
the tokens it keeps, and does not compare with it. The charged one counts every target and
compares with an unpruned model's PPL. With --full naming the unpruned model it scores the
pruned model's probabilities over its head scaled by the share the unpruned model gives
the head's tokens, and the unpruned model's probabilities for the misses (a head cut from
unchanged weights then scores exactly the unpruned model's PPL, so the figure shows what
quantization or other changes cost); it also prints the unpruned model's own figure over
the same targets. Without --full each miss is charged a fixed ln(vocabulary size) nats, a
uniform guess over the whole vocabulary. --json writes {model, file, full_model, ctx,
chunks, tokens, bytes, scored, misses, head_only, charged, miss_charge ("full model" or
"fixed"), miss_nll, head_share, full}, each figure {ppl, ppl_err, bits_per_byte, targets}.`,
		Example: `  gguf perplexity stories260K-f32.gguf -f eval-en.txt --ctx 128
  gguf perplexity stories-h104.gguf -f eval-en.txt --ctx 128 --full stories260K-f32.gguf --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := modelPath(args, model)
			if err != nil {
				return err
			}
			if file == "" {
				return usageError("-f TEXT is required")
			}
			if ctx < 3 || chunks < 0 {
				return usageError("--ctx must be at least 3 (each chunk scores the predictions of its second half: with 2 there are none) and --chunks not negative")
			}
			var text io.Reader = stdin
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return usageError("%v", err)
				}
				defer f.Close()
				text = f
			}
			// Paged, each token is decoded on its own as in chat: scored in
			// batches the pool would see a whole batch's experts at once,
			// which is not how it runs (the seeds' tinyppl, §21.11).
			if !cmd.Flags().Changed("batch-size") && mf.paged() {
				batch = 1
			}
			mf.inputs = []string{file, full}
			m, tok, s, mr, err := loadModel("perplexity", path, &mf, ctx, th, batch)
			if err != nil {
				return err
			}
			defer m.Close()
			defer s.Close()
			defer mr.abort()
			mr.startDecode()
			if n := m.Config.ContextLength; n > 0 && ctx > n {
				fmt.Fprintf(stderr, "gguf: warning: model was trained on only %d context tokens (%d specified)\n", n, ctx)
			}
			o := engine.PerplexityOptions{Ctx: ctx, MaxChunks: chunks, BOS: -1}
			if tok.AddBOS() {
				o.BOS = tok.BOS()
			}
			if full != "" {
				fm, _, fs, _, err := loadModel("perplexity --full", full, &modelFlags{policy: "lru", cacheK: mf.cacheK, cacheV: mf.cacheV}, ctx, th, 0)
				if err != nil {
					return err
				}
				defer fm.Close()
				defer fs.Close()
				o.Full = fs
			}
			tr := tok.NewTokenReader(text, true, false)
			defer tr.Close()
			fmt.Fprintf(stderr, "gguf: calculating perplexity over chunks of n_ctx=%d, streaming %s\n", ctx, file)
			o.Progress = func(c int, ppl float64) { fmt.Fprintf(stderr, "[%d]%.4f,", c, ppl) }
			r, err := engine.Perplexity(s, streamTokens(tr), o)
			fmt.Fprintln(stderr)
			if err != nil {
				return err
			}
			textTokens := tr.Tokens()
			if o.BOS >= 0 && textTokens > 0 {
				textTokens--
			}
			bpb := func(ppl float64) float64 { return engine.BitsPerByte(ppl, int(textTokens), int(tr.Bytes())) }
			out := perplexityJSON{
				Model: path, File: file, FullModel: full, Ctx: ctx, Chunks: r.Chunks,
				Tokens: textTokens, Bytes: tr.Bytes(), Scored: r.Scored, Misses: r.Misses,
				HeadOnly:   pplFigure{r.PPL, r.PPLErr, bpb(r.PPL), r.Scored},
				Charged:    pplFigure{r.ChargedPPL, r.ChargedPPLErr, bpb(r.ChargedPPL), r.Scored + r.Misses},
				MissCharge: r.MissCharge, MissNLL: r.MissNLL, HeadShare: r.HeadShare,
			}
			if full != "" {
				out.Full = &pplFigure{PPL: r.FullPPL, BitsPerByte: bpb(r.FullPPL), Targets: r.Scored + r.Misses}
			}
			evaluated := r.Chunks * ctx
			out.MoE = mr.summary(s, evaluated)
			if err := mr.close(); err != nil {
				return err
			}
			if jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			var b strings.Builder
			if r.Misses == 0 {
				fmt.Fprintf(&b, "Final estimate: PPL = %.4f +/- %.5f\n", r.PPL, r.PPLErr)
				fmt.Fprintf(&b, "chunks %d, tokens scored %d, misses 0\n", r.Chunks, r.Scored)
				fmt.Fprintf(&b, "bits per byte %.4f (%d tokens, %d bytes)\n", out.HeadOnly.BitsPerByte, textTokens, tr.Bytes())
			} else {
				charge := fmt.Sprintf("a fixed ln(%d) = %.3f nats", m.Config.Vocab, r.MissNLL)
				if full != "" {
					charge = fmt.Sprintf("the full model's log-probability (mean %.3f nats), head tokens scaled by the full model's head share %.4f", r.MissNLL, r.HeadShare)
				}
				fmt.Fprintf(&b, "Final estimate, head's tokens only: PPL = %.4f +/- %.5f, %.4f bits per byte (%d misses skipped; not comparable with an unpruned model)\n",
					r.PPL, r.PPLErr, out.HeadOnly.BitsPerByte, r.Misses)
				fmt.Fprintf(&b, "Final estimate, misses charged: PPL = %.4f +/- %.5f, %.4f bits per byte (every target; each miss charged %s; comparable with an unpruned model)\n",
					r.ChargedPPL, r.ChargedPPLErr, out.Charged.BitsPerByte, charge)
				if full != "" {
					fmt.Fprintf(&b, "full model %s over the same targets: PPL = %.4f, %.4f bits per byte\n", full, r.FullPPL, out.Full.BitsPerByte)
				}
				fmt.Fprintf(&b, "chunks %d, targets %d: %d scored, %d misses (outside the head); %d tokens, %d bytes\n",
					r.Chunks, r.Scored+r.Misses, r.Scored, r.Misses, textTokens, tr.Bytes())
			}
			_, err = fmt.Fprint(stdout, b.String())
			if kept, seen := s.AttnKept(); seen > 0 {
				fmt.Fprintf(stderr, "gguf: --attn-eps %g kept %d of %d attention positions (%.1f %%)\n", mf.attnEps, kept, seen, 100*float64(kept)/float64(seen))
			}
			mr.report(stderr, s, evaluated)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "text file to score (-: stdin)")
	cmd.Flags().StringVarP(&model, "model", "m", "", "the model (llama-perplexity's spelling of MODEL)")
	cmd.Flags().IntVarP(&ctx, "ctx", "c", 512, "tokens per chunk")
	cmd.Flags().IntVar(&chunks, "chunks", 0, "score at most this many chunks (0: all)")
	cmd.Flags().IntVarP(&th, "threads", "t", defaultThreads(), "worker threads")
	cmd.Flags().IntVarP(&batch, "batch-size", "b", 0, "tokens evaluated together (0: as many as fit a few MB; 1 with the expert pager, so the pools see tokens one at a time as in chat)")
	cmd.Flags().StringVar(&full, "full", "", "the unpruned model a pruned head was cut from, for the charged figure")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "machine-readable output")
	kernelsFlag(cmd)
	addLlamaCPUFlags(cmd)
	addModelFlags(cmd, &mf)
	return cmd
}

// streamTokens feeds a TokenReader's tokens to Perplexity a chunk at a
// time, holding at most a chunk plus one piece of the text's tokens.
func streamTokens(tr *vocabselect.TokenReader) engine.TokenSource {
	var pending []int32
	eof := false
	return func(buf []int32) (bool, error) {
		for len(pending) < len(buf) && !eof {
			ids, err := tr.Next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return false, err
			}
			pending = append(pending, ids...)
		}
		if len(pending) < len(buf) {
			return false, nil
		}
		copy(buf, pending)
		pending = pending[:copy(pending, pending[len(buf):])]
		return true, nil
	}
}
