package headprune

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/textline"
	"github.com/ggufkit/gguf/plan"
)

// Tensor names and metadata keys of a pruned head.
const (
	OutputTensor = "output.weight"
	IDsTensor    = "output_ids.weight"
	EmbdTensor   = "token_embd.weight"

	KeyRows      = "head.rows"       // u32: rows kept
	KeyVocabSize = "head.vocab_size" // u32: vocabulary size of the full model
	KeySource    = "head.source"     // str: tensor the rows were cut from (output.weight or token_embd.weight)
)

// Options say how to choose the kept ids from a ranked list.
type Options struct {
	// Rows keeps the first Rows ranked ids (0: all of them).
	Rows int
	// Pad rounds the row count up to a multiple of Pad (0 or 1: no padding)
	// with the next ranked ids, then the smallest unused ids. The fast
	// kernels of llama.cpp's CPU backend only take heads whose row count is
	// a multiple of 8 (the seeds' E71), hence the CLI's default of 8.
	Pad int
	// NoSpecials does not force control, user-defined and special ids in.
	NoSpecials bool
}

// MaxIDsLine is the longest line an ids file may have.
const MaxIDsLine = 1 << 20

// ReadIDs reads a ranked id list: one id per line, most important first;
// blank lines are skipped and '#' starts a comment. An id outside
// [0, vocabSize) or seen before is an error naming its line; a list with no
// id is ErrNoIDs. An error never quotes the file's text: the list may be
// any file a recipe names (a secret one), so it says the line number and
// what is wrong there, not what the line holds.
func ReadIDs(r io.Reader, vocabSize int) ([]int32, error) {
	sc := textline.NewScanner(r, MaxIDsLine)
	seen := map[int32]int{}
	var ids []int32
	for sc.Scan() {
		line, s := sc.Line(), sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: not a token id (want a decimal integer, or a # comment)", line)
		}
		if v < 0 || v >= int64(vocabSize) {
			return nil, fmt.Errorf("line %d: the id is outside the vocabulary (0..%d)", line, vocabSize-1)
		}
		id := int32(v)
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("line %d: the id repeats line %d", line, prev)
		}
		seen[id] = line
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrNoIDs
	}
	return ids, nil
}

// ErrNoIDs is ReadIDs' error for a list with no id (empty, or only blank
// lines and comments): a head of nothing is never what was meant, and
// taking it as "no pruning" would copy the model silently.
var ErrNoIDs = errors.New("no ids (the file is empty or holds only comments)")

// WriteIDs writes an ids file: each header line as a "# " comment, then one
// id per line, in the order given.
func WriteIDs(w io.Writer, header []string, ids []int32) error {
	bw := bufio.NewWriter(w)
	for _, h := range header {
		for _, l := range strings.Split(h, "\n") {
			fmt.Fprintf(bw, "# %s\n", l)
		}
	}
	var b []byte
	for _, id := range ids {
		b = strconv.AppendInt(b[:0], int64(id), 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// Specials returns the ids a head must keep for the model to work: tokens
// typed control (3), user-defined (4) or unknown (2) in
// tokenizer.ggml.token_type, and every tokenizer.ggml.*_token_id (bos, eos,
// eot, eom, pad, unk, sep, fim...), ascending. Ids outside the vocabulary
// (such as the 4294967295 "none" some converters write) are ignored.
func Specials(md *gguf.Metadata, vocab int) []int32 {
	set := map[int32]bool{}
	if v, ok := md.Get(gguf.KeyTokenType); ok {
		if types, ok := v.Ints(); ok {
			for id, t := range types {
				if (t == 2 || t == 3 || t == 4) && id < vocab {
					set[int32(id)] = true
				}
			}
		}
	}
	for _, kv := range md.KVs() {
		if strings.HasPrefix(kv.Key, "tokenizer.ggml.") && strings.HasSuffix(kv.Key, "_token_id") {
			if id, ok := kv.Value.Uint(); ok && id < uint64(vocab) {
				set[int32(id)] = true
			}
		}
	}
	out := make([]int32, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Choice is the outcome of Choose.
type Choice struct {
	IDs      []int32 // kept ids, ascending
	Ranked   int     // taken from the ranked list within Rows
	Specials int     // specials added beyond those
	Padding  int     // ids added to reach a multiple of Pad
}

// Choose picks the ids to keep: the first opts.Rows ranked ids, the
// specials not among them, then padding up to a multiple of opts.Pad from
// the rest of the ranked list and then the smallest unused ids.
func Choose(ranked []int32, vocab int, specials []int32, opts Options) (*Choice, error) {
	rows := opts.Rows
	if rows <= 0 || rows > len(ranked) {
		rows = len(ranked)
	}
	keep := make(map[int32]bool, rows+len(specials))
	c := &Choice{}
	for _, id := range ranked[:rows] {
		keep[id] = true
	}
	c.Ranked = len(keep)
	if !opts.NoSpecials {
		for _, id := range specials {
			if !keep[id] {
				keep[id] = true
				c.Specials++
			}
		}
	}
	if opts.Pad > 1 {
		next := func() (int32, bool) {
			for _, id := range ranked[rows:] {
				rows++
				if !keep[id] {
					return id, true
				}
			}
			for id := int32(0); int(id) < vocab; id++ {
				if !keep[id] {
					return id, true
				}
			}
			return 0, false
		}
		for len(keep)%opts.Pad != 0 {
			id, ok := next()
			if !ok {
				return nil, fmt.Errorf("cannot pad %d rows to a multiple of %d: the vocabulary has only %d tokens", len(keep), opts.Pad, vocab)
			}
			keep[id] = true
			c.Padding++
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("the head would have no rows")
	}
	c.IDs = make([]int32, 0, len(keep))
	for id := range keep {
		c.IDs = append(c.IDs, id)
	}
	slices.Sort(c.IDs)
	return c, nil
}

// Head describes the output head of a file.
type Head struct {
	Pruned bool
	// Source is the tensor a pruned head's rows were cut from, or where the
	// full head lives: output.weight, or token_embd.weight when tied.
	Source    string
	VocabSize int
	// IDs of a pruned head's rows (nil for a full head).
	IDs []int32
}

// VocabSize returns the model's vocabulary size: head.vocab_size for a
// pruned head, else the length of tokenizer.ggml.tokens, else the rows of
// token_embd.weight.
func VocabSize(f *gguf.File) int {
	if n, ok := f.Metadata.Uint(KeyVocabSize); ok {
		return int(n)
	}
	if v, ok := f.Metadata.Get(gguf.KeyTokens); ok && v.IsArray() {
		return v.Len()
	}
	if t, ok := f.Tensor(EmbdTensor); ok {
		return int(t.NumRows())
	}
	return 0
}

// Plan edits p (built from in) so that its output head keeps exactly ids
// (ascending, from Choose). If in already has a pruned head, the new rows
// are re-cut from what it holds: from token_embd.weight when the head was
// cut from it (tied models), else from the pruned output.weight, which then
// must hold every id (the error lists those it lacks). The result is the
// same file as pruning the original model with the same ids.
func Plan(p *plan.Plan, in *plan.Input, c *Choice, readIDs func() ([]int32, error)) error {
	f := in.File
	vocab := VocabSize(f)
	_, pruned := f.Tensor(IDsTensor)
	// The head is cut from the plan as the earlier operations left it
	// (drops, renames and adds come first): a renamed output.weight is no
	// longer the head, a tensor renamed to output.weight is.
	srcName := OutputTensor
	if p.Index(OutputTensor) < 0 {
		srcName = EmbdTensor // tied
	}
	var rowOf func(id int32) (int64, bool)
	if pruned {
		if s := f.Metadata.String(KeySource); s == EmbdTensor {
			srcName = EmbdTensor
		}
		if srcName == OutputTensor {
			have, err := readIDs()
			if err != nil {
				return fmt.Errorf("reading %s: %w", IDsTensor, err)
			}
			index := make(map[int32]int64, len(have))
			for j, id := range have {
				index[id] = int64(j)
			}
			rowOf = func(id int32) (int64, bool) { j, ok := index[id]; return j, ok }
		}
	}
	if rowOf == nil {
		rowOf = func(id int32) (int64, bool) { return int64(id), int(id) < vocab }
	}
	pi := p.Index(srcName)
	if pi < 0 {
		return fmt.Errorf("no %s or %s tensor to cut the head from", OutputTensor, EmbdTensor)
	}
	cp, ok := p.Tensors[pi].Src.(*plan.Copy)
	if !ok {
		return fmt.Errorf("%s is %s, not a tensor of an input: the head is cut from a tensor as it is stored", srcName, p.Tensors[pi].Src.Describe())
	}
	src := &p.Tensors[pi].Info
	if len(src.Dims) != 2 {
		return fmt.Errorf("%s has shape %s, want 2 dimensions", srcName, src.Shape())
	}
	rows := make([]int64, len(c.IDs))
	var missing []string
	for i, id := range c.IDs {
		r, ok := rowOf(id)
		if !ok {
			missing = append(missing, strconv.Itoa(int(id)))
			continue
		}
		rows[i] = r
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 20)]
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
		}
		return fmt.Errorf("the built head (cut from %s, untied) lacks %d of the requested ids: %s%s; re-cut from the original model instead",
			OutputTensor, len(missing), strings.Join(shown, ", "), more)
	}
	if int(src.NumRows()) < vocab && !pruned {
		return fmt.Errorf("%s has %d rows but the vocabulary has %d tokens", srcName, src.NumRows(), vocab)
	}

	head := plan.Tensor{
		Info: gguf.TensorInfo{Name: OutputTensor, Type: src.Type, Dims: []uint64{src.Dims[0], uint64(len(c.IDs))}},
		Src:  &plan.Rows{In: cp.In, Index: cp.Index, Rows: rows},
	}
	idBytes := make([]byte, 4*len(c.IDs))
	for i, id := range c.IDs {
		binary.LittleEndian.PutUint32(idBytes[4*i:], uint32(id))
	}
	ids := plan.Tensor{
		Info: gguf.TensorInfo{Name: IDsTensor, Type: gguf.TypeI32, Dims: []uint64{uint64(len(c.IDs))}},
		Src:  &plan.Bytes{Data: idBytes, Note: fmt.Sprintf("%d head ids", len(c.IDs))},
	}
	// Place the head where the output head was; a tied model's new head goes
	// right after token_embd.weight. output_ids follows output.weight.
	oi, ii := p.Index(OutputTensor), p.Index(IDsTensor)
	switch {
	case oi >= 0 && ii >= 0:
		p.Tensors[oi], p.Tensors[ii] = head, ids
	case oi >= 0:
		p.Tensors[oi] = head
		p.Tensors = slices.Insert(p.Tensors, oi+1, ids)
	default:
		ei := p.Index(EmbdTensor)
		if ei < 0 {
			return fmt.Errorf("the plan has no %s to place a tied head after", EmbdTensor)
		}
		p.Tensors = slices.Insert(p.Tensors, ei+1, head, ids)
	}
	p.Metadata.Set(KeyRows, gguf.Uint32(uint32(len(c.IDs))))
	p.Metadata.Set(KeyVocabSize, gguf.Uint32(uint32(vocab)))
	p.Metadata.Set(KeySource, gguf.String(srcName))
	return nil
}

// DecodeIDs decodes the bytes of an output_ids tensor.
func DecodeIDs(b []byte) ([]int32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%s has %d bytes, not a multiple of 4", IDsTensor, len(b))
	}
	ids := make([]int32, len(b)/4)
	for i := range ids {
		ids[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		if i > 0 && ids[i] <= ids[i-1] {
			return nil, fmt.Errorf("%s is not strictly ascending at row %d", IDsTensor, i)
		}
	}
	if len(ids) > 0 && ids[0] < 0 {
		return nil, fmt.Errorf("%s holds a negative id", IDsTensor)
	}
	return ids, nil
}
