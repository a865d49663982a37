package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/llama2c"
	"github.com/ggufkit/gguf/sink"
)

func init() { rootCmd.AddCommand(newImportLlama2cCmd()) }

func newImportLlama2cCmd() *cobra.Command {
	var (
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "import-llama2c MODEL.bin TOKENIZER.bin -o OUT.gguf",
		Short: "Convert a Karpathy llama2.c checkpoint and tokenizer to GGUF",
		Long: `import-llama2c converts a llama2.c checkpoint (the tinyllamas family: stories260K,
stories15M, 42M, 110M) and its tokenizer file to a GGUF that llama.cpp and 'gguf run'
load. Tensors, vocabulary and metadata are those of llama.cpp's
convert-llama2c-to-ggml, except that the context length is the checkpoint's own.`,
		Example: `  gguf import-llama2c stories260K.bin tok512.bin -o stories260K.gguf
  gguf run stories260K.gguf -p "Once upon a time" --temp 0`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError("-o OUT.gguf is required")
			}
			ck, err := openChecked(args[0], func(f *os.File, size int64) (*llama2c.Checkpoint, error) { return llama2c.Open(f, size) })
			if err != nil {
				return err
			}
			tok, err := openChecked(args[1], func(f *os.File, size int64) (*llama2c.Tokenizer, error) {
				return llama2c.ReadTokenizer(f, size, ck.Vocab)
			})
			if err != nil {
				return err
			}
			o, err := sink.Create(out, force)
			if err != nil {
				return usageError("%v", err)
			}
			defer o.Abort()
			if err := llama2c.Convert(o, ck, tok); err != nil {
				return err
			}
			if err := o.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "gguf: wrote %s: llama, %d layers, width %d, %d heads (%d KV), vocab %d, context %d\n",
				o.Name(), ck.Layers, ck.Dim, ck.Heads, ck.KVHeads, ck.Vocab, ck.SeqLen)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output GGUF file (- for stdout)")
	cmd.Flags().BoolVar(&force, "force", false, "write binary output to a terminal")
	return cmd
}

// openChecked opens path and parses it with parse. The file stays open for
// the life of the process: the checkpoint is read while converting.
func openChecked[T any](path string, parse func(*os.File, int64) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, usageError("%v", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return zero, err
	}
	v, err := parse(f, st.Size())
	if err != nil {
		f.Close()
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
