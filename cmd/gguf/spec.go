package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
)

// addSpecFlags adds llama.cpp's speculative decoding flags, with its
// defaults (off).
func addSpecFlags(cmd *cobra.Command, o *engine.SpecOptions) {
	d := engine.DefaultSpec()
	fl := cmd.Flags()
	fl.StringVar(&o.Type, "spec-type", d.Type, "speculative decoding: none, ngram-simple (drafts from the latest earlier match of the last tokens) or draft-mtp (the model's own NextN/MTP block drafts); drafts are verified in one batch and the output is unchanged")
	fl.IntVar(&o.NMax, "spec-draft-n-max", d.NMax, "most tokens drafted per step")
	fl.IntVar(&o.NMin, "spec-draft-n-min", d.NMin, "fewest drafted tokens worth a verification batch")
	fl.Float32Var(&o.PMin, "spec-draft-p-min", d.PMin, "draft-mtp: stop a draft before a token whose probability among the block's 10 best is below P (0: never)")
	fl.IntVar(&o.NgramN, "spec-ngram-simple-size-n", d.NgramN, "ngram-simple: tokens looked up in the history")
	fl.IntVar(&o.NgramM, "spec-ngram-simple-size-m", d.NgramM, "ngram-simple: tokens drafted after a match (then cut to --spec-draft-n-max)")
}

// specLine prints speculative decoding's counts as llama.cpp's "draft
// acceptance rate" line, with the tokens per forward pass.
func specLine(w io.Writer, o engine.SpecOptions, st engine.GenStats) {
	if o.Type == engine.SpecNone || o.Type == "" {
		return
	}
	fmt.Fprintf(w, "gguf: %s: draft acceptance rate = %.5f (%d accepted / %d generated), %.2f tokens per forward pass (%d passes)\n",
		o.Type, st.AcceptRate(), st.Accepted, st.Drafted, st.TokensPerPass(), st.Passes)
}
