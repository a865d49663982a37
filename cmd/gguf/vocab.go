package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/headprune"
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

// corpusReader streams a corpus argument: a file, "-", or a directory, whose
// text files are read one after the other in lexical order (binary files,
// with a NUL or invalid UTF-8 in their first 8 KiB, are skipped).
type corpusReader struct {
	files []string
	size  int64
	cur   *os.File
}

func openCorpus(path string) (*corpusReader, error) {
	if path == "-" {
		return &corpusReader{size: -1}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return &corpusReader{files: []string{path}, size: st.Size()}, nil
	}
	c := &corpusReader{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if ok, err := isTextFile(p); err != nil || !ok {
			return err
		}
		c.files = append(c.files, p)
		c.size += info.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.files) == 0 {
		return nil, fmt.Errorf("%s: no text files", path)
	}
	return c, nil
}

func isTextFile(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	full := n == len(head)
	head = head[:n]
	if full { // drop a character cut by the 8 KiB limit
		i := len(head) - 1
		for i > 0 && i > len(head)-utf8.UTFMax && !utf8.RuneStart(head[i]) {
			i--
		}
		if !utf8.FullRune(head[i:]) {
			head = head[:i]
		}
	}
	return bytes.IndexByte(head, 0) < 0 && utf8.Valid(head), nil
}

func (c *corpusReader) Read(p []byte) (int, error) {
	if c.size < 0 {
		return stdin.Read(p)
	}
	for {
		if c.cur == nil {
			if len(c.files) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(c.files[0])
			if err != nil {
				return 0, err
			}
			c.cur, c.files = f, c.files[1:]
		}
		n, err := c.cur.Read(p)
		if err == io.EOF {
			c.cur.Close()
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *corpusReader) Close() {
	if c.cur != nil {
		c.cur.Close()
	}
}

// counter counts corpora with a shared progress bar and a summary line.
type counter struct {
	cmd     *cobra.Command
	tok     *vocabselect.Tokenizer
	threads int
}

// count counts one corpus; done is the bytes of earlier corpora and total
// the bytes of all, for the progress bar.
func (c *counter) count(path string, done, total int64, bar func(int64, int64)) (*vocabselect.Counts, error) {
	cr, err := openCorpus(path)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	opts := vocabselect.CountOptions{Workers: c.threads}
	if bar != nil && total > 0 {
		opts.Progress = func(n int64) { bar(min(done+n, total), total) }
	}
	counts, err := c.tok.Count(c.cmd.Context(), cr, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return counts, nil
}

// corpusBytes sums the sizes of corpus arguments (-1 if one is stdin).
func corpusBytes(paths []string) int64 {
	var total int64
	for _, p := range paths {
		cr, err := openCorpus(p)
		if err != nil || cr.size < 0 {
			return -1
		}
		total += cr.size
	}
	return total
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

func newVocabCountCmd() *cobra.Command {
	var f struct {
		corpora []string
		out     string
		threads int
		quiet   bool
	}
	cmd := &cobra.Command{
		Use:   "count MODEL --corpus FILE... -o counts.tsv",
		Short: "Count token frequencies over corpora, streaming and in parallel",
		Long: `Tokenize every corpus (a file, a directory of text files, or - for stdin) with MODEL's
tokenizer and write how often each token occurs, most frequent first. Memory does not grow
with the corpora, whatever their text: it is read in chunks of at most 1 MiB cut where no
token can span the cut, words longer than 64 KiB are merged in 64 KiB pieces, and chunks are
tokenized on all cores, about 50 MB per thread besides the tokenizer. Only next to a cut that
a text forces (1 MiB without a safe place, or such a word) may the counts differ from
tokenizing each corpus whole. The result can be given to "gguf vocab select" in place of the
corpus.`,
		Example: `  gguf vocab count Qwen3.5-2B.gguf --corpus war-and-peace.txt -o en.tsv
  gguf vocab count vocab.gguf --corpus $(go env GOROOT)/src -o code.tsv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(f.corpora) == 0 {
				return usageError("give at least one --corpus")
			}
			tok, err := loadTokenizer(cmd, args[0])
			if err != nil {
				return err
			}
			start := time.Now()
			c := &counter{cmd: cmd, tok: tok, threads: f.threads}
			total := corpusBytes(f.corpora)
			bar := progress(f.quiet, "count")
			sum := &vocabselect.Counts{Counts: make([]uint64, tok.NumTokens())}
			header := []string{"model: " + args[0]}
			for _, p := range f.corpora {
				counts, err := c.count(p, sum.Bytes, total, bar)
				if err != nil {
					return err
				}
				header = append(header, fmt.Sprintf("corpus: %s (%d bytes, %d tokens)", p, counts.Bytes, counts.Tokens))
				for i, v := range counts.Counts {
					sum.Counts[i] += v
				}
				sum.Tokens += counts.Tokens
				sum.Bytes += counts.Bytes
			}
			w, commit, abort, err := textOutput(f.out)
			if err != nil {
				return err
			}
			defer abort()
			if err := vocabselect.WriteCounts(w, tok, header, sum); err != nil {
				return err
			}
			if err := commit(); err != nil {
				return err
			}
			d := time.Since(start)
			fmt.Fprintf(stderr, "counted %s tokens in %s of text (%d corpora) in %s, %s\n",
				humanize.Comma(int64(sum.Tokens)), humanize.Bytes(uint64(sum.Bytes)), len(f.corpora), d.Round(time.Millisecond), rate(sum.Bytes, d))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.corpora, "corpus", nil, "a text file, a directory of text files, or - (repeatable)")
	fl.StringVarP(&f.out, "output", "o", "-", "counts file to write (- for stdout)")
	fl.IntVarP(&f.threads, "threads", "t", 0, "tokenizing threads (0: all cores)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

// corpusArg is one --corpus NAME=FILE[:BUDGET] of select.
type corpusArg struct {
	name, path string
	budget     int
}

func parseCorpusArg(s string) (corpusArg, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return corpusArg{}, usageError("--corpus %q: want NAME=FILE[:BUDGET]", s)
	}
	a := corpusArg{name: name, path: rest}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		if b, err := strconv.Atoi(rest[i+1:]); err == nil {
			if b <= 0 {
				return corpusArg{}, usageError("--corpus %q: budget must be a positive number of rows", s)
			}
			a.path, a.budget = rest[:i], b
		}
	}
	return a, nil
}

// readCorpusCounts counts a corpus, or reads it when it is a counts file.
func (c *counter) readCorpusCounts(path string, done, total int64, bar func(int64, int64)) (*vocabselect.Counts, error) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		head := make([]byte, 64)
		n, _ := io.ReadFull(f, head)
		if vocabselect.IsCountsFile(head[:n]) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			counts, err := vocabselect.ReadCounts(f, c.tok.NumTokens())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return counts, nil
		}
	}
	return c.count(path, done, total, bar)
}

func newVocabSelectCmd() *cobra.Command {
	var f struct {
		corpora   []string
		rows      int
		keepBelow int32
		pad       int
		out       string
		threads   int
		quiet     bool
	}
	cmd := &cobra.Command{
		Use:   "select MODEL --corpus NAME=FILE[:BUDGET]... --rows N -o ids.txt",
		Short: "Choose the token ids a pruned output head keeps, ranked",
		Long: `Rank MODEL's token ids for a pruned head: its special tokens first, then every id below
--keep-below, then the most frequent tokens of each corpus in turn, each corpus filling its
BUDGET rows (corpora without one share the rest equally), then tokens by combined frequency
until --rows is reached, rounded up to a multiple of --pad. FILE is a text file, a directory
of text files (e.g. a source tree for code) or a counts file from "gguf vocab count". The
output starts with comment lines recording the model, corpora, budgets and rows, and is the
same byte for byte for the same inputs.`,
		Example: `  # a 65,672-row multilingual head for Qwen3.5-2B (a quarter of its 248,320 rows), English and code first
  gguf vocab select Qwen3.5-2B.gguf --rows 65672 --keep-below 16384 \
    --corpus en=corpus/en:16000 --corpus code=$(go env GOROOT)/src:8000 \
    --corpus zh=corpus/zh --corpus ja=corpus/ja --corpus es=corpus/es --corpus fr=corpus/fr \
    --corpus de=corpus/de --corpus ru=corpus/ru --corpus ar=corpus/ar -o head-ids.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(f.corpora) == 0 {
				return usageError("give at least one --corpus NAME=FILE[:BUDGET]")
			}
			if f.rows <= 0 {
				return usageError("--rows must be positive")
			}
			if f.pad <= 0 {
				return usageError("--pad must be positive")
			}
			var cargs []corpusArg
			names := map[string]bool{}
			for _, s := range f.corpora {
				a, err := parseCorpusArg(s)
				if err != nil {
					return err
				}
				if names[a.name] {
					return usageError("--corpus: name %q given twice", a.name)
				}
				names[a.name] = true
				cargs = append(cargs, a)
			}
			tok, err := loadTokenizer(cmd, args[0])
			if err != nil {
				return err
			}
			c := &counter{cmd: cmd, tok: tok, threads: f.threads}
			paths := make([]string, len(cargs))
			for i, a := range cargs {
				paths[i] = a.path
			}
			total := corpusBytes(paths)
			bar := progress(f.quiet, "count")
			var corpora []vocabselect.Corpus
			var done int64
			for _, a := range cargs {
				counts, err := c.readCorpusCounts(a.path, done, total, bar)
				if err != nil {
					return err
				}
				done += counts.Bytes
				corpora = append(corpora, vocabselect.Corpus{Name: a.name, Counts: counts, Budget: a.budget})
			}
			sel, err := vocabselect.Select(tok, corpora, vocabselect.SelectOptions{Rows: f.rows, KeepBelow: f.keepBelow, Pad: f.pad})
			if err != nil {
				return usageError("%v", err)
			}
			header := []string{
				"gguf vocab select",
				fmt.Sprintf("model: %s (%s, pre %q, %d tokens)", args[0], tok.Model(), tok.Pre(), tok.NumTokens()),
			}
			for i, a := range cargs {
				header = append(header, fmt.Sprintf("corpus %s: %s (%d bytes, %d tokens), budget %d, took %d",
					a.name, a.path, corpora[i].Counts.Bytes, corpora[i].Counts.Tokens, sel.Budgets[i], sel.Taken[i]))
			}
			header = append(header, fmt.Sprintf("rows: %d asked, %d written (pad %d): %d specials, %d below %d, %d from corpora, %d fill",
				f.rows, len(sel.IDs), f.pad, sel.Specials, sel.Low, f.keepBelow, len(sel.IDs)-sel.Specials-sel.Low-sel.Fill, sel.Fill))
			w, commit, abort, err := textOutput(f.out)
			if err != nil {
				return err
			}
			defer abort()
			if err := headprune.WriteIDs(w, header, sel.IDs); err != nil {
				return err
			}
			if err := commit(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "selected %d ids (%d specials, %d below %d, %d fill) from %d corpora\n",
				len(sel.IDs), sel.Specials, sel.Low, f.keepBelow, sel.Fill, len(corpora))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.corpora, "corpus", nil, "NAME=FILE[:BUDGET]: a corpus and the rows its tokens fill (repeatable)")
	fl.IntVar(&f.rows, "rows", 0, "number of ids to keep (before padding)")
	fl.Int32Var(&f.keepBelow, "keep-below", 0, "always keep the ids below this one")
	fl.IntVar(&f.pad, "pad", 8, "round the number of ids up to a multiple of this")
	fl.StringVarP(&f.out, "output", "o", "-", "ids file to write (- for stdout)")
	fl.IntVarP(&f.threads, "threads", "t", 0, "tokenizing threads (0: all cores)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

// coverageJSON is one file's entry in coverage --json.
type coverageJSON struct {
	File string `json:"file"`
	vocabselect.CoverageReport
}

func newVocabCoverageCmd() *cobra.Command {
	var f struct {
		ids     string
		texts   []string
		jsonOut bool
		top     int
		threads int
	}
	cmd := &cobra.Command{
		Use:   "coverage MODEL --ids ids.txt --text FILE...",
		Short: "Report the tokens of a text that a pruned head cannot produce",
		Long: `For each text, count its tokens (no BOS/EOS) and the misses: tokens whose id is not in
the ids file. The most frequent missing tokens are listed with their text. --json writes an
array of {file, tokens, misses, share, top_missing: [{id, count, text}]}.`,
		Example: `  gguf vocab coverage Qwen3.5-2B.gguf --ids head-ids.txt --text eval-en.txt --text eval-multi.txt`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.ids == "" || len(f.texts) == 0 {
				return usageError("give --ids and at least one --text")
			}
			tok, err := loadTokenizer(cmd, args[0])
			if err != nil {
				return err
			}
			idf, err := os.Open(f.ids)
			if err != nil {
				return err
			}
			ids, err := headprune.ReadIDs(idf, tok.NumTokens())
			idf.Close()
			if err != nil {
				return usageError("%s: %v", f.ids, err)
			}
			c := &counter{cmd: cmd, tok: tok, threads: f.threads}
			var reports []coverageJSON
			for _, p := range f.texts {
				counts, err := c.count(p, 0, 0, nil)
				if err != nil {
					return err
				}
				reports = append(reports, coverageJSON{File: p, CoverageReport: vocabselect.Coverage(tok, ids, counts, f.top)})
			}
			if f.jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(reports)
			}
			var b []byte
			for _, r := range reports {
				b = fmt.Appendf(b, "%s: %d tokens, %d misses (%.2f%%) with %d ids\n", r.File, r.Tokens, r.Misses, 100*r.Share, len(ids))
				for _, m := range r.Top {
					b = fmt.Appendf(b, "  %8d %8d  %s\n", m.ID, m.Count, strconv.Quote(m.Text))
				}
			}
			_, err = stdout.Write(b)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ids, "ids", "", "ids file (one id per line, # comments)")
	fl.StringArrayVar(&f.texts, "text", nil, "text file to check (repeatable)")
	fl.BoolVar(&f.jsonOut, "json", false, "machine-readable output")
	fl.IntVar(&f.top, "top", 20, "how many missing tokens to list")
	fl.IntVarP(&f.threads, "threads", "t", 0, "tokenizing threads (0: all cores)")
	return cmd
}

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
