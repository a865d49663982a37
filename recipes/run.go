package recipes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/sink"
)

// Sums are the sha256 of a GGUF file and of each tensor's data (padding
// excluded), in file order.
type Sums struct {
	SHA256  string
	Size    int64
	Tensors []TensorSum
}

// hasher computes Sums of a file written front to back, from its layout.
type hasher struct {
	layout *gguf.File
	whole  hash.Hash
	cur    hash.Hash
	pos    int64
	k      int // the tensor pos is in or before
	sums   []TensorSum
}

func newHasher(layout *gguf.File) *hasher {
	return &hasher{layout: layout, whole: sha256.New(), cur: sha256.New()}
}

// Write hashes b: all of it into the file's sum, the parts inside tensor
// k's data into tensor k's.
func (h *hasher) Write(b []byte) (int, error) {
	h.whole.Write(b)
	n := len(b)
	for len(b) > 0 {
		if h.k >= len(h.layout.Tensors) {
			h.pos += int64(len(b))
			break
		}
		t := &h.layout.Tensors[h.k]
		start := h.layout.DataOffset + int64(t.Offset)
		end := start + t.Size()
		if h.pos < start {
			skip := min(int64(len(b)), start-h.pos)
			b, h.pos = b[skip:], h.pos+skip
			continue
		}
		take := min(int64(len(b)), end-h.pos)
		h.cur.Write(b[:take])
		b, h.pos = b[take:], h.pos+take
		if h.pos == end {
			h.sums = append(h.sums, TensorSum{Name: t.Name, SHA256: hex.EncodeToString(h.cur.Sum(nil))})
			h.cur.Reset()
			h.k++
		}
	}
	return n, nil
}

func (h *hasher) result() Sums {
	for h.k < len(h.layout.Tensors) && h.layout.Tensors[h.k].Size() == 0 {
		h.Write(nil) // zero-size tensors at the end
	}
	return Sums{SHA256: hex.EncodeToString(h.whole.Sum(nil)), Size: h.pos, Tensors: h.sums}
}

// Mismatch is an output that differs from the recipe's expected one.
type Mismatch struct {
	// Tensor is the first tensor that differs ("" when the tensors are the
	// same and the header differs, or when the recipe lists no tensors).
	Tensor string
	Msg    string
}

func (m *Mismatch) Error() string { return m.Msg }

// Check compares sums with the recipe's expected output. A recipe without
// an expected sha256 checks nothing.
func (o *Output) Check(got Sums) error {
	if o.SHA256 == "" {
		return nil
	}
	if got.SHA256 == o.SHA256 && (o.Size == nil || *o.Size == got.Size) {
		return nil
	}
	what := fmt.Sprintf("output sha256 %s (%d bytes), expected %s", got.SHA256, got.Size, o.SHA256)
	if o.Size != nil {
		what += fmt.Sprintf(" (%d bytes)", *o.Size)
	}
	if len(o.Tensors) == 0 {
		return &Mismatch{Msg: what + "; the recipe has no per-tensor sha256 to name the tensor ('gguf recipe lock' writes them)"}
	}
	for i := range max(len(o.Tensors), len(got.Tensors)) {
		switch {
		case i >= len(got.Tensors):
			return &Mismatch{Tensor: o.Tensors[i].Name, Msg: fmt.Sprintf("%s; first differing tensor #%d %s: missing from the output", what, i, o.Tensors[i].Name)}
		case i >= len(o.Tensors):
			return &Mismatch{Tensor: got.Tensors[i].Name, Msg: fmt.Sprintf("%s; first differing tensor #%d %s: not in the recipe", what, i, got.Tensors[i].Name)}
		case got.Tensors[i].Name != o.Tensors[i].Name:
			return &Mismatch{Tensor: got.Tensors[i].Name, Msg: fmt.Sprintf("%s; first differing tensor #%d: %s, expected %s", what, i, got.Tensors[i].Name, o.Tensors[i].Name)}
		case got.Tensors[i].SHA256 != o.Tensors[i].SHA256:
			return &Mismatch{Tensor: got.Tensors[i].Name, Msg: fmt.Sprintf("%s; first differing tensor #%d %s: sha256 %s, expected %s", what, i, got.Tensors[i].Name, got.Tensors[i].SHA256, o.Tensors[i].SHA256)}
		}
	}
	return &Mismatch{Msg: what + "; every tensor's data is as expected: the header (metadata, tensor table or alignment) differs"}
}

// RunOptions configure Run.
type RunOptions struct {
	// Progress is called as the output is written: bytes written of
	// total, and the tensor being written (k of n).
	Progress func(written, total int64, k, n int)
	// Default marks out as the recipe's output.name, not a name the user
	// gave: an existing file there is not replaced unless Force (a recipe
	// from elsewhere must not replace a file in the working directory).
	Default bool
	// Force replaces an existing file at a Default name, and writes to a
	// terminal.
	Force bool
}

// localFiles are the files a run reads from disk: the recipe and its
// local inputs, which its output must never replace.
func (res *Resolved) localFiles() []string {
	files := []string{res.Recipe.Path}
	for _, in := range res.Inputs {
		if !hfremote.IsRemote(in.Input.Source) {
			files = append(files, res.Recipe.localPath(in.Input.Source))
		}
	}
	return files
}

// RunResult is what Run made.
type RunResult struct {
	Build *Planned
	Sums  Sums
	// Read is the tensor bytes read from each input (by input name).
	Read map[string]int64
}

// Run plans the build and writes it to out (a path, "-" for stdout; ""
// writes nothing and only hashes, as Lock does). The output is committed
// only when its sums match the recipe's expected output: on a Mismatch
// nothing is left under out, and stdout, a device or a FIFO gets no byte
// (the output is checked in a temporary file, then copied). out may not be
// the recipe or one of its local inputs.
func (res *Resolved) Run(ctx context.Context, out string, opts RunOptions) (*RunResult, error) {
	bld, err := res.Plan(ctx)
	if err != nil {
		return nil, err
	}
	layout, err := bld.Plan.Layout()
	if err != nil {
		return nil, err
	}
	h := newHasher(layout)
	var w io.Writer = h
	var dst *sink.Output
	if out != "" {
		so := sink.Options{Force: opts.Force, Inputs: res.localFiles(), Spool: true}
		if opts.Default {
			so.Replace = func(string) error {
				return errors.New("exists, and is the recipe's output.name, not a name given with -o")
			}
		}
		if dst, err = sink.CreateWith(out, so); err != nil {
			return nil, err
		}
		defer dst.Abort()
		w = io.MultiWriter(dst, h)
	}
	popts := plan.Options{}
	if opts.Progress != nil {
		n := len(layout.Tensors)
		popts.Progress = func(written, total int64) {
			k := 0
			for k < n && layout.DataOffset+int64(layout.Tensors[k].Offset)+layout.Tensors[k].Size() <= written {
				k++
			}
			opts.Progress(written, total, k, n)
		}
	}
	pres, err := bld.Plan.Execute(ctx, w, popts)
	if err != nil {
		return nil, err
	}
	rr := &RunResult{Build: bld, Sums: h.result(), Read: map[string]int64{}}
	for name, in := range res.Inputs {
		if in.Src != nil {
			rr.Read[name] = pres.Read[in.Src.Name]
		}
	}
	if err := res.Recipe.Output.Check(rr.Sums); err != nil {
		return rr, err
	}
	if dst != nil {
		if err := dst.Commit(); err != nil {
			return nil, err
		}
	}
	return rr, nil
}

// Verify hashes an existing GGUF file, tensor by tensor, and compares it
// with the recipe's expected output; it opens none of the inputs.
func (r *Recipe) Verify(path string) (Sums, error) {
	if r.Output.SHA256 == "" {
		return Sums{}, &Error{File: r.Path, At: r.Output.At, Msg: "output has no sha256 to verify against: lock the recipe first ('gguf recipe lock')"}
	}
	f, err := os.Open(path)
	if err != nil {
		return Sums{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Sums{}, err
	}
	rd, err := gguf.NewReader(f, st.Size())
	if err != nil {
		return Sums{}, fmt.Errorf("%s: %w", path, err)
	}
	h := newHasher(rd.File)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size())); err != nil {
		return Sums{}, fmt.Errorf("%s: %w", path, err)
	}
	sums := h.result()
	return sums, r.Output.Check(sums)
}
