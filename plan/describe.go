package plan

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/dustin/go-humanize/english"

	"github.com/ggufkit/gguf/internal/safetext"
)

// DescribeCounts counts the output tensors and says how they are
// produced: "3 tensors (2 copied, 1 cut)".
func (p *Plan) DescribeCounts() string {
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
	n := english.Plural(len(p.Tensors), "tensor", "")
	if s == "" {
		return n
	}
	return n + " (" + s + ")"
}

func producerKind(pr Producer) string {
	switch pr.(type) {
	case *Copy:
		return "copied"
	case *Rows:
		return "cut"
	case *Bytes:
		return "added"
	}
	return "converted"
}

// WriteTable writes the tensor table and byte totals the plan would
// write (a dry run's output). Names and sources are escaped: they come
// from the input files.
func (p *Plan) WriteTable(w io.Writer) error {
	layout, err := p.Layout()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\ttype\tshape\toffset\tbytes\tsource")
	for i, t := range layout.Tensors {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", i, safetext.Name(t.Name), t.Type, t.Shape(), t.Offset, t.Size(), safetext.Escape(p.Tensors[i].Src.Describe()))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s, %s; header %d bytes, data %d bytes, file %s (%d bytes)\n",
		english.Plural(layout.Metadata.Len(), "key", ""), p.DescribeCounts(), layout.HeaderSize, layout.DataSize,
		humanize.Bytes(uint64(layout.FileSize())), layout.FileSize())
	return nil
}
