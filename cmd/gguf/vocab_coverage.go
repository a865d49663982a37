package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/vocabselect"
)

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
