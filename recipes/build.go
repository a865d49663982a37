package recipes

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/vocabselect"
)

// Planned is a recipe's build planned: the options `gguf build` would be
// given, the plan they make and the report of what it does.
type Planned struct {
	// Options are a build's; Assemble an assemble's.
	Options  ops.Options
	Assemble ops.AssembleOptions
	Plan     *plan.Plan
	Report   *ops.Report
	// Selection is the head's vocab select result, when the head is
	// selected from corpora.
	Selection *vocabselect.Selection
}

// Plan turns the recipe's build into ops.Options over the opened inputs and
// plans it; no tensor byte is read.
func (res *Resolved) Plan(ctx context.Context) (*Planned, error) {
	r := res.Recipe
	if r.Assemble != nil {
		return res.planAssemble()
	}
	b := &r.Build
	fail := func(at At, err error) error { return &Error{File: r.Path, At: at, Msg: err.Error()} }
	main := res.Inputs[b.From].PlanInput()
	opts := ops.Options{Replace: b.Replace, ExpertsLast: b.ExpertsLast, Align: b.Align, Deletes: b.Delete,
		ExpertsLayout: b.ExpertsLayout, TernaryLayout: b.TernaryLayout, LossyLayout: b.LossyLayout}
	for _, d := range b.Drop {
		re, err := regexp.Compile(d)
		if err != nil {
			return nil, fail(b.At, fmt.Errorf("build.drop %q: %w", d, err))
		}
		opts.Drops = append(opts.Drops, re)
	}
	for _, rn := range b.Rename {
		old, nw, ok := strings.Cut(rn, "=")
		if !ok || old == "" || nw == "" {
			return nil, fail(b.At, fmt.Errorf("build.rename %q: want OLD=NEW", rn))
		}
		opts.Renames = append(opts.Renames, ops.Rename{Old: old, New: nw})
	}
	for _, a := range b.Add {
		add := ops.Add{Input: res.Inputs[a.From].PlanInput()}
		if a.Tensors != "" {
			re, err := regexp.Compile(a.Tensors)
			if err != nil {
				return nil, fail(a.At, fmt.Errorf("build.add tensors %q: %w", a.Tensors, err))
			}
			add.Pattern = re
		}
		opts.Adds = append(opts.Adds, add)
	}
	if m := b.AddMTP; m != nil {
		mtp := &ops.MTP{Threads: res.opts.Threads}
		var err error
		if mtp.Type, mtp.Auto, err = ops.ParseMTPType(cmp.Or(m.Outtype, "auto")); err != nil {
			return nil, fail(m.At, fmt.Errorf("build.add_mtp.outtype %w", err))
		}
		for _, name := range m.From {
			in := res.Inputs[name]
			mtp.Sources = append(mtp.Sources, ops.MTPSource{Input: in.PlanInput(), File: in.Safetensors})
		}
		opts.MTP = mtp
	}
	for _, s := range b.Set {
		kv, err := ops.ParseSet(s)
		if err != nil {
			return nil, fail(b.At, err)
		}
		opts.Sets = append(opts.Sets, kv)
	}
	out := &Planned{}
	if h := b.Head; h != nil {
		vocab := headprune.VocabSize(main.File)
		var ids []int32
		if h.IDs != "" {
			var err error
			if ids, err = headprune.ReadIDs(bytes.NewReader(res.Inputs[h.IDs].Data), vocab); err != nil {
				return nil, fail(h.At, fmt.Errorf("build.head.ids %s (%s): %w", h.IDs, res.Inputs[h.IDs].Input.Source, err))
			}
		} else {
			sel, err := res.selectHead(ctx, main, h.Select)
			if err != nil {
				return nil, fail(h.Select.At, err)
			}
			ids, out.Selection = sel.IDs, sel
		}
		opts.HeadIDs = ids
		opts.Head = headprune.Options{Rows: h.Rows, Pad: 8, NoSpecials: h.NoSpecials}
		if h.Pad != nil {
			opts.Head.Pad = *h.Pad
		}
	}
	if q := b.Quantize; q != nil {
		spec := ops.QuantizeSpec{Type: q.Type, Pure: q.Pure, TensorTypes: q.TensorTypes, OutputType: q.OutputType,
			EmbdType: q.EmbdType, AllowRequantize: q.AllowRequantize, Keep: q.Keep, Threads: res.opts.Threads}
		if q.Imatrix != "" {
			m, name, err := res.imatrix("build.quantize.imatrix", q.Imatrix)
			if err != nil {
				return nil, fail(q.At, err)
			}
			spec.Imatrix, spec.ImatrixFile = m, name
		}
		qz, err := spec.Quantize()
		if err != nil {
			return nil, fail(q.At, err)
		}
		opts.Quant = qz
	}
	p, rep, err := ops.Plan(main, opts)
	if err != nil {
		return nil, fail(b.At, err)
	}
	out.Options, out.Plan, out.Report = opts, p, rep
	return out, nil
}

// planAssemble turns the recipe's assemble into the ops.AssembleOptions of
// `gguf assemble` over the opened inputs and plans it; no tensor byte is
// read.
func (res *Resolved) planAssemble() (*Planned, error) {
	r := res.Recipe
	a := r.Assemble
	fail := func(err error) error { return &Error{File: r.Path, At: a.At, Msg: err.Error()} }
	opts := ops.AssembleOptions{ExpertsLayout: a.ExpertsLayout, Threads: res.opts.Threads, ExpertShapes: engine.ExpertShapes}
	if a.ExpertsType != "" {
		t, err := gguf.ParseType(a.ExpertsType)
		if err != nil {
			return nil, fail(fmt.Errorf("assemble.experts_type: %w", err))
		}
		opts.ExpertsType = t
	}
	if a.Imatrix != "" {
		m, _, err := res.imatrix("assemble.imatrix", a.Imatrix)
		if err != nil {
			return nil, fail(err)
		}
		opts.Imatrix = m
	}
	p, rep, err := ops.Assemble(res.Inputs[a.Base].PlanInput(), res.Inputs[a.Experts].PlanInput(), opts)
	if err != nil {
		return nil, fail(err)
	}
	return &Planned{Assemble: opts, Plan: p, Report: rep}, nil
}

// imatrix decodes the importance matrix input name and returns it with the
// file name llama-quantize records for it.
func (res *Resolved) imatrix(what, name string) (*quant.Imatrix, string, error) {
	in := res.Inputs[name]
	m, err := quant.ReadImatrix(bytes.NewReader(in.Data), int64(len(in.Data)))
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", what, name, err)
	}
	return m, baseName(in.Input.Source), nil
}

// selectHead is `gguf vocab select` with the build's input as the
// tokenizer and the recipe's corpora (texts or counts files).
func (res *Resolved) selectHead(ctx context.Context, main *plan.Input, s *Select) (*vocabselect.Selection, error) {
	tok, err := vocabselect.NewTokenizer(main.File.Metadata)
	if err != nil {
		return nil, fmt.Errorf("build.head.select: %w", err)
	}
	var corpora []vocabselect.Corpus
	for _, c := range s.Corpora {
		data := res.Inputs[c.Input].Data
		var counts *vocabselect.Counts
		if vocabselect.IsCountsFile(data) {
			counts, err = vocabselect.ReadCounts(bytes.NewReader(data), tok.NumTokens())
		} else {
			counts, err = tok.Count(ctx, bytes.NewReader(data), vocabselect.CountOptions{Workers: max(1, res.opts.Threads)})
		}
		if err != nil {
			return nil, fmt.Errorf("build.head.select corpus %s (%s): %w", c.Input, res.Inputs[c.Input].Input.Source, err)
		}
		corpora = append(corpora, vocabselect.Corpus{Name: c.Input, Counts: counts, Budget: c.Budget})
	}
	opts := vocabselect.SelectOptions{Rows: s.Rows, KeepBelow: s.KeepBelow, Pad: 8}
	if s.Pad != nil {
		opts.Pad = *s.Pad
	}
	sel, err := vocabselect.Select(tok, corpora, opts)
	if err != nil {
		return nil, fmt.Errorf("build.head.select: %w", err)
	}
	return sel, nil
}
