package recipes

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/internal/safetext"
)

// The reports of `gguf recipe plan` and `gguf recipe run`: the JSON ones
// (--json) and the tables of inputs and costs. Names, sources and commits
// come from the recipe and the Hub, untrusted text: the tables escape them
// (safetext), so a name cannot retitle a terminal or fake a row.

// PlanReport is `recipe plan --json`.
type PlanReport struct {
	Recipe         string        `json:"recipe"`
	Name           string        `json:"name"`
	Inputs         []InputReport `json:"inputs"`
	Tensors        []PlanTensor  `json:"tensors"`
	HeaderBytes    int64         `json:"header_bytes"`
	FileBytes      int64         `json:"file_bytes"`
	Costs          []Cost        `json:"costs"`
	ExpectedSHA256 string        `json:"expected_sha256"`
}

// PlanTensor is one output tensor of a PlanReport.
type PlanTensor struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Shape  []uint64 `json:"shape"`
	Offset uint64   `json:"offset"`
	Bytes  int64    `json:"bytes"`
	Source string   `json:"source"`
}

// RunReport is `recipe run --json`.
type RunReport struct {
	Recipe          string        `json:"recipe"`
	Name            string        `json:"name"`
	Output          string        `json:"output"`
	Written         bool          `json:"written"`
	SHA256          string        `json:"sha256"`
	Size            int64         `json:"size"`
	ExpectedSHA256  string        `json:"expected_sha256"`
	Match           bool          `json:"match"`
	FirstDiffTensor string        `json:"first_differing_tensor,omitempty"`
	Error           string        `json:"error,omitempty"`
	Tensors         int           `json:"tensors"`
	Inputs          []InputReport `json:"inputs"`
	Requests        int64         `json:"requests"`
	BytesReceived   int64         `json:"bytes_received"`
	Seconds         float64       `json:"seconds"`
}

// InputReport is one input of a PlanReport or RunReport.
type InputReport struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Commit    string `json:"commit,omitempty"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
	Checked   string `json:"checked"`
	ReadBytes int64  `json:"read_bytes"`
}

// RunReport returns `recipe run --json` for the recipe at path run into
// out: the result rr (nil: none), the inputs as reported and the run's
// error. The caller adds the network counts and the time.
func (r *Recipe) RunReport(path, out string, rr *RunResult, inputs []InputReport, err error) *RunReport {
	rep := &RunReport{Recipe: path, Name: r.Name, Output: out, ExpectedSHA256: r.Output.SHA256, Inputs: inputs}
	if rr != nil {
		rep.SHA256, rep.Size, rep.Tensors = rr.Sums.SHA256, rr.Sums.Size, len(rr.Sums.Tensors)
	}
	var m *Mismatch
	if errors.As(err, &m) {
		rep.FirstDiffTensor = m.Tensor
	}
	if err != nil {
		rep.Error = err.Error()
	}
	rep.Written = err == nil
	rep.Match = err == nil && r.Output.SHA256 != ""
	return rep
}

// PlanReport returns `recipe plan --json` for the recipe at path, planned
// as b, with its costs.
func (res *Resolved) PlanReport(path string, b *Planned, costs []Cost) (*PlanReport, error) {
	layout, err := b.Plan.Layout()
	if err != nil {
		return nil, err
	}
	r := res.Recipe
	rep := &PlanReport{Recipe: path, Name: r.Name, HeaderBytes: layout.HeaderSize, FileBytes: layout.FileSize(),
		Costs: costs, ExpectedSHA256: r.Output.SHA256, Tensors: []PlanTensor{}}
	rep.Inputs = res.InputReports(nil)
	for i, t := range layout.Tensors {
		rep.Tensors = append(rep.Tensors, PlanTensor{Name: t.Name, Type: t.Type.String(), Shape: t.Dims,
			Offset: t.Offset, Bytes: t.Size(), Source: b.Plan.Tensors[i].Src.Describe()})
	}
	return rep, nil
}

// InputReports describes the opened inputs, with the tensor bytes a run
// read from each (nil: none yet).
func (res *Resolved) InputReports(read map[string]int64) []InputReport {
	var out []InputReport
	for _, name := range res.Recipe.InputNames() {
		o := res.Inputs[name]
		out = append(out, InputReport{Name: name, Source: o.Input.Source, Commit: o.Commit, SHA256: o.SHA256,
			Size: o.Size, Checked: o.Checked, ReadBytes: read[name] + o.Spent.Bytes})
	}
	return out
}

// WriteSummary writes the top of `recipe plan`'s text: the recipe's name
// and description, its inputs as resolved, and the head the build cuts.
// The recipe and the Hub's answers are untrusted text: escaped as info
// escapes a model's names, so a name cannot retitle the terminal, clear it
// or fake a row of the tables.
func (res *Resolved) WriteSummary(w io.Writer, b *Planned) {
	fmt.Fprintf(w, "recipe %s: %s\n\n", safetext.Name(res.Recipe.Name), safetext.Escape(res.Recipe.Description))
	res.WriteInputs(w)
	fmt.Fprintln(w)
	if h := b.Report.Head; h != nil {
		fmt.Fprintf(w, "head: %d rows (%d ranked, %d specials, %d padding)\n\n", len(h.IDs), h.Ranked, h.Specials, h.Padding)
	}
}

// WriteInputs writes the table of the inputs as resolved to w.
func (res *Resolved) WriteInputs(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "input\tsource\tcommit\tsha256\tsize\tpin")
	for _, name := range res.Recipe.InputNames() {
		o := res.Inputs[name]
		commit := o.Commit
		if commit == "" {
			commit = "-"
		}
		sum := o.SHA256
		if sum == "" {
			sum = "-"
		}
		pin := "pinned"
		switch {
		case o.Input.SHA256 == "":
			pin = "unpinned"
		case o.SHA256 == "":
			pin = "pinned, " + o.Checked
		default:
			pin += ", " + o.Checked
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", safetext.Name(name), safetext.Escape(o.Input.Source),
			safetext.Name(commit), safetext.Name(sum), o.Size, pin)
	}
	tw.Flush()
}

// WriteCosts writes to w, per input, what opening it cost and what the
// build will fetch, and the totals.
func WriteCosts(w io.Writer, costs []Cost) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "input\topened: requests\tbytes\tbuild reads\tto fetch: requests\tbytes")
	var sr, sb, nb, fr, fb int64
	for _, c := range costs {
		req := "-"
		if c.Counted {
			req = fmt.Sprint(c.Requests)
			fr += int64(c.Requests)
			fb += c.Bytes
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\n", safetext.Name(c.Name), c.SpentRequests, c.SpentBytes, c.Needed, req, c.Bytes)
		sr, sb, nb = sr+c.SpentRequests, sb+c.SpentBytes, nb+c.Needed
	}
	tw.Flush()
	fmt.Fprintf(w, "\nopened: %d requests, %s; the build reads %s of tensor data; remote fetch to come: %d requests, %s (%d bytes)\n",
		sr, humanize.Bytes(uint64(sb)), humanize.Bytes(uint64(nb)), fr, humanize.Bytes(uint64(fb)), fb)
}
