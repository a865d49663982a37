package ops

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/internal/textline"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/plan"
)

// Add takes tensors from another input.
type Add struct {
	Input   *plan.Input
	Pattern *regexp.Regexp // nil: every tensor
}

// Rename renames one tensor.
type Rename struct{ Old, New string }

// Options are the operations of one build, applied in this order: drop,
// rename, add, the MTP block, head pruning, quantization, experts last,
// layouts, metadata edits.
type Options struct {
	Drops   []*regexp.Regexp
	Renames []Rename
	Adds    []Add
	// Replace lets an added tensor replace one of the same name (in place).
	Replace bool
	// MTP adds a Qwen3.5 checkpoint's MTP block (nil: none).
	MTP *MTP

	// HeadIDs is the ranked id list of a pruned head (nil: keep the head).
	HeadIDs []int32
	Head    headprune.Options

	// Quant quantizes the tensors as llama-quantize would (nil: keep types).
	Quant *Quantize

	ExpertsLast bool

	// ExpertsLayout is "q2lut" (repack the Q2_K experts of an experts-last
	// file), "none" (restore them) or "" (leave them); TernaryLayout is
	// "ter3", "ter2", "ter2s128" (lossy: needs LossyLayout), "none" or "".
	ExpertsLayout, TernaryLayout string
	LossyLayout                  bool

	Deletes []string  // metadata keys to remove
	Sets    []gguf.KV // metadata keys to set (in place if present)
	Align   uint32    // general.alignment (0: unchanged)
	// Force lets Deletes and Sets break keys llama.cpp reads (a required
	// key deleted, a value of another type than llama.cpp's).
	Force bool
}

// Report says what a plan does, for summaries.
type Report struct {
	Dropped, Renamed, Added, Replaced []string
	Head                              *headprune.Choice
	HeadSource                        string
	Recut                             bool
	ExpertTensors                     int
	Quant                             []Decision
	Layouts                           *Layouts
}

// HeadLine describes the head a build cut, for its log ("" when it cut
// none, r nil included): "head pruned to N rows from SOURCE (...)".
func (r *Report) HeadLine() string {
	if r == nil || r.Head == nil {
		return ""
	}
	h, verb := r.Head, "pruned"
	if r.Recut {
		verb = "re-cut"
	}
	return fmt.Sprintf("head %s to %d rows from %s (%d ranked, %d specials, %d padding)",
		verb, len(h.IDs), r.HeadSource, h.Ranked, h.Specials, h.Padding)
}

// Plan builds the plan of opts over the main input in.
func Plan(in *plan.Input, opts Options) (*plan.Plan, *Report, error) {
	p := plan.Identity(in)
	rep := &Report{}
	for _, re := range opts.Drops {
		n := len(p.Tensors)
		p.Tensors = slices.DeleteFunc(p.Tensors, func(t plan.Tensor) bool {
			if re.MatchString(t.Info.Name) {
				rep.Dropped = append(rep.Dropped, t.Info.Name)
				return true
			}
			return false
		})
		if len(p.Tensors) == n {
			return nil, nil, fmt.Errorf("--drop %q matches no tensor", re)
		}
	}
	for _, rn := range opts.Renames {
		i := p.Index(rn.Old)
		if i < 0 {
			return nil, nil, fmt.Errorf("--rename: no tensor %q", rn.Old)
		}
		if p.Index(rn.New) >= 0 {
			return nil, nil, fmt.Errorf("--rename: tensor %q already exists", rn.New)
		}
		p.Tensors[i].Info.Name = rn.New
		rep.Renamed = append(rep.Renamed, rn.Old+"="+rn.New)
	}
	for _, a := range opts.Adds {
		matched := 0
		for i := range a.Input.File.Tensors {
			t := a.Input.File.Tensors[i]
			if a.Pattern != nil && !a.Pattern.MatchString(t.Name) {
				continue
			}
			matched++
			nt := plan.Tensor{Info: t, Src: &plan.Copy{In: a.Input, Index: i}}
			if j := p.Index(t.Name); j >= 0 {
				if !opts.Replace {
					return nil, nil, fmt.Errorf("--add %s: tensor %q is already in the model (use --replace to replace it)", a.Input.Name, t.Name)
				}
				p.Tensors[j] = nt
				rep.Replaced = append(rep.Replaced, t.Name)
				continue
			}
			p.Tensors = append(p.Tensors, nt)
			rep.Added = append(rep.Added, t.Name)
		}
		if matched == 0 {
			return nil, nil, fmt.Errorf("--add %s: no tensor matches %v", a.Input.Name, a.Pattern)
		}
	}
	if opts.MTP != nil {
		added, err := applyMTP(p, opts.MTP)
		if err != nil {
			return nil, nil, err
		}
		rep.Added = append(rep.Added, added...)
	}
	if opts.HeadIDs != nil || opts.Quant != nil {
		// a file of the seeds' q2lut tool: its experts are no Q2_K to requantize
		if _, err := layout.Entries(p.Metadata); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	if hasLayouts(p) && (opts.HeadIDs != nil || opts.Quant != nil) {
		return nil, nil, fmt.Errorf("%s has repacked tensors (%s): restore them first (gguf layout --experts none --ternary none)", in.Name, layout.KeyTensors)
	}
	if opts.HeadIDs != nil {
		f := in.File
		vocab := headprune.VocabSize(f)
		c, err := headprune.Choose(opts.HeadIDs, vocab, headprune.Specials(f.Metadata, vocab), opts.Head)
		if err != nil {
			return nil, nil, err
		}
		readIDs := func() ([]int32, error) {
			b, err := tensorBytes(in, headprune.IDsTensor)
			if err != nil {
				return nil, err
			}
			return headprune.DecodeIDs(b)
		}
		if err := headprune.Plan(p, in, c, readIDs); err != nil {
			return nil, nil, err
		}
		rep.Head = c
		rep.HeadSource = p.Metadata.String(headprune.KeySource)
		_, rep.Recut = f.Tensor(headprune.IDsTensor)
	}
	if opts.Quant != nil {
		d, err := applyQuantize(p, opts.Quant)
		if err != nil {
			return nil, nil, err
		}
		rep.Quant = d
	}
	if opts.ExpertsLast {
		rep.ExpertTensors = experts.Last(p)
		if rep.ExpertTensors == 0 {
			return nil, nil, fmt.Errorf("--experts-last: the model has no expert tensors (*_exps)")
		}
	}
	if opts.ExpertsLayout != "" || opts.TernaryLayout != "" {
		l, err := applyLayouts(p, opts)
		if err != nil {
			return nil, nil, err
		}
		rep.Layouts = l
	}
	for _, k := range opts.Deletes {
		if !opts.Force {
			if err := checkDelete(p.Metadata.Architecture(), k); err != nil {
				return nil, nil, err
			}
		}
		if !p.Metadata.Delete(k) {
			return nil, nil, fmt.Errorf("--del: no metadata key %q", k)
		}
	}
	for _, kv := range opts.Sets {
		if !opts.Force {
			if err := checkSet(p.Metadata.Architecture(), kv); err != nil {
				return nil, nil, err
			}
		}
		// The alignment's bound holds even when forced: --force is about
		// what llama.cpp loads, the bound about the zeros written.
		if a, ok := kv.Value.Interface().(uint32); ok && kv.Key == gguf.KeyAlignment {
			if err := gguf.CheckAlignment(uint64(a)); err != nil {
				return nil, nil, fmt.Errorf("--set %s: %w", gguf.KeyAlignment, err)
			}
		}
		p.Metadata.Set(kv.Key, kv.Value)
	}
	if opts.Align != 0 {
		if err := gguf.CheckAlignment(uint64(opts.Align)); err != nil {
			return nil, nil, fmt.Errorf("--align: %w", err)
		}
		p.Metadata.Set(gguf.KeyAlignment, gguf.Uint32(opts.Align))
	}
	return p, rep, nil
}

// tensorBytes reads a small tensor of a random-access input.
func tensorBytes(in *plan.Input, name string) ([]byte, error) {
	i := in.File.TensorIndex(name)
	if i < 0 {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	if in.ReaderAt == nil {
		return nil, fmt.Errorf("%s: re-cutting a head needs a file, not a stream (it reads %s first)", in.Name, name)
	}
	r := in.TensorRange(i)
	b := make([]byte, r.Len)
	if _, err := in.ReaderAt.ReadAt(b, r.Off); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return b, nil
}

// ParseSet parses a --set argument, KEY=TYPE:VALUE. TYPE is a GGUF value
// type (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str) or arr[TYPE]. An
// array's VALUE is @FILE (one element per line) or a comma-separated list;
// a string's VALUE may be @FILE (the file's whole content). A file is read
// up to MaxSetFileBytes and MaxSetFileLines; past either the value is
// refused (reading /dev/urandom ends with an error, not out of memory).
func ParseSet(spec string) (gguf.KV, error) {
	key, rest, ok := strings.Cut(spec, "=")
	typ, val, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || key == "" {
		return gguf.KV{}, fmt.Errorf("--set %q: want KEY=TYPE:VALUE, e.g. general.name=str:my-model or llama.context_length=u32:512", spec)
	}
	if elem, isArr := strings.CutPrefix(typ, "arr["); isArr {
		et, err := gguf.ParseValueType(strings.TrimSuffix(elem, "]"))
		if err != nil || !strings.HasSuffix(elem, "]") || et == gguf.TypeArray {
			return gguf.KV{}, fmt.Errorf("--set %q: bad array type %q (want arr[TYPE])", spec, typ)
		}
		var items []string
		if path, isFile := strings.CutPrefix(val, "@"); isFile {
			lines, err := readLines(path)
			if err != nil {
				return gguf.KV{}, fmt.Errorf("--set %s: %w", key, err)
			}
			items = lines
		} else if val != "" {
			items = strings.Split(val, ",")
		}
		v, err := arrayOf(et, items)
		if err != nil {
			return gguf.KV{}, fmt.Errorf("--set %s: %w", key, err)
		}
		return gguf.KV{Key: key, Value: v}, nil
	}
	t, err := gguf.ParseValueType(typ)
	if err != nil || t == gguf.TypeArray {
		return gguf.KV{}, fmt.Errorf("--set %q: unknown type %q", spec, typ)
	}
	if path, isFile := strings.CutPrefix(val, "@"); isFile && t == gguf.TypeString {
		b, err := readSetFile(path)
		if err != nil {
			return gguf.KV{}, fmt.Errorf("--set %s: %w", key, err)
		}
		val = string(b)
	}
	v, err := gguf.ParseValue(t, val)
	if err != nil {
		return gguf.KV{}, fmt.Errorf("--set %s: %w", key, err)
	}
	return gguf.KV{Key: key, Value: v}, nil
}

// The caps on a --set VALUE read from @FILE: far above the largest
// tokenizer arrays (a few hundred thousand tokens or merges, a few MB), far
// below what would exhaust a 1-2 GB device.
const (
	MaxSetFileBytes = 64 << 20
	MaxSetFileLines = 4 << 20
)

// readSetFile reads a whole @FILE of at most MaxSetFileBytes.
func readSetFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSetFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSetFileBytes {
		return nil, fmt.Errorf("%s: larger than the %d MiB a value read from a file may have", path, MaxSetFileBytes>>20)
	}
	return b, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: MaxSetFileBytes + 1}
	lines, err := scanLines(lr)
	if err == nil && lr.N == 0 {
		err = fmt.Errorf("larger than the %d MiB a value read from a file may have", MaxSetFileBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lines, nil
}

// scanLines splits r into lines, refusing more than MaxSetFileLines.
func scanLines(r io.Reader) ([]string, error) {
	sc := textline.NewScanner(r, 16<<20)
	var out []string
	for sc.Scan() {
		if len(out) == MaxSetFileLines {
			return nil, fmt.Errorf("more than the %d lines an array read from a file may have", MaxSetFileLines)
		}
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// arrayOf parses items as an array of type et.
func arrayOf(et gguf.ValueType, items []string) (gguf.Value, error) {
	if et == gguf.TypeString {
		return gguf.Array(items)
	}
	vals := make([]gguf.Value, len(items))
	for i, s := range items {
		v, err := gguf.ParseValue(et, strings.TrimSpace(s))
		if err != nil {
			return gguf.Value{}, fmt.Errorf("element %d: %w", i, err)
		}
		vals[i] = v
	}
	return gguf.ArrayOfScalars(et, vals)
}
