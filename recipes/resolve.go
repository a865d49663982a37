package recipes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/safetensors"
	"github.com/ggufkit/gguf/source"
)

// maxDataInput bounds an input read whole into memory (ids files,
// corpora, importance matrices): the one allocation that follows an
// input's size.
const maxDataInput = 512 << 20

// Options configure how a recipe's inputs are opened.
type Options struct {
	// Endpoint is the Hub (default: HF_ENDPOINT, else huggingface.co).
	Endpoint string
	// Token authenticates to the Hub ("": the environment's).
	Token string
	// Stats, if set, receives the counts of every remote file.
	Stats *hfremote.Stats
	// Pinned refuses inputs that are not pinned: an hf:// revision that is
	// not a 40-hex commit, a missing sha256 or size. Run sets it; Plan and
	// Lock do not.
	Pinned bool
	// Threads tokenizing corpora and converting rows (bytes do not depend
	// on it; <1 means 1).
	Threads int
}

// Opened is one input, opened and checked against its pin.
type Opened struct {
	Name  string
	Input *Input
	// Commit is the commit an hf:// input resolved to ("" otherwise).
	Commit string
	// SHA256 and Size are the file's, as published by the Hub or computed
	// from its bytes; SHA256 is "" when neither is available (a remote file
	// without a published checksum that is read only in part).
	SHA256 string
	Size   int64
	// Checked says how the pin was checked, for reports.
	Checked string
	// Src is set for GGUF inputs (the header decoded) and safetensors
	// checkpoints (Safetensors its header), Data for the others (read
	// whole).
	Src         *source.Source
	Safetensors *safetensors.File
	Data        []byte
	// Spent is what opening it cost (requests, bytes): a GGUF's header, or
	// a remote small input whole.
	Spent hfremote.StatsSnapshot

	in *plan.Input
}

// PlanInput is the GGUF input as the plan reads it (one per input, so
// that the plan's producers can be traced back to it).
func (o *Opened) PlanInput() *plan.Input {
	if o.in == nil {
		o.in = o.Src.PlanInput()
	}
	return o.in
}

// Resolved is a recipe with every input opened and checked.
type Resolved struct {
	Recipe *Recipe
	Inputs map[string]*Opened
	opts   Options
}

// Close closes the inputs.
func (r *Resolved) Close() error {
	for _, in := range r.Inputs {
		if in.Src != nil {
			in.Src.Close()
		}
	}
	return nil
}

// PinError is an input whose bytes do not match its pin, or that is not
// pinned where a pin is required.
type PinError struct {
	Input string
	Msg   string
	// Unpinned is set when the input has no pin where one is required
	// (a branch name, a missing sha256), rather than a pin it fails.
	Unpinned bool
}

func (e *PinError) Error() string { return fmt.Sprintf("input %s: %s", e.Input, e.Msg) }

// Open opens every input of r and checks it against its pin: a GGUF input's
// header is decoded (and, on the Hub, its published sha256 and size
// compared before any tensor byte is read; a local file is hashed), the
// other inputs are read whole and hashed.
func Open(ctx context.Context, r *Recipe, opts Options) (*Resolved, error) {
	res := &Resolved{Recipe: r, Inputs: map[string]*Opened{}, opts: opts}
	roles := r.roles()
	for _, name := range r.InputNames() {
		in := r.Inputs[name]
		o, err := res.open(ctx, name, in, roles[name])
		if err != nil {
			res.Close()
			return nil, err
		}
		res.Inputs[name] = o
	}
	return res, nil
}

type role int

const (
	roleModel role = iota + 1
	roleData
	// roleSafetensors is a checkpoint read as a model is: its header,
	// then the ranges the build takes
	roleSafetensors
)

// roles tells GGUF inputs and safetensors checkpoints from those read
// whole.
func (r *Recipe) roles() map[string]role {
	m := map[string]role{}
	for name := range r.Inputs {
		m[name] = roleData
	}
	if a := r.Assemble; a != nil {
		m[a.Base], m[a.Experts] = roleModel, roleModel
		return m
	}
	m[r.Build.From] = roleModel
	for _, a := range r.Build.Add {
		m[a.From] = roleModel
	}
	if a := r.Build.AddMTP; a != nil {
		for _, name := range a.From {
			m[name] = roleSafetensors
		}
	}
	return m
}

// revision returns the revision of an hf:// source ("" for other forms).
func revision(src string) (string, error) {
	if !strings.HasPrefix(src, "hf://") {
		return "", nil
	}
	loc, err := hfremote.ParseHF(src)
	if err != nil {
		return "", err
	}
	return loc.Revision, nil
}

func (res *Resolved) remoteOptions() hfremote.Options {
	return hfremote.Options{Endpoint: res.opts.Endpoint, Token: res.opts.Token, Stats: res.opts.Stats}
}

func (res *Resolved) open(ctx context.Context, name string, in *Input, role role) (*Opened, error) {
	pinErr := func(format string, args ...any) error {
		return &PinError{Input: name, Msg: fmt.Sprintf(format, args...)}
	}
	rev, err := revision(in.Source)
	if err != nil {
		return nil, pinErr("%v", err)
	}
	if res.opts.Pinned {
		switch {
		case strings.HasPrefix(in.Source, "hf://") && !hexCommit.MatchString(rev):
			r := rev
			if r == "" {
				r = "main (the default)"
			}
			return nil, &PinError{Input: name, Unpinned: true, Msg: fmt.Sprintf("revision %s of %s is not a 40-hex commit: a branch or tag can move, so run refuses it (pin it with 'gguf recipe lock')", r, in.Source)}
		case in.SHA256 == "" || in.Size == nil:
			return nil, &PinError{Input: name, Unpinned: true, Msg: "no sha256 and size: pin them with 'gguf recipe lock'"}
		}
	}
	o := &Opened{Name: name, Input: in}
	remote := hfremote.IsRemote(in.Source)
	spec := in.Source
	if !remote {
		spec = res.Recipe.localPath(in.Source)
	}
	if role != roleData {
		// A pin the Hub's published sha256, size or commit contradicts
		// fails before the header is read.
		check := func(f *hfremote.File) error { return checkPublished(name, in, rev, f) }
		sopts := source.Options{Token: res.opts.Token, Stats: res.opts.Stats, Remote: res.remoteOptions(), Check: check}
		var src *source.Source
		var err error
		if role == roleSafetensors {
			src, err = source.OpenRaw(ctx, spec, sopts, func(r io.ReaderAt, size int64) (err error) {
				o.Safetensors, err = safetensors.Parse(r, size)
				return err
			})
		} else {
			src, err = source.Open(ctx, spec, sopts)
		}
		if err != nil {
			var pe *PinError
			if errors.As(err, &pe) {
				return nil, pe
			}
			return nil, fmt.Errorf("input %s: %w", name, err)
		}
		o.Src = src
		o.Spent = src.Stats().StatsSnapshot
		if err := o.checkModel(spec, remote, pinErr); err != nil {
			src.Close()
			return nil, err
		}
	} else if err := o.readData(ctx, res, spec, remote, pinErr); err != nil {
		return nil, err
	}
	if rev != "" && hexCommit.MatchString(rev) && o.Commit != "" && o.Commit != rev {
		return o, pinErr("resolved to commit %s, not the pinned %s", o.Commit, rev)
	}
	if in.Size != nil && *in.Size != o.Size {
		return nil, pinErr("size %d, not the pinned %d", o.Size, *in.Size)
	}
	if in.SHA256 != "" && o.SHA256 != "" && in.SHA256 != o.SHA256 {
		return nil, pinErr("sha256 %s (%s), not the pinned %s", o.SHA256, o.Checked, in.SHA256)
	}
	return o, nil
}

// checkPublished compares a resolved remote file's commit, size and
// published sha256 with the input's pins, before any byte is read.
func checkPublished(name string, in *Input, rev string, f *hfremote.File) error {
	e := func(format string, args ...any) error {
		return &PinError{Input: name, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case hexCommit.MatchString(rev) && f.Commit() != "" && f.Commit() != rev:
		return e("resolved to commit %s, not the pinned %s", f.Commit(), rev)
	case in.Size != nil && *in.Size != f.Size():
		return e("size %d (as the server gives it), not the pinned %d; nothing was downloaded", f.Size(), *in.Size)
	case in.SHA256 != "" && f.SHA256() != "" && f.SHA256() != in.SHA256:
		return e("sha256 %s (published by the server), not the pinned %s; nothing was downloaded", f.SHA256(), in.SHA256)
	}
	return nil
}

// checkModel finds a GGUF input's (or a checkpoint's) sha256 and size: published by the Hub
// (nothing past the header is read), or hashed from a local file.
func (o *Opened) checkModel(spec string, remote bool, pinErr func(string, ...any) error) error {
	if remote {
		pins := o.Src.Pins()
		if len(pins) != 1 {
			return pinErr("a split model cannot be pinned by one sha256: pin its first file as its own recipe input")
		}
		p := pins[0]
		o.Commit, o.SHA256, o.Size = p.Commit, p.SHA256, p.Size
		o.Checked = "published by the server"
		if o.SHA256 == "" {
			o.Checked = "not published: checked only through the output's sha256"
		}
		return nil
	}
	f, err := os.Open(spec)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("input %s: %w", o.Name, err)
	}
	if o.Src.Files() != 1 {
		return pinErr("a split model cannot be pinned by one sha256: pin its first file as its own recipe input")
	}
	o.SHA256, o.Size, o.Checked = hex.EncodeToString(h.Sum(nil)), n, "hashed"
	return nil
}

// readData reads a non-GGUF input whole and hashes it.
func (o *Opened) readData(ctx context.Context, res *Resolved, spec string, remote bool, pinErr func(string, ...any) error) error {
	var r io.Reader
	var size int64
	var rf *hfremote.File
	if remote {
		f, err := hfremote.Open(ctx, spec, res.remoteOptions())
		if err != nil {
			return fmt.Errorf("input %s: %w", o.Name, err)
		}
		defer f.Close()
		rf = f
		if err := checkPublished(o.Name, o.Input, "", f); err != nil {
			return err
		}
		o.Commit, size = f.Commit(), f.Size()
		r = io.NewSectionReader(f, 0, size)
	} else {
		f, err := os.Open(spec)
		if err != nil {
			return fmt.Errorf("input %s: %w", o.Name, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return pinErr("%s is not a regular file", spec)
		}
		r, size = f, st.Size()
	}
	if o.Input.Size != nil && *o.Input.Size != size {
		return pinErr("size %d, not the pinned %d", size, *o.Input.Size)
	}
	if size > maxDataInput {
		return pinErr("%d bytes: more than the %d an ids file, corpus or importance matrix may have", size, maxDataInput)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("file shorter than its %d bytes", size)
		}
		return fmt.Errorf("input %s: %w", o.Name, err)
	}
	if rf != nil {
		o.Spent = rf.Stats()
	}
	sum := sha256.Sum256(data)
	o.Data, o.Size, o.SHA256, o.Checked = data, size, hex.EncodeToString(sum[:]), "hashed"
	return nil
}

// baseName is the file name of an input's source, which llama-quantize
// would record for an importance matrix (a name, so that the bytes do not
// depend on where the recipe ran).
func baseName(src string) string {
	if i := strings.IndexAny(src, "?#"); i >= 0 && hfremote.IsRemote(src) {
		src = src[:i]
	}
	return path.Base(strings.ReplaceAll(src, `\`, "/"))
}
