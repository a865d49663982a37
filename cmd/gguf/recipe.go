package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/internal/safetext"
	"github.com/ggufkit/gguf/recipes"
	"github.com/ggufkit/gguf/sink"
)

func init() { rootCmd.AddCommand(newRecipeCmd()) }

// recipeFlags are the options every recipe subcommand shares.
type recipeFlags struct {
	hub     string
	threads int
}

func (f *recipeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.hub, "hub", "", "Hugging Face endpoint for hf:// inputs (default: HF_ENDPOINT, else https://huggingface.co)")
	cmd.Flags().IntVarP(&f.threads, "threads", "t", runtime.NumCPU(), "threads tokenizing corpora and converting rows (the bytes do not depend on it)")
}

func (f *recipeFlags) options(pinned bool) recipes.Options {
	return recipes.Options{Endpoint: f.hub, Token: tokenFlag, Stats: &remoteTotal, Pinned: pinned, Threads: f.threads}
}

// recipeError maps the recipes package's errors to exit codes: an input
// or output that fails its pin is a failed check (1); an unpinned input,
// a malformed recipe or anything else is invalid input (2).
func recipeError(err error) error {
	var m *recipes.Mismatch
	var pe *recipes.PinError
	switch {
	case errors.As(err, &m):
		return &exitError{code: exitFound, err: err}
	case errors.As(err, &pe) && !pe.Unpinned:
		return &exitError{code: exitFound, err: err}
	}
	return err
}

func loadRecipe(path string) (*recipes.Recipe, error) {
	r, err := recipes.Load(path)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return r, nil
}

func newRecipeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recipe",
		Short: "Pinned, reproducible builds: plan, run, verify and lock recipe files",
		Long: `A recipe (YAML) names a build's inputs by commit, sha256 and size (hf://owner/repo@<commit>/file,
an https URL or a path relative to the recipe), lists the operations of one 'gguf build' (drop,
rename, add, the head from an ids file or a vocab select over pinned corpora, llama-quantize's
options with a pinned imatrix, experts last, layouts, metadata) or of one 'gguf assemble' (base,
experts, experts type and layout, imatrix), and gives the sha256 and size of the file it makes, with
each tensor's sha256. The same recipe gives the same bytes on every machine.`,
	}
	cmd.AddCommand(newRecipePlanCmd(), newRecipeRunCmd(), newRecipeVerifyCmd(), newRecipeLockCmd())
	return cmd
}

func newRecipePlanCmd() *cobra.Command {
	var rf recipeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan RECIPE",
		Short: "Dry run: resolve and check every input, print the output's tensor table and what the build will fetch",
		Example: `  gguf recipe plan recipes/qwen3.5-2b-q4k-h65.yaml
  gguf recipe plan recipes/ci/stories260k-q8.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRecipe(args[0])
			if err != nil {
				return err
			}
			res, err := recipes.Open(cmd.Context(), r, rf.options(false))
			if err != nil {
				return recipeError(err)
			}
			defer res.Close()
			b, err := res.Plan(cmd.Context())
			if err != nil {
				return recipeError(err)
			}
			costs, err := res.Costs(b)
			if err != nil {
				return err
			}
			if asJSON {
				rep, err := res.PlanReport(args[0], b, costs)
				if err != nil {
					return err
				}
				return printJSON(rep)
			}
			res.WriteSummary(stdout, b)
			if b.Report.Quant != nil {
				printQuantPlan(stdout, b.Report.Quant)
				fmt.Fprintln(stdout)
			}
			if err := b.Plan.WriteTable(stdout); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
			recipes.WriteCosts(stdout, costs)
			if r.Output.SHA256 == "" {
				fmt.Fprintln(stdout, "output: not pinned (no sha256): 'gguf recipe lock' pins it")
			} else {
				fmt.Fprintf(stdout, "output: expected sha256 %s, %d tensors listed\n", r.Output.SHA256, len(r.Output.Tensors))
			}
			return nil
		},
	}
	rf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON on stdout")
	return cmd
}

func newRecipeRunCmd() *cobra.Command {
	var rf recipeFlags
	var out string
	var quiet, asJSON, force bool
	cmd := &cobra.Command{
		Use:   "run RECIPE [-o OUT]",
		Short: "Build a pinned recipe; keep the output only if its sha256 is the recipe's (exit 1 naming the first differing tensor)",
		Long: `Opens every input, refusing one that is not pinned (an hf:// revision that is not a 40-hex commit,
a missing sha256 or size) or that fails its pin, builds the recipe's output in one streaming pass
into a temporary file next to OUT (default: the recipe's output.name), hashes it tensor by tensor as
it is written, and renames it into place only when the sha256 is the recipe's. Otherwise it exits 1,
naming the first tensor that differs, and nothing is left under OUT. -o - (stdout), a device or a
FIFO gets the output only once it is checked: it is built in a temporary file (in TMPDIR) first.
OUT is never the recipe or one of its local inputs, and the recipe's output.name (used without -o)
does not replace an existing file unless --force.`,
		Example: `  gguf recipe run recipes/smollm2-360m-q4k.yaml -o /tmp/smollm2.gguf
  gguf recipe run recipes/ci/stories260k-q8.yaml --json -o out.gguf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRecipe(args[0])
			if err != nil {
				return err
			}
			opts := recipes.RunOptions{Force: force}
			if out == "" {
				if out = r.Output.Name; out == "" {
					return usageError("missing -o OUT (the recipe has no output.name)")
				}
				opts.Default = true
			}
			if out == "-" && asJSON {
				return usageError("-o - and --json would both write stdout: give -o FILE")
			}
			start := time.Now()
			rr, inputs, err := runRecipe(cmd, r, rf, out, quiet, opts)
			rep := r.RunReport(args[0], out, rr, inputs, err)
			total := remoteTotal.Snapshot()
			rep.Requests, rep.BytesReceived, rep.Seconds = total.Requests, total.Bytes, time.Since(start).Seconds()
			if asJSON {
				if jerr := printJSON(rep); jerr != nil {
					return jerr
				}
			}
			if err != nil {
				return recipeError(err)
			}
			verdict := "matches the recipe"
			if r.Output.SHA256 == "" {
				verdict = "not checked: the recipe pins no output ('gguf recipe lock' pins it)"
			}
			fmt.Fprintf(stderr, "gguf: wrote %s: %s (%d bytes), %d tensors, sha256 %s %s; %d requests, %s received, %s\n",
				out, humanize.Bytes(uint64(rep.Size)), rep.Size, rep.Tensors, rep.SHA256, verdict,
				rep.Requests, humanize.Bytes(uint64(rep.BytesReceived)), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default: the recipe's output.name, in the current directory)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON report on stdout")
	cmd.Flags().BoolVar(&force, "force", false, "let the recipe's output.name replace an existing file; write the output to a terminal")
	return cmd
}

// runRecipe opens the pinned inputs and runs the recipe into out with one
// progress bar over the whole output (bytes, tensors, ETA), returning the
// inputs as the report lists them.
func runRecipe(cmd *cobra.Command, r *recipes.Recipe, rf recipeFlags, out string, quiet bool, opts recipes.RunOptions) (*recipes.RunResult, []recipes.InputReport, error) {
	res, err := recipes.Open(cmd.Context(), r, rf.options(true))
	if err != nil {
		return nil, nil, err
	}
	defer res.Close()
	if f := progressTerminal(quiet); f != nil {
		var bar *progressbar.ProgressBar
		name := safetext.Name(r.Name) // the bar is on a terminal
		opts.Progress = func(written, total int64, k, n int) {
			if bar == nil {
				bar = newBar(f, total, name, os.Getenv("NO_COLOR") == "")
				onScreen.set(bar)
			}
			bar.Set64(written)
			bar.Describe(fmt.Sprintf("%s: tensor %d/%d", name, min(k+1, n), n))
			if written >= total {
				bar.Finish()
				onScreen.set(nil)
			}
		}
	}
	rr, err := res.Run(cmd.Context(), out, opts)
	if rr == nil {
		return nil, nil, err
	}
	return rr, res.InputReports(rr.Read), err
}

func newRecipeVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "verify RECIPE FILE",
		Short:   "Check an existing file against a recipe's output, tensor by tensor (exit 1 on a difference)",
		Example: `  gguf recipe verify recipes/smollm2-360m-q4k.yaml /sdcard/smollm2.gguf`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRecipe(args[0])
			if err != nil {
				return err
			}
			sums, err := r.Verify(args[1])
			var m *recipes.Mismatch
			switch {
			case errors.As(err, &m):
				return recipeError(fmt.Errorf("%s: %w", args[1], err))
			case err != nil:
				return usageError("%v", err)
			}
			fmt.Fprintf(stdout, "%s: sha256 %s, %d bytes, %d tensors: as the recipe expects\n", args[1], sums.SHA256, sums.Size, len(sums.Tensors))
			return nil
		},
	}
}

func newRecipeLockCmd() *cobra.Command {
	var rf recipeFlags
	var out string
	cmd := &cobra.Command{
		Use:   "lock RECIPE [-o OUT]",
		Short: "Pin a recipe written with branch names: commits, sha256s and sizes of inputs and output",
		Long: `Resolves each hf:// input's revision (a branch, tag or nothing) to the commit it names now and
writes that commit into the source, fills in every input's sha256 and size (those the Hub publishes,
else hashed), builds the output without writing it to learn its sha256, size and per-tensor sha256,
and writes the recipe back (to RECIPE, or OUT) with comments kept. Pins already present are checked,
not replaced.`,
		Example: `  gguf recipe lock recipes/qwen3.5-2b-q4k-h65.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadRecipe(args[0])
			if err != nil {
				return err
			}
			lr, err := recipes.Lock(cmd.Context(), r, rf.options(false))
			if err != nil {
				return recipeError(err)
			}
			text, err := r.Encode()
			if err != nil {
				return err
			}
			if out == "" {
				out = args[0]
			}
			w, err := sink.Create(out, true)
			if err != nil {
				return usageError("%v", err)
			}
			defer w.Abort()
			if _, err := w.Write(text); err != nil {
				return err
			}
			if err := w.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "gguf: locked %s: %d inputs, output sha256 %s (%d bytes, %d tensors)\n",
				out, len(lr.Inputs), lr.Sums.SHA256, lr.Sums.Size, len(lr.Sums.Tensors))
			return nil
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the locked recipe here (default: over RECIPE)")
	return cmd
}
