package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/sink"
	"github.com/ggufkit/gguf/vocabselect"
)

func newVocabImportHFCmd() *cobra.Command {
	var f struct {
		pre                                  string
		out                                  string
		force                                bool
		config, tokenizerConfig, addedTokens string
	}
	cmd := &cobra.Command{
		Use:   "import-hf DIR --pre NAME -o vocab.gguf",
		Short: "Write a vocab-only GGUF from Hugging Face vocab.json + merges.txt",
		Long: `Read a byte-level BPE tokenizer folder (vocab.json, merges.txt, and config.json,
tokenizer_config.json, added_tokens.json where present) and write a vocab-only GGUF with the
tokenizer.ggml.* keys llama.cpp's converter would write, so that a head can be chosen for a
model before downloading it. --pre names the pre-tokenizer (qwen2, llama-bpe, qwen35, ...).
--config, --tokenizer-config and --added-tokens take those files from other paths (files
saved under other names); a missing one is warned about with what the vocabulary then lacks
(without config.json no padding rows up to vocab_size, without tokenizer_config.json no
BOS/EOS and no added special tokens).`,
		Example: `  gguf vocab import-hf ./Qwen2-1.5B-Instruct --pre qwen2 -o qwen2-vocab.gguf
  gguf vocab import-hf ../shared/models/tokenizers/qwen2 --pre qwen2 \
    --config ../shared/models/tokenizers/qwen2/qwen2-1.5b-instruct_config.json \
    --tokenizer-config ../shared/models/tokenizers/qwen2/qwen2-1.5b-instruct_tokenizer_config.json \
    --added-tokens ../shared/models/tokenizers/qwen2/qwen2-1.5b-instruct_added_tokens.json -o qwen2-vocab.gguf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.pre == "" {
				return usageError("--pre is required (one of %s)", strings.Join(vocabselect.SupportedPre(), ", "))
			}
			if f.out == "" {
				return usageError("-o is required")
			}
			files := vocabselect.HFDir(args[0])
			for _, o := range []struct {
				flag string
				path *string
			}{{f.config, &files.Config}, {f.tokenizerConfig, &files.TokenizerConfig}, {f.addedTokens, &files.AddedTokens}} {
				if o.flag != "" {
					if _, err := os.Stat(o.flag); err != nil {
						return usageError("%v", err)
					}
					*o.path = o.flag
				}
			}
			md, warnings, err := vocabselect.ImportHFFiles(files, f.pre)
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintf(stderr, "gguf: warning: %s%s\n", w, similarFiles(args[0], w))
			}
			out, err := sink.Create(f.out, f.force)
			if err != nil {
				return err
			}
			defer out.Abort()
			w, err := gguf.NewWriter(out, 3, md, nil)
			if err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			if err := out.Commit(); err != nil {
				return err
			}
			n, _ := md.Get(vocabselect.KeyTokens)
			fmt.Fprintf(stderr, "wrote %s: %d tokens, pre %q, %s\n", f.out, n.Len(), f.pre, humanize.Bytes(uint64(w.Written())))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pre, "pre", "", "pre-tokenizer name for tokenizer.ggml.pre")
	fl.StringVarP(&f.out, "output", "o", "", "GGUF file to write (- for stdout)")
	fl.BoolVar(&f.force, "force", false, "write binary output to a terminal")
	fl.StringVar(&f.config, "config", "", "config.json to use (default: DIR/config.json)")
	fl.StringVar(&f.tokenizerConfig, "tokenizer-config", "", "tokenizer_config.json to use (default: DIR/tokenizer_config.json)")
	fl.StringVar(&f.addedTokens, "added-tokens", "", "added_tokens.json to use (default: DIR/added_tokens.json)")
	return cmd
}

// similarFiles names, for a warning about a missing "no NAME: ..." file,
// the files of dir saved under another name that ends like it (as in
// qwen2-1.5b-instruct_config.json) and the flag that takes one.
func similarFiles(dir, warning string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(warning, "no "), ":")
	flag := map[string]string{"config.json": "--config", "tokenizer_config.json": "--tokenizer-config", "added_tokens.json": "--added-tokens"}[name]
	entries, err := os.ReadDir(dir)
	if err != nil || flag == "" {
		return ""
	}
	var found []string
	for _, e := range entries {
		n := e.Name()
		if n != name && (strings.HasSuffix(n, "_"+name) || strings.HasSuffix(n, "-"+name)) && !(name == "config.json" && (strings.HasSuffix(n, "tokenizer_config.json") || strings.HasSuffix(n, "generation_config.json"))) {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		return " (pass " + flag + " FILE if it is elsewhere)"
	}
	return fmt.Sprintf(" (%s has %s: pass one with %s)", dir, strings.Join(found, ", "), flag)
}
