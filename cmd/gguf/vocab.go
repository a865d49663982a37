package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/sink"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newVocabCmd()) }

func newVocabCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vocab",
		Short: "Tokenize like llama.cpp, count tokens over corpora and choose the rows of a pruned head",
		Long: `The vocab commands build a tokenizer from any GGUF's tokenizer.ggml.* metadata (only the
header is read, so a remote model costs a few megabytes) and use it to pick which vocabulary
rows a pruned output head keeps.`,
	}
	cmd.AddCommand(newVocabTokenizeCmd(), newVocabCountCmd(), newVocabSelectCmd(), newVocabCoverageCmd(), newVocabImportHFCmd())
	return cmd
}

// loadTokenizer reads a MODEL argument's header and builds its tokenizer.
func loadTokenizer(cmd *cobra.Command, spec string) (*vocabselect.Tokenizer, error) {
	src, err := openSource(cmd, spec)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	tok, err := vocabselect.NewTokenizer(src.File().Metadata)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return tok, nil
}

func newVocabTokenizeCmd() *cobra.Command {
	var f struct {
		file          string
		stdin         bool
		ids, pieces   bool
		noBOS         bool
		noParseSpecal bool
	}
	cmd := &cobra.Command{
		Use:   "tokenize MODEL [TEXT]",
		Short: "Tokenize text exactly as llama.cpp's llama-tokenize does",
		Long: `Tokenize TEXT, a file (--file) or standard input (--stdin) with MODEL's tokenizer. Files and
stdin are taken byte for byte, with no trimming, and streamed: read in pieces cut where no token
spans the cut, so memory stays a few MB whatever the size (a stretch of 1 MiB without such a
place, or a word longer than 64 KiB, is cut anyway and only there may the ids differ from
llama-tokenize's). By default each token is printed as
"id -> 'piece'"; --ids prints the list as llama-tokenize --ids does. BOS is added when the
model asks for it (--no-bos: never); special tokens written in the text are recognized unless
--no-parse-special.`,
		Example: `  gguf vocab tokenize stories260K.gguf "Once upon a time" --ids
  gguf vocab tokenize hf://unsloth/Qwen3.5-2B-GGUF/Qwen3.5-2B-Q4_K_M.gguf "Canberra"
  cat prompt.txt | gguf vocab tokenize vocab.gguf --stdin --pieces`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sources := 0
			for _, on := range []bool{len(args) == 2, f.file != "", f.stdin} {
				if on {
					sources++
				}
			}
			if sources != 1 {
				return usageError("give exactly one of TEXT, --file or --stdin")
			}
			if f.ids && f.pieces {
				return usageError("--ids and --pieces exclude each other")
			}
			var text io.Reader
			switch {
			case f.file != "":
				file, err := os.Open(f.file)
				if err != nil {
					return err
				}
				defer file.Close()
				text = file
			case f.stdin:
				text = stdin
			default:
				text = strings.NewReader(args[1])
			}
			tok, err := loadTokenizer(cmd, args[0])
			if err != nil {
				return err
			}
			// Files and stdin are tokenized and printed piece by piece, so
			// that a text of any size needs a few MB.
			tr := tok.NewTokenReader(text, tok.AddBOS() && !f.noBOS, !f.noParseSpecal)
			defer tr.Close()
			out := bufio.NewWriterSize(stdout, 1<<20)
			var b []byte
			if f.ids {
				out.WriteByte('[')
			}
			for n := 0; ; {
				ids, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				b = b[:0]
				switch {
				case f.ids:
					for _, id := range ids {
						if n > 0 {
							b = append(b, ", "...)
						}
						b = strconv.AppendInt(b, int64(id), 10)
						n++
					}
				case f.pieces:
					for _, id := range ids {
						b = strconv.AppendQuote(b, string(tok.TokenToPiece(id, true)))
						b = append(b, '\n')
					}
				default:
					// llama-tokenize's "%6d -> '%s'", without fmt: on a multi-MB
					// text formatting each line took as long as tokenizing.
					var num [12]byte
					for _, id := range ids {
						d := strconv.AppendInt(num[:0], int64(id), 10)
						for k := len(d); k < 6; k++ {
							b = append(b, ' ')
						}
						b = append(append(b, d...), " -> '"...)
						b = append(append(b, tok.TokenToPiece(id, true)...), "'\n"...)
					}
				}
				if _, err := out.Write(b); err != nil {
					return err
				}
			}
			if f.ids {
				out.WriteString("]\n")
			}
			return out.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.file, "file", "", "tokenize this file's bytes")
	fl.BoolVar(&f.stdin, "stdin", false, "tokenize standard input")
	fl.BoolVar(&f.ids, "ids", false, "print the ids as a list: [1, 403, 407]")
	fl.BoolVar(&f.pieces, "pieces", false, "print each token's text, quoted, one per line")
	fl.BoolVar(&f.noBOS, "no-bos", false, "never add BOS (or EOS)")
	fl.BoolVar(&f.noParseSpecal, "no-parse-special", false, "treat special-token text as plain text")
	return cmd
}

// counter counts corpora with a shared progress bar and a summary line.
type counter struct {
	cmd     *cobra.Command
	tok     *vocabselect.Tokenizer
	threads int
}

// options returns the counting options of one corpus; done is the bytes
// of earlier corpora and total the bytes of all, for the progress bar.
func (c *counter) options(done, total int64, bar func(int64, int64)) vocabselect.CountOptions {
	opts := vocabselect.CountOptions{Workers: c.threads}
	if bar != nil && total > 0 {
		opts.Progress = func(n int64) { bar(min(done+n, total), total) }
	}
	return opts
}

// count counts one corpus (see options for done, total and bar).
func (c *counter) count(path string, done, total int64, bar func(int64, int64)) (*vocabselect.Counts, error) {
	return c.tok.CountCorpus(c.cmd.Context(), path, stdin, c.options(done, total, bar))
}

// textOutput opens -o for a text result: stdout for "-" (text may go to a
// terminal), else a file written safely.
func textOutput(path string) (io.Writer, func() error, func(), error) {
	if path == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	out, err := sink.Create(path, true)
	if err != nil {
		return nil, nil, nil, err
	}
	return out, out.Commit, out.Abort, nil
}
