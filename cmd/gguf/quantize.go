package main

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/dustin/go-humanize/english"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/safetext"
	"github.com/ggufkit/gguf/ops"
)

func init() { rootCmd.AddCommand(newQuantizeCmd()) }

// quantFlags are llama-quantize's options, shared by `gguf quantize` and
// `gguf build`.
type quantFlags struct {
	typ             string
	pure            bool
	tensorTypes     []string
	outputType      string
	embdType        string
	imatrix         string
	allowRequantize bool
	leaveOutput     bool
	keep            []string
	threads         int
}

func (q *quantFlags) register(cmd *cobra.Command, typeRequired bool) {
	what := "quantize to TYPE as llama-quantize does: its file-type names (Q4_K_M, q3_k_s, IQ3_XS, Q2_K_S...) or numbers, or a ggml type name (MXFP4)"
	if !typeRequired {
		what = "quantize to TYPE (see 'gguf quantize --help')"
	}
	cmd.Flags().StringVar(&q.typ, "type", "", what)
	cmd.Flags().BoolVar(&q.pure, "pure", false, "one type for every quantizable tensor (no per-tensor mix)")
	cmd.Flags().StringArrayVar(&q.tensorTypes, "tensor-type", nil, "REGEX=TYPE for tensors whose name matches anywhere; first match wins; repeatable")
	cmd.Flags().StringVar(&q.outputType, "output-type", "", "type of output.weight (also --output-tensor-type)")
	cmd.Flags().StringVar(&q.embdType, "embd-type", "", "type of token_embd.weight (also --token-embedding-type)")
	cmd.Flags().BoolVar(&q.leaveOutput, "leave-output-tensor", false, "leave output.weight as it is")
	cmd.Flags().StringVar(&q.imatrix, "imatrix", "", "importance matrix file (llama-imatrix GGUF or legacy .dat)")
	cmd.Flags().BoolVar(&q.allowRequantize, "allow-requantize", false, "quantize tensors that are already quantized (dequantize, then quantize)")
	cmd.Flags().StringSliceVar(&q.keep, "keep", nil, "leave tensors of these types as they are (comma-separated)")
	cmd.Flags().IntVarP(&q.threads, "threads", "t", runtime.NumCPU(), "threads converting rows (the bytes do not depend on it)")
}

// options returns the quantization step, or nil when no --type was given.
func (q *quantFlags) options() (*ops.Quantize, error) {
	if q.typ == "" {
		if q.pure || len(q.tensorTypes) > 0 || q.outputType != "" || q.embdType != "" || q.imatrix != "" || q.allowRequantize || q.leaveOutput || len(q.keep) > 0 {
			return nil, usageError("quantization options need --type")
		}
		return nil, nil
	}
	spec := ops.QuantizeSpec{Type: q.typ, Pure: q.pure, TensorTypes: q.tensorTypes, OutputType: q.outputType,
		EmbdType: q.embdType, AllowRequantize: q.allowRequantize, Keep: q.keep, LeaveOutput: q.leaveOutput, ImatrixFile: q.imatrix, Threads: q.threads}
	if q.imatrix != "" {
		m, err := readImatrix(q.imatrix)
		if err != nil {
			return nil, err
		}
		spec.Imatrix = m
	}
	qz, err := spec.Quantize()
	if err != nil {
		return nil, usageError("%v", err)
	}
	return qz, nil
}

func newQuantizeCmd() *cobra.Command {
	var bf buildFlags
	var qf quantFlags
	cmd := &cobra.Command{
		Use:   "quantize IN OUT --type TYPE  (or llama-quantize's IN OUT TYPE [NTHREADS]; --dry-run needs no OUT)",
		Short: "Quantize a model, producing the same bytes as llama.cpp's llama-quantize",
		Long: `Quantizes IN (a path, -, an https:// URL or hf://...) to OUT (a path or -) in one streaming pass,
making the same file llama-quantize makes with the same options: the same per-tensor types (2-D
weights only; norms, biases, 1-D tensors, output_ids and position tensors stay; rows that do not fit
a type's block size fall back to a compatible type), the same bytes (bit-exact ggml quantizers), the
same tensor order and metadata. Memory holds a few rows per thread and two 8 MiB chunks of a tensor,
whatever the model size.

TYPE is llama-quantize's file type, in any case: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q1_0 Q2_0 Q2_K Q2_K_S
Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M
IQ3_XXS IQ3_XS IQ3_S IQ3_M IQ4_NL IQ4_XS TQ1_0 TQ2_0 MXFP4_MOE F16 BF16 F32 (Q3_K, Q4_K and Q5_K
mean the _M mixes), or its number as llama-quantize --help lists it, or a ggml type name that names
no file type (MXFP4 means MXFP4_MOE, NVFP4). IQ2_S is llama-quantize's IQ2_S mix; the mix built on
the ggml type IQ2_S is IQ2_M.`,
		Example: `  gguf quantize stories260K-f32.gguf out.gguf --type Q8_0 --tensor-type ffn_down=F16
  gguf quantize model-BF16.gguf model-Q4_K_S.gguf --type Q4_K_S --imatrix imatrix.gguf
  gguf quantize moon-beam-Q4_K_M.gguf mb-q2.gguf --type Q2_K --tensor-type '_exps=Q2_K' --allow-requantize
  gguf quantize model.gguf --type Q4_0 --dry-run`,
		Args: cobra.RangeArgs(1, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if !bf.dryRun {
					return usageError("missing OUT (a path, or - for stdout; only --dry-run needs none)")
				}
				args = append(args, "")
			}
			if err := qf.positional(cmd, args[2:]); err != nil {
				return err
			}
			q, err := qf.options()
			if err != nil {
				return err
			}
			if q == nil {
				return usageError("missing --type TYPE")
			}
			bf.out = args[1]
			src, err := openSource(cmd, args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			p, rep, err := ops.Plan(planInput(src), ops.Options{Quant: q})
			if err != nil {
				return err
			}
			if bf.dryRun {
				printQuantPlan(stdout, rep.Quant)
				return nil
			}
			return writePlan(cmd, p, rep, bf)
		},
	}
	cmd.Flags().BoolVar(&bf.force, "force", false, "write binary output to a terminal")
	cmd.Flags().BoolVarP(&bf.quiet, "quiet", "q", false, "no progress bar")
	cmd.Flags().BoolVar(&bf.dryRun, "dry-run", false, "print each tensor's old and new type and size, write nothing")
	qf.register(cmd, true)
	return cmd
}

// positional takes llama-quantize's positional TYPE and NTHREADS (after IN
// and OUT), refusing them when --type or -t says the same.
func (q *quantFlags) positional(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if q.typ != "" {
		return usageError("TYPE given twice: as %q and --type %q", args[0], q.typ)
	}
	q.typ = args[0]
	if len(args) == 2 {
		if cmd.Flags().Changed("threads") {
			return usageError("NTHREADS given twice: as %q and --threads", args[1])
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return usageError("NTHREADS %q: want a number of threads, at least 1", args[1])
		}
		q.threads = n
	}
	return nil
}

// printQuantPlan prints the quantization plan: each tensor's old and new
// type and size, and the totals.
func printQuantPlan(w io.Writer, ds []ops.Decision) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\ttype\t\tbytes\t\twhy")
	var from, to int64
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t-> %s\t%d\t-> %d\t%s\n", safetext.Name(d.Name), d.From, d.To, d.FromBytes, d.ToBytes, safetext.Escape(d.Reason))
		from += d.FromBytes
		to += d.ToBytes
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s: %s -> %s of tensor data\n", english.Plural(len(ds), "tensor", ""), humanize.Bytes(uint64(from)), humanize.Bytes(uint64(to)))
}

// printQuantSummary prints, on stderr, why tensors got their types:
// overrides, defaults and fallbacks, one line per distinct decision.
func printQuantSummary(w io.Writer, ds []ops.Decision) {
	type key struct {
		from, to gguf.Type
		why      string
	}
	counts := map[key]int{}
	var order []key
	var from, to int64
	for _, d := range ds {
		k := key{d.From, d.To, d.Reason}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
		from += d.FromBytes
		to += d.ToBytes
	}
	for _, k := range order {
		fmt.Fprintf(w, "gguf: %s %s -> %s: %s\n", english.Plural(counts[k], "tensor", ""), k.from, k.to, k.why)
	}
	fmt.Fprintf(w, "gguf: quantized tensor data %s -> %s\n", humanize.Bytes(uint64(from)), humanize.Bytes(uint64(to)))
}
