package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/vocabselect"
)

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
			total := vocabselect.CorpusBytes(f.corpora)
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
			total := vocabselect.CorpusBytes(paths)
			bar := progress(f.quiet, "count")
			var corpora []vocabselect.Corpus
			var done int64
			for _, a := range cargs {
				counts, err := c.tok.ReadCorpusCounts(cmd.Context(), a.path, stdin, c.options(done, total, bar))
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
