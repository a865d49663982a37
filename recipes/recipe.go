package recipes

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/ops"
)

// Recipe is a decoded recipe file.
//
//	name: smollm2-360m-q4k
//	inputs:
//	  model: {source: hf://owner/repo@<40-hex commit>/file.gguf, sha256: <64 hex>, size: 123}
//	  ids:   {source: head-ids.txt, sha256: ..., size: ...}   # a path, relative to the recipe
//	build:
//	  from: model
//	  head: {ids: ids, rows: 65668}
//	  quantize: {type: Q4_K, pure: true, imatrix: imatrix}
//	# or, instead of build, gguf assemble's options over model inputs:
//	# assemble: {base: model, experts: other, experts_type: Q2_K, imatrix: imatrix, experts_layout: q2lut}
//	output:
//	  name: smollm2-360m-q4k.gguf
//	  sha256: ...
//	  size: ...
//	  tensors: [{name: token_embd.weight, sha256: ...}, ...]
type Recipe struct {
	// Name names the recipe in reports.
	Name string `yaml:"name"`
	// Description says what the build is for.
	Description string `yaml:"description"`
	// Inputs are the files the build reads, by the names the build uses.
	Inputs map[string]*Input `yaml:"inputs"`
	// Build is the one build the recipe makes, unless it is an Assemble.
	Build Build `yaml:"build"`
	// Assemble is the recipe's make when it joins two models (a recipe
	// has either build or assemble).
	Assemble *Assemble `yaml:"assemble"`
	// Output is what the build must produce.
	Output Output `yaml:"output"`

	// Path is the recipe file; relative input paths are relative to its
	// directory.
	Path string `yaml:"-"`
	doc  *yaml.Node
}

// At is where a value starts in the recipe file.
type At struct{ Line, Col int }

func (a At) String() string { return fmt.Sprintf("line %d col %d", a.Line, a.Col) }

// Input is one pinned input. Source is hf://[datasets/]owner/repo@REV/path,
// an https URL or a path relative to the recipe. A recipe ready to run has
// REV a 40-hex commit and SHA256 and Size set (see Lock).
type Input struct {
	At     `yaml:"-"`
	Source string `yaml:"source"`
	SHA256 string `yaml:"sha256"`
	Size   *int64 `yaml:"size"`
}

// Build mirrors the operations of `gguf build`, applied in its order: drop,
// rename, add, the MTP block, head, quantize, experts last, layouts,
// metadata.
type Build struct {
	At `yaml:"-"`
	// From is the input the build rewrites.
	From string `yaml:"from"`
	// Drop removes tensors whose names match (--drop).
	Drop []string `yaml:"drop"`
	// Rename is OLD=NEW tensor renames (--rename).
	Rename []string `yaml:"rename"`
	// Add takes tensors from other inputs (--add SRC.gguf:REGEX).
	Add []Add `yaml:"add"`
	// Replace lets added tensors replace those of the same name (--replace).
	Replace bool `yaml:"replace"`
	// AddMTP adds a Qwen3.5 checkpoint's MTP block (--add-mtp).
	AddMTP *AddMTP `yaml:"add_mtp"`
	// Head prunes the output head (--head-ids and its options).
	Head *Head `yaml:"head"`
	// Quantize is llama-quantize's step (--type and its options).
	Quantize *Quantize `yaml:"quantize"`
	// ExpertsLast moves expert tensors after the others (--experts-last).
	ExpertsLast bool `yaml:"experts_last"`
	// ExpertsLayout repacks the Q2_K experts of an experts-last file
	// (--experts-layout q2lut, or none to restore them).
	ExpertsLayout string `yaml:"experts_layout"`
	// TernaryLayout repacks ternary tensors (--ternary-layout ter3, ter2,
	// ter2s128, or none); LossyLayout allows the lossy one (--lossy).
	TernaryLayout string `yaml:"ternary_layout"`
	LossyLayout   bool   `yaml:"lossy_layout"`
	// Delete removes metadata keys (--del).
	Delete []string `yaml:"delete"`
	// Set is KEY=TYPE:VALUE metadata (--set; values inline, not @FILE).
	Set []string `yaml:"set"`
	// Align sets general.alignment (--align).
	Align uint32 `yaml:"align"`
}

// Assemble mirrors `gguf assemble`: the metadata and non-expert tensors of
// input Base, the expert tensors of input Experts after them, converted to
// ExpertsType (--experts-type, weighted by the input Imatrix: --imatrix)
// and repacked (--experts-layout q2lut).
type Assemble struct {
	At            `yaml:"-"`
	Base          string `yaml:"base"`
	Experts       string `yaml:"experts"`
	ExpertsType   string `yaml:"experts_type"`
	ExpertsLayout string `yaml:"experts_layout"`
	Imatrix       string `yaml:"imatrix"`
}

// Add is one --add: the tensors of input From whose names match Tensors
// (all when empty).
type Add struct {
	At      `yaml:"-"`
	From    string `yaml:"from"`
	Tensors string `yaml:"tensors"`
}

// AddMTP is --add-mtp: the mtp.* tensors of the safetensors inputs From
// (a checkpoint's shards holding them, each pinned as its own input),
// written as Outtype (--mtp-outtype: f32, f16, bf16, q8_0 or auto, the
// default).
type AddMTP struct {
	At      `yaml:"-"`
	From    []string `yaml:"from"`
	Outtype string   `yaml:"outtype"`
}

// Head is the pruned head: its ranked ids come from the input IDs (one id
// per line, as `gguf vocab select` writes) or from Select.
type Head struct {
	At         `yaml:"-"`
	IDs        string  `yaml:"ids"`
	Select     *Select `yaml:"select"`
	Rows       int     `yaml:"rows"`
	Pad        *int    `yaml:"pad"`
	NoSpecials bool    `yaml:"no_specials"`
}

// Select is `gguf vocab select` over pinned corpora, with the build's
// input as the tokenizer.
type Select struct {
	At        `yaml:"-"`
	Corpora   []Corpus `yaml:"corpora"`
	Rows      int      `yaml:"rows"`
	KeepBelow int32    `yaml:"keep_below"`
	Pad       *int     `yaml:"pad"`
}

// Corpus is one --corpus NAME=FILE[:BUDGET]; the input's name is the
// corpus's name. The input is a text or a `vocab count` counts file.
type Corpus struct {
	At     `yaml:"-"`
	Input  string `yaml:"input"`
	Budget int    `yaml:"budget"`
}

// Quantize is llama-quantize's options; Imatrix names an input.
type Quantize struct {
	At              `yaml:"-"`
	Type            string   `yaml:"type"`
	Pure            bool     `yaml:"pure"`
	TensorTypes     []string `yaml:"tensor_types"`
	OutputType      string   `yaml:"output_type"`
	EmbdType        string   `yaml:"embd_type"`
	Imatrix         string   `yaml:"imatrix"`
	AllowRequantize bool     `yaml:"allow_requantize"`
	Keep            []string `yaml:"keep"`
}

// Output is the file the build must make.
type Output struct {
	At `yaml:"-"`
	// Name is the output file name `recipe run` writes by default.
	Name   string `yaml:"name"`
	SHA256 string `yaml:"sha256"`
	Size   *int64 `yaml:"size"`
	// Tensors, when given, are the sha256 of each tensor's data in file
	// order: a difference then names the first tensor that differs.
	Tensors []TensorSum `yaml:"tensors"`
}

// TensorSum is one tensor's expected data sha256.
type TensorSum struct {
	At     `yaml:"-"`
	Name   string `yaml:"name"`
	SHA256 string `yaml:"sha256"`
}

// Error is a problem in a recipe file, with its position.
type Error struct {
	File string
	At   At
	Msg  string
}

func (e *Error) Error() string {
	if e.At.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.At.Line, e.At.Col, e.Msg)
}

// Load reads and validates a recipe file.
func Load(path string) (*Recipe, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse decodes and validates a recipe; path names it in errors and
// anchors its relative input paths.
func Parse(path string, data []byte) (*Recipe, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{File: path, Msg: "empty recipe"}
	}
	r := &Recipe{Path: path, doc: &doc}
	d := decoder{file: path}
	if err := d.decode(doc.Content[0], reflect.ValueOf(r).Elem(), ""); err != nil {
		return nil, err
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// decoder decodes a node tree into the schema's structs strictly: every
// key must be a field, every value of the field's kind.
type decoder struct{ file string }

func (d decoder) errf(n *yaml.Node, format string, args ...any) error {
	return &Error{File: d.file, At: At{n.Line, n.Column}, Msg: fmt.Sprintf(format, args...)}
}

var atType = reflect.TypeFor[At]()

func (d decoder) decode(n *yaml.Node, v reflect.Value, field string) error {
	if n.Kind == yaml.AliasNode {
		return d.errf(n, "%s: aliases are not allowed in recipes", field)
	}
	if v.Kind() == reflect.Pointer {
		if n.Tag == "!!null" {
			return d.errf(n, "%s: empty value", field)
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, p.Elem(), field); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	kind := map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list", yaml.ScalarNode: "a value"}[n.Kind]
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return d.errf(n, "%s: want a mapping, got %s", field, kind)
		}
		fields := map[string]int{}
		var names []string
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).Type == atType {
				v.Field(i).Set(reflect.ValueOf(At{n.Line, n.Column}))
			}
			if tag := t.Field(i).Tag.Get("yaml"); tag != "" && tag != "-" {
				fields[tag] = i
				names = append(names, tag)
			}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			fi, ok := fields[k.Value]
			if !ok {
				return d.errf(k, "unknown field %q%s (want one of %s)", k.Value, in(field), strings.Join(names, ", "))
			}
			if seen[k.Value] {
				return d.errf(k, "field %q given twice%s", k.Value, in(field))
			}
			seen[k.Value] = true
			if err := d.decode(val, v.Field(fi), join(field, k.Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.errf(n, "%s: want a mapping, got %s", field, kind)
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "" {
				return d.errf(k, "%s: want a name", field)
			}
			if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
				return d.errf(k, "%s: %q given twice", field, k.Value)
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if err := d.decode(val, e, join(field, k.Value)); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		v.Set(m)
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errf(n, "%s: want a list, got %s", field, kind)
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			if err := d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errf(n, "%s: want a single value, got %s", field, kind)
	}
	switch v.Kind() {
	case reflect.String:
		// A number is taken as written (an all-digit sha256 is still a
		// sha256); true, false and null are not strings.
		if n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float" {
			return d.errf(n, "%s: want a string, got %s (quote it)", field, n.Value)
		}
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if n.Tag != "!!bool" || err != nil {
			return d.errf(n, "%s: want true or false, got %q", field, n.Value)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		x, err := strconv.ParseInt(n.Value, 0, v.Type().Bits())
		if n.Tag != "!!int" || err != nil || x < 0 {
			return d.errf(n, "%s: want a non-negative integer, got %q", field, n.Value)
		}
		v.SetInt(x)
	case reflect.Uint32:
		x, err := strconv.ParseUint(n.Value, 0, 32)
		if n.Tag != "!!int" || err != nil {
			return d.errf(n, "%s: want a non-negative integer, got %q", field, n.Value)
		}
		v.SetUint(x)
	default:
		return d.errf(n, "%s: unsupported field type %s", field, v.Type())
	}
	return nil
}

func join(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

func in(field string) string {
	if field == "" {
		return ""
	}
	return " in " + field
}

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// validate checks what the schema cannot: pins' forms, names of inputs,
// the operations' own syntax where it needs no input.
func (r *Recipe) validate() error {
	e := func(at At, format string, args ...any) error {
		return &Error{File: r.Path, At: at, Msg: fmt.Sprintf(format, args...)}
	}
	if len(r.Inputs) == 0 {
		return e(At{}, "no inputs")
	}
	for _, name := range slices.Sorted(maps.Keys(r.Inputs)) {
		in := r.Inputs[name]
		if in.Source == "" {
			return e(in.At, "inputs.%s: missing source", name)
		}
		if in.SHA256 != "" && !hexSHA256.MatchString(in.SHA256) {
			return e(in.At, "inputs.%s: sha256 %q is not 64 lowercase hex digits", name, in.SHA256)
		}
	}
	used := map[string]string{} // input name -> its role
	use := func(at At, what, name, role string) error {
		if name == "" {
			return e(at, "%s: missing input name", what)
		}
		if r.Inputs[name] == nil {
			return e(at, "%s: no input %q (inputs: %s)", what, name, strings.Join(slices.Sorted(maps.Keys(r.Inputs)), ", "))
		}
		if prev, ok := used[name]; ok && prev != role {
			return e(at, "%s: input %q is used as %s and as %s", what, name, prev, role)
		}
		used[name] = role
		return nil
	}
	hasBuild := r.Build.At.Line != 0
	switch root := r.doc.Content[0]; {
	case hasBuild && r.Assemble != nil:
		return e(r.Assemble.At, "give either build or assemble, not both")
	case !hasBuild && r.Assemble == nil:
		return e(At{root.Line, root.Column}, "missing build (or assemble): what the recipe makes")
	case r.Assemble != nil:
		if err := r.Assemble.validate(e, use); err != nil {
			return err
		}
	default:
		if err := r.Build.validate(e, use); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Inputs)) {
		if _, ok := used[name]; !ok {
			return e(r.Inputs[name].At, "inputs.%s: not used by the build", name)
		}
	}
	o := &r.Output
	if o.SHA256 != "" && !hexSHA256.MatchString(o.SHA256) {
		return e(o.At, "output.sha256 %q is not 64 lowercase hex digits", o.SHA256)
	}
	for i, t := range o.Tensors {
		if t.Name == "" || !hexSHA256.MatchString(t.SHA256) {
			return e(t.At, "output.tensors[%d]: want a name and a 64-hex sha256", i)
		}
	}
	if o.Name != "" && (strings.ContainsRune(o.Name, '/') || o.Name == "." || o.Name == "..") {
		return e(o.At, "output.name %q: want a file name, not a path", o.Name)
	}
	if strings.HasPrefix(o.Name, ".") {
		// .bashrc, .git, .profile: files nobody means a model to replace.
		return e(o.At, "output.name %q: a hidden name (starting with '.') is refused", o.Name)
	}
	return nil
}

// InputNames returns the inputs' names in order.
func (r *Recipe) InputNames() []string { return slices.Sorted(maps.Keys(r.Inputs)) }

// localPath returns the path of a local input, relative to the recipe.
func (r *Recipe) localPath(src string) string {
	if filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(filepath.Dir(r.Path), src)
}

// Encode writes the recipe's YAML as read, with Lock's edits.
func (r *Recipe) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(r.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errorf makes an Error at a position of the recipe file; useInput checks
// that an operation names an input and records the role it has there.
type (
	errorf   func(at At, format string, args ...any) error
	useInput func(at At, what, name, role string) error
)

// validate checks a build's input names and the syntax of its operations.
func (b *Build) validate(e errorf, use useInput) error {
	if err := use(b.At, "build.from", b.From, "a model"); err != nil {
		return err
	}
	for i, a := range b.Add {
		if err := use(a.At, fmt.Sprintf("build.add[%d].from", i), a.From, "a model"); err != nil {
			return err
		}
	}
	if m := b.AddMTP; m != nil {
		if len(m.From) == 0 {
			return e(m.At, "build.add_mtp: needs from, the safetensors inputs holding the mtp.* tensors")
		}
		for i, name := range m.From {
			if err := use(m.At, fmt.Sprintf("build.add_mtp.from[%d]", i), name, "a safetensors checkpoint"); err != nil {
				return err
			}
		}
		if _, _, err := ops.ParseMTPType(cmp.Or(m.Outtype, "auto")); err != nil {
			return e(m.At, "build.add_mtp.outtype %v", err)
		}
	}
	if h := b.Head; h != nil {
		switch {
		case (h.IDs == "") == (h.Select == nil):
			return e(h.At, "build.head: give either ids (an input) or select")
		case h.IDs != "":
			if err := use(h.At, "build.head.ids", h.IDs, "an ids file"); err != nil {
				return err
			}
		default:
			s := h.Select
			if len(s.Corpora) == 0 || s.Rows <= 0 {
				return e(s.At, "build.head.select: needs corpora and rows")
			}
			for i, c := range s.Corpora {
				if err := use(c.At, fmt.Sprintf("build.head.select.corpora[%d].input", i), c.Input, "a corpus"); err != nil {
					return err
				}
			}
		}
		if h.Pad != nil && *h.Pad < 1 {
			return e(h.At, "build.head.pad: must be at least 1")
		}
	}
	if q := b.Quantize; q != nil {
		if q.Type == "" {
			return e(q.At, "build.quantize: missing type")
		}
		if q.Imatrix != "" {
			if err := use(q.At, "build.quantize.imatrix", q.Imatrix, "an importance matrix"); err != nil {
				return err
			}
		}
	}
	for i, s := range b.Set {
		if _, val, _ := strings.Cut(s, ":"); strings.HasPrefix(val, "@") {
			return e(b.At, "build.set[%d]: %q reads a file, which a recipe cannot pin: give the value inline", i, s)
		}
	}
	if b.Align != 0 {
		if err := gguf.CheckAlignment(uint64(b.Align)); err != nil {
			return e(b.At, "build.align: %v", err)
		}
	}
	return nil
}

// validate checks an assemble's input names, type and layout.
func (a *Assemble) validate(e errorf, use useInput) error {
	if err := use(a.At, "assemble.base", a.Base, "a model"); err != nil {
		return err
	}
	if err := use(a.At, "assemble.experts", a.Experts, "a model"); err != nil {
		return err
	}
	if a.ExpertsType != "" {
		if _, err := gguf.ParseType(a.ExpertsType); err != nil {
			return e(a.At, "assemble.experts_type: %v", err)
		}
	}
	if a.Imatrix != "" {
		if a.ExpertsType == "" {
			return e(a.At, "assemble.imatrix needs experts_type (as --imatrix needs --experts-type)")
		}
		if err := use(a.At, "assemble.imatrix", a.Imatrix, "an importance matrix"); err != nil {
			return err
		}
	}
	if err := ops.ParseLayout("assemble.experts_layout", a.ExpertsLayout, false); err != nil {
		return e(a.At, "%v", err)
	}
	return nil
}
