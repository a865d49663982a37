package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
)

func init() { rootCmd.AddCommand(newPerplexityCmd()) }

func newPerplexityCmd() *cobra.Command {
	var (
		file            string
		ctx, chunks, th int
	)
	cmd := &cobra.Command{
		Use:   "perplexity MODEL -f TEXT",
		Short: "Score a model on a text: perplexity and bits per byte, as llama-perplexity computes them",
		Long: `perplexity tokenizes TEXT with the model's tokenizer (with BOS), cuts it into chunks of
--ctx tokens, evaluates each chunk from an empty context with its first token replaced
by BOS and scores the predictions of the second half of each chunk, exactly as
llama-perplexity does. It prints the running perplexity per chunk (stderr), then the
final PPL with its error estimate, the tokens scored and bits per byte:
log2(PPL) x tokens of the text / bytes of the text, which compares models with
different tokenizers. Targets a pruned head cannot produce are counted as misses and
skipped, not scored.`,
		Example: `  gguf perplexity syn-dense-256-Q4_K.gguf -f eval.txt --ctx 128
  gguf perplexity qwen3.5-2b-h65.gguf -f eval-en.txt --ctx 128 --chunks 40`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return usageError("-f TEXT is required")
			}
			if ctx < 2 || chunks < 0 {
				return usageError("--ctx must be at least 2 and --chunks not negative")
			}
			text, err := os.ReadFile(file)
			if err != nil {
				return usageError("%v", err)
			}
			m, tok, s, err := loadModel(args[0], ctx, th)
			if err != nil {
				return err
			}
			defer m.Close()
			defer s.Close()
			tokens := tok.Encode(string(text), true, false)
			bos := int32(-1)
			if tok.AddBOS() {
				bos = tok.BOS()
			}
			fmt.Fprintf(stderr, "gguf: %d tokens, calculating perplexity over %d chunks, n_ctx=%d\n", len(tokens), len(tokens)/ctx, ctx)
			r, err := engine.Perplexity(s, tokens, ctx, chunks, bos, func(c int, ppl float64) {
				fmt.Fprintf(stderr, "[%d]%.4f,", c, ppl)
			})
			fmt.Fprintln(stderr)
			if err != nil {
				return err
			}
			textTokens := len(tokens)
			if bos >= 0 && textTokens > 0 && tokens[0] == bos {
				textTokens--
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Final estimate: PPL = %.4f +/- %.5f\n", r.PPL, r.PPLErr)
			fmt.Fprintf(&b, "chunks %d, tokens scored %d, misses %d (targets outside the head, skipped)\n", r.Chunks, r.Scored, r.Misses)
			fmt.Fprintf(&b, "bits per byte %.4f (%d tokens, %d bytes)\n", engine.BitsPerByte(r.PPL, textTokens, len(text)), textTokens, len(text))
			_, err = fmt.Fprint(stdout, b.String())
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "text file to score")
	cmd.Flags().IntVarP(&ctx, "ctx", "c", 512, "tokens per chunk")
	cmd.Flags().IntVar(&chunks, "chunks", 0, "score at most this many chunks (0: all)")
	cmd.Flags().IntVarP(&th, "threads", "t", defaultThreads(), "worker threads")
	kernelsFlag(cmd)
	return cmd
}
