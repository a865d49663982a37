package recipes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ggufkit/gguf/hfremote"
)

// LockResult is what Lock pinned.
type LockResult struct {
	// Inputs are the inputs as pinned, by name.
	Inputs map[string]*Opened
	// Sums are the output's, from a build that wrote nothing.
	Sums Sums
}

// Lock pins a recipe the way a lock file pins dependencies: each hf://
// input's revision becomes the commit it resolves to now, each input gets
// its sha256 and size, and the output its sha256, size and per-tensor
// sha256, from a build that is hashed and not written. Pins already in the
// recipe are checked, not replaced; the output's are replaced. The recipe's
// YAML (comments included) is edited in place; Encode gives the new text.
func Lock(ctx context.Context, r *Recipe, opts Options) (*LockResult, error) {
	opts.Pinned = false
	res, err := Open(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	for _, name := range r.InputNames() {
		o := res.Inputs[name]
		if o.SHA256 == "" {
			// A server that publishes no checksum: hash the bytes.
			h := sha256.New()
			ra := o.PlanInput().ReaderAt
			if _, err := io.Copy(h, io.NewSectionReader(ra, 0, o.Size)); err != nil {
				return nil, fmt.Errorf("input %s: %w", name, err)
			}
			o.SHA256, o.Checked = hex.EncodeToString(h.Sum(nil)), "hashed"
		}
	}
	rr, err := res.Run(ctx, "", RunOptions{})
	if err != nil {
		if _, ok := err.(*Mismatch); !ok {
			return nil, err
		}
	}
	root := r.doc.Content[0]
	inputs := mapValue(root, "inputs")
	for _, name := range r.InputNames() {
		o := res.Inputs[name]
		in := r.Inputs[name]
		node := mapValue(inputs, name)
		if strings.HasPrefix(in.Source, "hf://") && o.Commit != "" {
			loc, err := hfremote.ParseHF(in.Source)
			if err != nil {
				return nil, err
			}
			loc.Revision = o.Commit
			in.Source = loc.String()
			setScalar(node, "source", in.Source, "!!str")
		}
		in.SHA256 = o.SHA256
		size := o.Size
		in.Size = &size
		setScalar(node, "sha256", o.SHA256, "!!str")
		setScalar(node, "size", strconv.FormatInt(o.Size, 10), "!!int")
	}
	out := mapValue(root, "output")
	if out == nil {
		out = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "output"}, out)
	}
	setScalar(out, "sha256", rr.Sums.SHA256, "!!str")
	setScalar(out, "size", strconv.FormatInt(rr.Sums.Size, 10), "!!int")
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, t := range rr.Sums.Tensors {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: t.Name},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "sha256"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: t.SHA256},
		}})
	}
	setNode(out, "tensors", seq)
	r.Output.SHA256, r.Output.Tensors = rr.Sums.SHA256, rr.Sums.Tensors
	size := rr.Sums.Size
	r.Output.Size = &size
	return &LockResult{Inputs: res.Inputs, Sums: rr.Sums}, nil
}

// mapValue returns the value of key in a mapping node (nil if absent).
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setNode(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.LineComment = m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func setScalar(m *yaml.Node, key, value, tag string) {
	setNode(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}
