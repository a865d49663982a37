package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/sink"
)

func init() { rootCmd.AddCommand(newBuildCmd()) }

// buildFlags are the options of `gguf build` shared by commands that write
// a GGUF file.
type buildFlags struct {
	out    string
	force  bool
	quiet  bool
	dryRun bool
}

func (f *buildFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "output file, or - for stdout (required)")
	cmd.Flags().BoolVar(&f.force, "force", false, "write binary output to a terminal")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the resulting tensor table and sizes, write nothing")
}

func newBuildCmd() *cobra.Command {
	var bf buildFlags
	cmd := &cobra.Command{
		Use:   "build SOURCE -o OUT",
		Short: "Rewrite a GGUF file in one streaming pass",
		Long: `Reads SOURCE (a path, - for stdin, an https:// URL or hf://owner/repo/file.gguf) and writes a new
GGUF file in one pass: the header first, with every offset known up front, then the tensor data in
order. With no operations the output is byte-identical to the input. The output is written to a
temporary file next to OUT, synced and renamed only when complete; -o - writes to stdout.`,
		Example: `  gguf build model.gguf -o copy.gguf
  gguf build model.gguf -o - | adb exec-in 'cat > /data/local/tmp/model.gguf'
  cat model.gguf | gguf build - -o copy.gguf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout)")
			}
			src, err := openSource(cmd, args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			p := plan.Identity(planInput(src))
			return writePlan(cmd, p, bf)
		},
	}
	bf.register(cmd)
	return cmd
}

// writePlan executes p into the output named by bf (or prints it with
// --dry-run), then prints a one-line summary on stderr.
func writePlan(cmd *cobra.Command, p *plan.Plan, bf buildFlags) error {
	if bf.dryRun {
		return printPlan(stdout, p)
	}
	out, err := sink.Create(bf.out, bf.force)
	if err != nil {
		return usageError("%v", err)
	}
	defer out.Abort()
	start := time.Now()
	res, err := p.Execute(cmd.Context(), out, plan.Options{Progress: progress(bf.quiet, "build")})
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	var read int64
	for _, n := range res.Read {
		read += n
	}
	d := time.Since(start)
	fmt.Fprintf(stderr, "gguf: wrote %s: %s (%d bytes), %d tensors (%s), read %s, %s, %s\n",
		out.Name(), humanize.Bytes(uint64(res.Written)), res.Written, len(p.Tensors), describeCounts(p),
		humanize.Bytes(uint64(read)), d.Round(time.Millisecond), rate(res.Written, d))
	return nil
}

// describeCounts summarizes how the output tensors are produced.
func describeCounts(p *plan.Plan) string {
	counts := map[string]int{}
	var order []string
	for _, t := range p.Tensors {
		k := producerKind(t.Src)
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	s := ""
	for i, k := range order {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", counts[k], k)
	}
	return s
}

func producerKind(pr plan.Producer) string {
	switch pr.(type) {
	case *plan.Copy:
		return "copied"
	case *plan.Rows:
		return "cut"
	case *plan.Bytes:
		return "added"
	}
	return "converted"
}

// printPlan prints the tensor table and byte totals a build would write.
func printPlan(w io.Writer, p *plan.Plan) error {
	layout, err := p.Layout()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\ttype\tshape\toffset\tbytes\tsource")
	for i, t := range layout.Tensors {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", i, t.Name, t.Type, t.Shape(), t.Offset, t.Size(), p.Tensors[i].Src.Describe())
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d keys, %d tensors (%s); header %d bytes, data %d bytes, file %s (%d bytes)\n",
		layout.Metadata.Len(), len(layout.Tensors), describeCounts(p), layout.HeaderSize, layout.DataSize,
		humanize.Bytes(uint64(layout.FileSize())), layout.FileSize())
	return nil
}
