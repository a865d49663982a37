package main

import (
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/ops"
)

func init() { rootCmd.AddCommand(newLayoutCmd()) }

// layoutFlags choose layouts: --experts-layout/--ternary-layout in build,
// --experts/--ternary in layout.
type layoutFlags struct {
	experts, ternary         string
	lossy                    bool
	expertsName, ternaryName string // the flags' names, for errors
}

func (f *layoutFlags) register(cmd *cobra.Command, expertsName, ternaryName string) {
	f.expertsName, f.ternaryName = expertsName, ternaryName
	cmd.Flags().StringVar(&f.experts, expertsName, "", "q2lut: repack the Q2_K experts of an experts-last file for table-lookup kernels; none: restore Q2_K")
	cmd.Flags().StringVar(&f.ternary, ternaryName, "", "ter3 (1.875 bits/weight), ter2 (2.25) or ter2s128 (2.125, lossy): repack Q2_0/TQ1_0/TQ2_0 tensors; none: restore them")
	cmd.Flags().BoolVar(&f.lossy, "lossy", false, "accept ter2s128, which merges two per-64 scales into one")
}

// apply copies the choices into opts, checking their values.
func (f *layoutFlags) apply(cmd *cobra.Command, opts *ops.Options) error {
	for _, c := range []struct {
		flag    string
		v       string
		ternary bool
	}{{f.expertsName, f.experts, false}, {f.ternaryName, f.ternary, true}} {
		if err := ops.ParseLayout("--"+c.flag, c.v, c.ternary); err != nil {
			return usageError("%v", err)
		}
	}
	opts.ExpertsLayout, opts.TernaryLayout, opts.LossyLayout = f.experts, f.ternary, f.lossy
	return nil
}

// printLayoutSummary says on stderr which tensors a build repacked.
func printLayoutSummary(w io.Writer, rep *ops.Report) {
	if rep == nil || rep.Layouts == nil {
		return
	}
	l := rep.Layouts
	kinds := map[string]int{}
	for _, e := range l.Packed {
		kinds[string(e.Kind)]++
	}
	for k, n := range kinds {
		fmt.Fprintf(w, "gguf: %d tensors repacked to %s (renamed *.%s)\n", n, k, k)
	}
	if len(l.Restored) > 0 {
		fmt.Fprintf(w, "gguf: %d tensors restored to their original types and names\n", len(l.Restored))
	}
	if len(l.Kept) > 0 {
		fmt.Fprintf(w, "gguf: %d expert tensors are not Q2_K and stay as they are (first: %s)\n", len(l.Kept), l.Kept[0])
	}
}

func newLayoutCmd() *cobra.Command {
	var bf buildFlags
	var of opFlags
	cmd := &cobra.Command{
		Use:   "layout FILE -o OUT [--experts q2lut|none] [--ternary ter3|ter2|ter2s128|none]",
		Short: "Repack tensors into kernel layouts (q2lut experts, ternary), or restore them",
		Long: `Rewrites FILE in one pass with tensors repacked for fast kernels, or restores them:
  --experts q2lut   every Q2_K expert tensor of an experts-last file, same size, regrouped 16 rows x
                    256 columns for table-lookup kernels (rows past the last full 16 of an expert
                    stay Q2_K)
  --ternary ter3    Q2_0/TQ1_0/TQ2_0 tensors as base-3 digits, 5 per byte, per-64 scales (1.875 b/w)
  --ternary ter2    the same as 2-bit fields with per-64 scales (2.25 b/w)
  --ternary ter2s128  2-bit fields with one scale per 128 weights (2.125 b/w; lossy, needs --lossy)
  none              restores the original tensors, byte for byte for the lossless layouts
A repacked tensor is renamed NAME.<layout> and listed in ggufkit.layout.* metadata, so stock
llama.cpp refuses the file ("missing tensor") rather than reading it as its old type. A Q2_0
block using the fourth code (+2) is not ternary and is refused. Byte formats: docs/layouts.md.`,
		Example: `  gguf layout moon-beam-el.gguf --experts q2lut -o moon-beam-q2lut.gguf
  gguf layout moon-beam-q2lut.gguf --experts none -o moon-beam-el.gguf
  gguf layout Ternary-Bonsai-8B-Q2_0.gguf --ternary ter3 -o tb8-ter3.gguf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if of.layouts.experts == "" && of.layouts.ternary == "" {
				return usageError("nothing to do: give --experts and/or --ternary")
			}
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout)")
			}
			return buildFrom(cmd, args[0], &of, bf, nil)
		},
	}
	bf.register(cmd)
	bf.registerMerge(cmd)
	of.layouts.register(cmd, "experts", "ternary")
	return cmd
}

// printLayouts adds the repacked tensors to gguf info's summary.
func printLayouts(w io.Writer, s *inspect.Summary) {
	if s.LayoutError != "" {
		fmt.Fprintf(w, "layouts\tunreadable: %s\n", s.LayoutError)
	}
	for i, g := range s.Layouts {
		label := ""
		if i == 0 {
			label = "layouts"
		}
		exact := "lossless"
		if !g.Lossless {
			exact = "lossy"
		}
		fmt.Fprintf(w, "%s\t%s from %s: %d tensors, %s weights, %s, %.4g bits/weight, %s\n", label, g.Layout, g.From,
			g.Tensors, humanize.Comma(int64(g.Parameters)), humanize.Bytes(uint64(g.Bytes)), g.BPW, exact)
	}
}
