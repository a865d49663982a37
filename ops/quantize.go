package ops

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// Quantize is the quantization step of a build. It follows llama-quantize
// so that its output is the same file llama.cpp makes: the same tensor
// types (quant.Rules), the same bytes (quant's bit-exact codecs), the same
// tensor order and the same metadata keys (general.quantization_version,
// general.file_type and, with an importance matrix, quantize.imatrix.*).
type Quantize struct {
	Rules *quant.Rules
	// Threads converting rows (bytes do not depend on it; <1 means 1).
	Threads int
	// ImatrixFile is the importance matrix's file name as given to the
	// command, which llama-quantize records in quantize.imatrix.file when
	// Rules.Imatrix is set.
	ImatrixFile string
}

// truncate127 keeps the first 127 bytes of s, as llama-quantize's string
// metadata overrides do.
func truncate127(s string) string {
	if len(s) > 127 {
		return s[:127]
	}
	return s
}

// Decision is one tensor's quantization, for summaries and --dry-run.
type Decision struct {
	Name       string
	From, To   gguf.Type
	FromBytes  int64
	ToBytes    int64
	Reason     string
	Fallback   bool
	Quantized  bool
	HasImatrix bool
}

// quantVersion is ggml's GGML_QNT_VERSION, which llama-quantize records.
const quantVersion = 2

var layerNum = regexp.MustCompile(`^blk\.(\d+)\.`)

// sortLikeLlamaCpp orders tensors as llama.cpp's model loader iterates them
// (weight_name_comparer): by layer number, tensors outside layers first,
// then by name. llama-quantize writes its output in that order.
func sortLikeLlamaCpp(p *plan.Plan) {
	layer := func(name string) int {
		if m := layerNum.FindStringSubmatch(name); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil {
				return n
			}
		}
		return -1
	}
	slices.SortStableFunc(p.Tensors, func(a, b plan.Tensor) int {
		la, lb := layer(a.Info.Name), layer(b.Info.Name)
		if la != lb {
			return la - lb
		}
		switch {
		case a.Info.Name < b.Info.Name:
			return -1
		case a.Info.Name > b.Info.Name:
			return 1
		}
		return 0
	})
}

// applyQuantize rewrites p's tensors to the types q's rules choose.
func applyQuantize(p *plan.Plan, q *Quantize) ([]Decision, error) {
	ft, err := q.Rules.Target()
	if err != nil {
		return nil, err
	}
	if q.Rules.Imatrix == nil && ft.RequiresImatrix() {
		return nil, fmt.Errorf("--type %s needs an importance matrix (--imatrix FILE): llama-quantize refuses IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS, IQ3_XS and Q2_K_S without one", ft)
	}
	sortLikeLlamaCpp(p)
	// Choose sees the file as it is being built, in the order llama-quantize
	// visits it (its layer-dependent mixes count tensors as they come).
	view, err := p.Layout()
	if err != nil {
		return nil, err
	}
	var out []Decision
	for i := range p.Tensors {
		t := &p.Tensors[i]
		d, err := q.Rules.Choose(view, &view.Tensors[i])
		if err != nil {
			return nil, err // it names the tensor
		}
		dec := Decision{Name: t.Info.Name, From: t.Info.Type, To: d.Type, FromBytes: t.Info.Size(),
			Reason: d.Reason, Fallback: d.Fallback, Quantized: d.Quantize}
		if d.Quantize {
			var w []float32
			if q.Rules.Imatrix != nil {
				if w, err = q.Rules.Imatrix.TensorWeights(&t.Info); err != nil {
					return nil, fmt.Errorf("tensor %q: %w", t.Info.Name, err)
				}
				dec.HasImatrix = w != nil
			}
			tr, err := convert(t, d.Type, w, q.Threads)
			if err != nil {
				return nil, err
			}
			t.Src = tr
			t.Info.Type = d.Type
		}
		dec.ToBytes = t.Info.Size()
		out = append(out, dec)
	}
	// llama-quantize sets these last, which moves them to the end.
	p.Metadata.Delete("general.quantization_version")
	p.Metadata.Set("general.quantization_version", gguf.Uint32(quantVersion))
	p.Metadata.Delete(gguf.KeyFileType)
	p.Metadata.Set(gguf.KeyFileType, gguf.Uint32(ft.ID()))
	if m := q.Rules.Imatrix; m != nil {
		// llama-quantize records the importance matrix it used, in this
		// order, after the file type.
		set := func(key string, v gguf.Value) {
			p.Metadata.Delete(key)
			p.Metadata.Set(key, v)
		}
		set("quantize.imatrix.file", gguf.String(truncate127(q.ImatrixFile)))
		if len(m.Datasets) > 0 {
			set("quantize.imatrix.dataset", gguf.String(truncate127(m.Datasets[0])))
		}
		set("quantize.imatrix.entries_count", gguf.Uint32(uint32(len(m.Names()))))
		if m.ChunkCount > 0 {
			set("quantize.imatrix.chunks_count", gguf.Uint32(uint32(m.ChunkCount)))
		}
	}
	return out, nil
}

// convert wraps t's producer in a transform to type to. An expert tensor's
// importance weights are per expert: rows of expert e use w[e*ne0:(e+1)*ne0].
func convert(t *plan.Tensor, to gguf.Type, w []float32, threads int) (*plan.Transform, error) {
	from := t.Info.Type
	rowLen := int64(t.Info.RowLen())
	out := gguf.TensorInfo{Dims: t.Info.Dims, Type: to}
	outRow := out.RowBytes()
	if outRow == 0 {
		return nil, fmt.Errorf("tensor %q: %d elements per row do not fit %s", t.Info.Name, rowLen, to)
	}
	rowsPerExpert := int64(t.Info.NumRows())
	if len(w) > int(rowLen) && len(t.Info.Dims) >= 2 {
		rowsPerExpert = int64(t.Info.Dims[1])
	}
	// 8 MiB chunks: the transform holds two (one converting, one filling).
	chunk := max(1, min(rowsPerExpert, (8<<20)/max(t.Info.RowBytes(), 1)))
	tr := &plan.Transform{
		Inner: t.Src, InRowBytes: t.Info.RowBytes(), OutRowBytes: outRow, ChunkRows: chunk,
		Note: "quantize " + from.String() + " to " + to.String(),
	}
	tr.Fn = func(dst, src []byte, first int64) error {
		inRow, n := tr.InRowBytes, int64(len(src))/tr.InRowBytes
		for done := int64(0); done < n; {
			row := first + done
			k := min(n-done, rowsPerExpert-row%rowsPerExpert) // stay inside one expert
			var ew []float32
			if w != nil {
				e := row / rowsPerExpert
				ew = w[e*rowLen : (e+1)*rowLen]
			}
			if err := quant.ConvertTensor(dst[done*outRow:(done+k)*outRow], src[done*inRow:(done+k)*inRow], from, to, int(rowLen), ew, threads); err != nil {
				return err
			}
			done += k
		}
		return nil
	}
	return tr, nil
}

// QuantizeSpec is llama-quantize's options as they are spelled (type
// names, REGEX=TYPE rules), shared by the commands and recipes.
type QuantizeSpec struct {
	Type            string   // file type or ggml type name (quant.ParseFileType)
	Pure            bool     // one type for every quantizable tensor
	TensorTypes     []string // REGEX=TYPE, first match wins
	OutputType      string   // type of output.weight ("": the rules')
	EmbdType        string   // type of token_embd.weight ("": the rules')
	AllowRequantize bool
	LeaveOutput     bool     // output.weight left as it is (--leave-output-tensor)
	Keep            []string // ggml types left as they are
	Imatrix         *quant.Imatrix
	ImatrixFile     string // the name recorded in quantize.imatrix.file
	Threads         int
}

// Quantize turns the spec into the quantization step of a build.
func (s QuantizeSpec) Quantize() (*Quantize, error) {
	ft, err := quant.ParseFileType(s.Type)
	if err != nil {
		return nil, fmt.Errorf("--type: %w", err)
	}
	parse := func(what, name string) (gguf.Type, error) {
		t, err := gguf.ParseType(name)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		return t, nil
	}
	r := &quant.Rules{FileType: ft, Pure: s.Pure, AllowRequantize: s.AllowRequantize, LeaveOutput: s.LeaveOutput, Imatrix: s.Imatrix}
	for _, tt := range s.TensorTypes {
		pat, typ, ok := strings.Cut(tt, "=")
		if !ok {
			return nil, fmt.Errorf("--tensor-type %q: want REGEX=TYPE", tt)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("--tensor-type %q: %w", tt, err)
		}
		t, err := parse("--tensor-type", typ)
		if err != nil {
			return nil, err
		}
		r.TensorTypes = append(r.TensorTypes, quant.TensorTypeRule{Regex: re, Type: t})
	}
	for _, o := range []struct {
		what, name string
		dst        **gguf.Type
	}{{"--output-type", s.OutputType, &r.OutputType}, {"--embd-type", s.EmbdType, &r.EmbdType}} {
		if o.name == "" {
			continue
		}
		t, err := parse(o.what, o.name)
		if err != nil {
			return nil, err
		}
		*o.dst = &t
	}
	for _, k := range s.Keep {
		t, err := parse("--keep", k)
		if err != nil {
			return nil, err
		}
		r.Keep = append(r.Keep, t)
	}
	return &Quantize{Rules: r, Threads: max(1, s.Threads), ImatrixFile: s.ImatrixFile}, nil
}
