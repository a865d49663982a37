package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/dustin/go-humanize/english"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/safetext"
)

func init() { rootCmd.AddCommand(newInfoCmd()) }

func newInfoCmd() *cobra.Command {
	var tensors, metadata, asJSON bool
	var maxElems int
	cmd := &cobra.Command{
		Use:   "info SOURCE",
		Short: "Summarize a GGUF file: model, sizes, and where the bytes go",
		Long: `Reads only the header of SOURCE (a path, - for stdin, an https:// URL or hf://owner/repo/file.gguf)
and prints the architecture, parameter count, file type, context length, vocabulary size,
header size, and the bytes by ggml type and by role (token embedding, output head, attention,
FFN, experts, norms, other).`,
		Example: `  gguf info model.gguf
  gguf info --tensors Qwen3.5-2B-Q4_K_M.gguf | grep output
  gguf info --json hf://unsloth/Qwen3.5-0.8B-GGUF/Qwen3.5-0.8B-Q4_K_M.gguf | jq .bytes_by_role
  cat model.gguf | gguf info -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := openSource(cmd, args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			s := inspect.Summarize(args[0], src.File(), src.Size())
			notePunched(args[0], s)
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printSummary(stdout, s)
			if metadata {
				fmt.Fprintln(stdout)
				printMetadata(stdout, src.File().Metadata, maxElems)
			}
			if tensors {
				fmt.Fprintln(stdout)
				printTensors(stdout, s.Tensors)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&tensors, "tensors", false, "also list every tensor: name, type, shape, offset, bytes")
	cmd.Flags().BoolVar(&metadata, "metadata", false, "also list every metadata key and value")
	cmd.Flags().IntVar(&maxElems, "max-array", 8, "with --metadata, array elements shown before the count of the rest")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print everything as JSON (field names in README)")
	return cmd
}

func printSummary(w io.Writer, s *inspect.Summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	size := "streamed"
	if s.Size >= 0 {
		size = fmt.Sprintf("%s (%d bytes)", humanize.Bytes(uint64(s.Size)), s.Size)
	}
	fmt.Fprintf(tw, "source\t%s\n", safetext.Escape(s.Source))
	fmt.Fprintf(tw, "format\tGGUF v%d, %s, alignment %d\n", s.Version, size, s.Alignment)
	fmt.Fprintf(tw, "header\t%d bytes (%s, %s), data at offset %d, %d bytes\n",
		s.HeaderBytes, english.Plural(int(s.MetadataCount), "key", ""), english.Plural(int(s.TensorCount), "tensor", ""), s.DataOffset, s.DataBytes)
	fmt.Fprintf(tw, "architecture\t%s\n", orDash(safetext.Name(s.Architecture)))
	fmt.Fprintf(tw, "name\t%s\n", orDash(safetext.Name(s.Name)))
	fmt.Fprintf(tw, "parameters\t%s (%s)\n", humanize.SIWithDigits(float64(s.Parameters), 2, ""), humanize.Comma(int64(s.Parameters)))
	if s.FileType != nil {
		fmt.Fprintf(tw, "file type\t%s (%d)\n", s.FileTypeName, *s.FileType)
	}
	if s.ContextLength != nil {
		fmt.Fprintf(tw, "context length\t%d\n", *s.ContextLength)
	}
	if s.VocabSize != nil {
		fmt.Fprintf(tw, "vocab size\t%d\n", *s.VocabSize)
	}
	if s.Layers > 0 {
		fmt.Fprintf(tw, "layers\t%d\n", s.Layers)
	}
	if e := s.Experts; e != nil {
		fmt.Fprintf(tw, "experts\t%s, %s", english.Plural(e.ExpertTensors, "tensor", ""), humanize.Bytes(uint64(e.ExpertBytes)))
		if e.Last {
			fmt.Fprintf(tw, ", last: the non-expert part ends at byte %d (%s)", e.NonExpertEnd, humanize.Bytes(uint64(e.NonExpertEnd)))
		} else {
			fmt.Fprint(tw, ", interleaved with other tensors (gguf build --experts-last moves them after)")
		}
		if e.Punched > 0 {
			fmt.Fprintf(tw, "; %s (%d bytes) punched: the experts read as zeros (gguf unpunch FILE --from CACHE)", humanize.Bytes(uint64(e.Punched)), e.Punched)
		}
		fmt.Fprintln(tw)
		for _, l := range e.Layers {
			fmt.Fprintf(tw, "  layer %d\t%d experts, one expert (%s) = %s (%d bytes)\n", l.Layer, l.Experts,
				safetext.Name(strings.Join(l.Tensors, " + ")), humanize.Bytes(uint64(l.BytesPerExpert)), l.BytesPerExpert)
		}
	}
	printLayouts(tw, s)
	tw.Flush()
	if s.TensorCount == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhere the bytes go")
	printGroups(w, "type", s.ByType)
	fmt.Fprintln(w)
	printGroups(w, "role", s.ByRole)
}

func printGroups(w io.Writer, by string, gs []inspect.Group) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %s\ttensors\tparameters\tbytes\tshare\tbits/weight\t\n", by)
	for _, g := range gs {
		bpw := "-"
		if g.Parameters > 0 {
			bpw = fmt.Sprintf("%.2f", g.BPW)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%.1f%%\t%s\t\n", g.Name, g.Tensors, humanize.Comma(int64(g.Parameters)),
			humanize.Bytes(uint64(g.Bytes)), 100*g.Share, bpw)
	}
	tw.Flush()
}

func printTensors(w io.Writer, ts []inspect.Tensor) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\ttype\tshape\toffset\tbytes")
	for i, t := range ts {
		ti := gguf.TensorInfo{Dims: t.Shape}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\n", i, safetext.Name(t.Name), t.Type, ti.Shape(), t.Offset, t.Bytes)
	}
	tw.Flush()
}

func printMetadata(w io.Writer, md *gguf.Metadata, maxElems int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "key\ttype\tvalue")
	for _, kv := range md.KVs() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", safetext.Name(kv.Key), kv.Value.TypeString(), kv.Value.Format(maxElems))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
