package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/internal/demo"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newDemoCmd()) }

// newDemoCmd runs the toolkit's main job end to end, from a loopback Hub to
// a device file run by the Go runtime, so a fresh offline clone can see it
// work.
func newDemoCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main pipeline from a loopback Hub to a device file (offline) and check every step",
		Long: `Starts a loopback Hugging Face Hub in-process and publishes two models on it: Karpathy's
stories260K (embedded in the binary with its MIT license, imported with import-llama2c) and a
generated mixture-of-experts model (llama architecture, 2 layers, 4 experts, random weights). Then
runs the bundled recipes from the Hub (inputs pinned by commit, sha256 and size; tensors fetched
by byte ranges): stories260K gets a head chosen by token frequency over the model's own greedy
stories, F16 weights; the MoE a frequency-chosen head, Q8_0 as llama-quantize makes it, experts
moved last. Each output's sha256 is checked against its recipe, the stories260K file tells its
greedy story with the Go runtime (it must be llama2.c's reference story), and the MoE file goes
through the checks of the expert steps: re-cut head equal to a direct build, quantization error
(diff --numeric), generation inside the head, perplexity with the head's misses. Any failed check
exits non-zero.`,
		Example: `  gguf demo
  gguf demo --dir /tmp/gguf-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keep := dir != ""
			if !keep {
				d, err := os.MkdirTemp("", "gguf-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(d)
				dir = d
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			} else if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			err := demo.Run(cmd.Context(), dir, keep, demo.Env{
				Out: stdout,
				// F32 caches: the demo checks its stories against
				// llama2.c's, which computes attention in float32.
				Load: func(path string, pool, ctx, threads int) (*engine.Model, *vocabselect.Tokenizer, *engine.State, error) {
					m, tok, s, _, err := loadModel("demo", path, &modelFlags{policy: "lru", pool: pool, cacheK: "f32", cacheV: "f32"}, ctx, threads, 0)
					return m, tok, s, err
				},
				PrintSummary: printSummary,
				TensorData:   tensorData,
			})
			// A failed check exits 1, as a difference found does.
			var ce *demo.CheckError
			if errors.As(err, &ce) {
				return &exitError{code: exitFound, err: err}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "keep the demo files in this directory (default: a temporary one, removed)")
	return cmd
}
