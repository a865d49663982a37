package main

import (
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/quant"
)

func init() { rootCmd.AddCommand(newAssembleCmd()) }

func newAssembleCmd() *cobra.Command {
	var bf buildFlags
	var base, exps, typ, lay, imatrix string
	var threads int
	cmd := &cobra.Command{
		Use:   "assemble --base SRC --experts SRC -o OUT",
		Short: "Join one model's metadata and non-expert tensors with another's MoE experts, experts last",
		Long: `Writes a MoE model whose metadata and non-expert tensors come from --base and whose expert
tensors (*_exps) come from --experts, matched by name: the base's own experts are replaced (shapes
must match), or added when the base has none (a 'gguf fetch --exclude _exps' subset). Both must be
the same architecture with the same expert count, and the experts must have the shapes and layers
the base's metadata gives them as the runtime's loader reads it (embedding and expert FFN widths,
every MoE layer from the leading dense ones to block_count). The output holds the header, the base's tensors
in their order, then the experts in --experts's order, converted to --experts-type (with --imatrix)
and repacked (--experts-layout q2lut) on the fly. Each source is read front to back once; a remote
one (hf://, https://) is fetched --inflight range requests at a time, neighbouring ranges
coalesced. Memory does not grow with the model: up to --inflight x 8 MiB of fetched ranges per
remote source, plus 16 MiB chunks and per-thread rows when converting (measured on a 1.1 GB
model: 24 MB copying locally, 115 MB converting to Q2_K with 2 threads, 190 MB with both
sources remote at --inflight 10). -o - writes to stdout.

Into a file, a run reading a remote source (as 'gguf fetch' and 'gguf build' do) writes
OUT.incomplete and a journal of the tensors written and their sha256: after an interruption
(Ctrl-C, a lost connection, kill -9) the same command run again checks them, fetches only the
tensors still missing and writes the same bytes as an uninterrupted run.`,
		Example: `  # the seeds' Ling-mini-2.0 build: local non-experts, remote imatrix Q2_K experts, repacked, over ssh
  gguf assemble --base ling-dense-part.gguf \
      --experts hf://mradermacher/Ling-mini-2.0-i1-GGUF/Ling-mini-2.0.i1-Q2_K_S.gguf \
      --experts-layout q2lut -o - | ssh ipad 'cat > lm2-q2-lut.gguf'

  # requantize BF16 experts to Q2_K with an importance matrix
  gguf assemble --base dense-q4k.gguf --experts model-bf16.gguf --experts-type Q2_K --imatrix imatrix.gguf -o out.gguf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if base == "" || exps == "" {
				return usageError("assemble needs --base SRC and --experts SRC")
			}
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout)")
			}
			opts := ops.AssembleOptions{ExpertsLayout: lay, Threads: threads, ExpertShapes: engine.ExpertShapes}
			if err := ops.ParseLayout("--experts-layout", lay, false); err != nil {
				return usageError("%v", err)
			}
			if typ != "" {
				t, err := gguf.ParseType(typ)
				if err != nil {
					return usageError("--experts-type: %v", err)
				}
				opts.ExpertsType = t
			}
			if imatrix != "" {
				if typ == "" {
					return usageError("--imatrix needs --experts-type")
				}
				m, err := readImatrix(imatrix)
				if err != nil {
					return err
				}
				opts.Imatrix = m
			}
			bs, err := openSource(cmd, base)
			if err != nil {
				return err
			}
			defer bs.Close()
			es, err := openSource(cmd, exps)
			if err != nil {
				return err
			}
			defer es.Close()
			p, rep, err := ops.Assemble(planInput(bs), planInput(es), opts)
			if err != nil {
				return err
			}
			if rep.Quant != nil && bf.out != "" && !bf.dryRun {
				printQuantSummary(stderr, rep.Quant)
			}
			rep.Quant = nil // summarized above; writePlan would print it as a file quantization
			return writePlan(cmd, p, rep, bf)
		},
	}
	bf.register(cmd)
	cmd.Flags().StringVar(&base, "base", "", "source of the metadata and non-expert tensors (path, -, https:// or hf://)")
	cmd.Flags().StringVar(&exps, "experts", "", "source of the expert tensors (path, -, https:// or hf://)")
	cmd.Flags().StringVar(&typ, "experts-type", "", "convert the expert weights to this ggml type (Q2_K, Q4_K, IQ2_XS...)")
	cmd.Flags().StringVar(&lay, "experts-layout", "", "q2lut: repack the Q2_K experts for table-lookup kernels (see 'gguf layout')")
	cmd.Flags().StringVar(&imatrix, "imatrix", "", "importance matrix for --experts-type (llama-imatrix GGUF or legacy .dat)")
	cmd.Flags().IntVar(&inflight, "inflight", 10, "range requests in flight per remote source")
	cmd.Flags().IntVarP(&threads, "threads", "t", runtime.NumCPU(), "threads converting rows (the bytes do not depend on it)")
	return cmd
}

// readImatrix reads an importance matrix file (llama-imatrix GGUF or the
// legacy .dat).
func readImatrix(path string) (*quant.Imatrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError("--imatrix: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	m, err := quant.ReadImatrix(f, st.Size())
	if err != nil {
		return nil, usageError("--imatrix %s: %v", path, err)
	}
	return m, nil
}
