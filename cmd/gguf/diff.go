package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/safetext"
	"github.com/ggufkit/gguf/source"
)

func init() { rootCmd.AddCommand(newDiffCmd()) }

func newDiffCmd() *cobra.Command {
	var asJSON, noData, numeric bool
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two GGUF files: metadata, tensor table and tensor data",
		Long: `Compares the metadata (keys added, removed, changed), the tensor table (tensors added, removed;
type, shape and offset changes) and the data of every tensor both files have (sha256 per tensor).
Exit status: 0 when metadata and tensors are the same, 1 when they differ, 2 on error.`,
		Example: `  gguf diff original.gguf pruned.gguf
  # the tensors with the largest RMSE last (columns: name, type -> type, max abs error, RMSE, RMS)
  gguf diff --numeric model-F32.gguf model-Q4_K.gguf | grep -- ' -> ' | sort -k6 -g | tail
  gguf diff --json a.gguf hf://owner/repo/a.gguf | jq .tensors_changed`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openSource(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			b, err := openSource(cmd, args[1])
			if err != nil {
				return err
			}
			defer b.Close()
			var da, db inspect.TensorData
			if !noData {
				da, db = tensorData(a), tensorData(b)
			}
			d, err := inspect.Compare(args[0], a.File(), da, args[1], b.File(), db)
			if err != nil {
				return err
			}
			if numeric {
				if a.Reader == nil || b.Reader == nil {
					return usageError("--numeric needs files or remote sources, not stdin")
				}
				if d.Numeric, err = inspect.CompareNumeric(a.File(), tensorData(a), b.File(), tensorData(b)); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(d); err != nil {
					return err
				}
			} else {
				printDiff(stdout, d)
			}
			if !d.Same {
				return &exitError{code: exitFound}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the differences as JSON")
	cmd.Flags().BoolVar(&noData, "no-data", false, "compare headers only, do not read tensor data")
	cmd.Flags().BoolVar(&numeric, "numeric", false, "also dequantize both files' tensors and report max abs error and RMSE per tensor")
	return cmd
}

// tensorData serves tensor bytes from a random-access or a stream source.
func tensorData(s *source.Source) inspect.TensorData {
	if s.Reader != nil {
		return func(i int) (io.Reader, error) { return s.Reader.TensorData(i), nil }
	}
	return func(i int) (io.Reader, error) {
		for {
			j, r, err := s.Stream.Next()
			if err != nil {
				return nil, err
			}
			if j == i {
				return r, nil
			}
		}
	}
}

func printDiff(w io.Writer, d *inspect.Diff) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", safetext.Escape(d.A), safetext.Escape(d.B))
	for _, h := range d.Header {
		fmt.Fprintf(w, "~ header: %s\n", h)
	}
	for _, kv := range d.KeysRemoved {
		fmt.Fprintf(w, "- key %s (%s)\n", safetext.Name(kv.Key), kv.Type)
	}
	for _, kv := range d.KeysAdded {
		fmt.Fprintf(w, "+ key %s (%s)\n", safetext.Name(kv.Key), kv.Type)
	}
	for _, c := range d.KeysChanged {
		fmt.Fprintf(w, "~ key %s: %s %s -> %s %s\n", safetext.Name(c.Key), c.AType, short(c.A), c.BType, short(c.B))
	}
	for _, t := range d.TensorsRemoved {
		fmt.Fprintf(w, "- tensor %s %s %v\n", safetext.Name(t.Name), t.Type, t.Shape)
	}
	for _, t := range d.TensorsAdded {
		fmt.Fprintf(w, "+ tensor %s %s %v\n", safetext.Name(t.Name), t.Type, t.Shape)
	}
	for _, c := range d.TensorsChanged {
		var parts []string
		for _, what := range c.Changes {
			switch what {
			case "type":
				parts = append(parts, fmt.Sprintf("type %s -> %s", c.A.Type, c.B.Type))
			case "shape":
				parts = append(parts, fmt.Sprintf("shape %v -> %v", c.A.Shape, c.B.Shape))
			case "offset":
				parts = append(parts, fmt.Sprintf("offset %d -> %d", c.A.Offset, c.B.Offset))
			case "data":
				if c.ASHA256 != "" {
					parts = append(parts, fmt.Sprintf("data sha256 %.12s -> %.12s", c.ASHA256, c.BSHA256))
				} else {
					parts = append(parts, fmt.Sprintf("data %d -> %d bytes", c.A.Bytes, c.B.Bytes))
				}
			}
		}
		fmt.Fprintf(w, "~ tensor %s: %s\n", safetext.Name(c.Name), strings.Join(parts, ", "))
	}
	if len(d.Numeric) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "numeric\ttypes\tmax abs error\tRMSE\tRMS of a")
		for _, n := range d.Numeric {
			fmt.Fprintf(tw, "%s\t%s -> %s\t%.6g\t%.6g\t%.6g\n", safetext.Name(n.Name), n.AType, n.BType, n.MaxAbs, n.RMSE, n.RMS)
		}
		tw.Flush()
	}
	if d.KeyOrderDiffers {
		fmt.Fprintln(w, "note: metadata keys are in a different order")
	}
	if d.TensorOrderDiffers {
		fmt.Fprintln(w, "note: tensors are in a different order")
	}
	if d.Same {
		what := "metadata, tensor table and tensor data"
		if !d.DataCompared {
			what = "metadata and tensor table (data not compared)"
		}
		fmt.Fprintf(w, "same %s\n", what)
	}
}

// short formats a JSON-ready value compactly for the text report.
func short(v any) string {
	b, _ := json.Marshal(v)
	s := []rune(string(b))
	if len(s) > 80 {
		return string(s[:77]) + "..."
	}
	return string(s)
}
