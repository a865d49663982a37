package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/split"
)

// writeSplit writes p as the files of a split model, as llama-gguf-split
// --split-max-size names and fills them (OUT without .gguf is the prefix),
// then prints a one-line summary on stderr.
func writeSplit(cmd *cobra.Command, p *plan.Plan, bf buildFlags) error {
	lim := split.Limit{Tensors: bf.splitTensors}
	if bf.splitMax != "" {
		var err error
		if lim.Bytes, err = split.ParseSize(bf.splitMax); err != nil {
			return usageError("--split-max-size: %v", err)
		}
	}
	if bf.merge {
		return usageError("--merge writes one file: it cannot be split again")
	}
	if bf.out == "-" {
		return usageError("a split model is several files: give -o a path, not -")
	}
	prefix := strings.TrimSuffix(bf.out, ".gguf")
	start := time.Now()
	res, err := split.Write(cmd.Context(), p, prefix, lim, plan.Options{Progress: progress(bf.quiet, "build")})
	if err != nil {
		return err
	}
	var total int64
	for _, n := range res.Sizes {
		total += n
	}
	files := res.Files[0]
	if n := len(res.Files); n > 1 {
		files = fmt.Sprintf("%d files %s ... %s", n, res.Files[0], res.Files[n-1])
	}
	printWrote(files, total, p, res.Plan.Read, time.Since(start))
	return nil
}
