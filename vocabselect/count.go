package vocabselect

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ggufkit/gguf/internal/textline"
)

// Counts holds the token frequencies of one corpus.
type Counts struct {
	// Counts[id] is how often id occurs.
	Counts []uint64
	// Tokens is the sum of Counts.
	Tokens uint64
	// Bytes is the size of the text read.
	Bytes int64
}

// CountOptions tunes Count.
type CountOptions struct {
	// Workers is the number of texts tokenized at once; 0 means GOMAXPROCS.
	Workers int
	// ChunkSize is the size of the pieces the text is cut into (a piece
	// grows up to 16 times that while no safe cut point turns up); 0 means
	// DefaultChunkSize.
	ChunkSize int
	// Progress, if set, is called from one goroutine with the number of
	// bytes read so far.
	Progress func(bytesRead int64)
}

// Count tokenizes everything r yields (no BOS/EOS, special tokens not
// parsed) and counts each token. The text is read once, cut into chunks
// (see chunker) and tokenized in parallel with streaming sessions (see
// streamMaxWord), so memory is bounded whatever the text: about 50 MB per
// worker besides the tokenizer (see stream.go).
//
// The counts equal those of tokenizing the whole text at once when
// ChunkExact is true, every stretch of 16 chunk sizes has a safe cut point
// and no word is longer than streamMaxWord; elsewhere only the tokens next
// to a forced cut may differ.
func (t *Tokenizer) Count(ctx context.Context, r io.Reader, opts CountOptions) (*Counts, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g, ctx := errgroup.WithContext(ctx)
	chunks := make(chan chunk, workers)
	total := &Counts{Counts: make([]uint64, len(t.tokens))}
	var mu sync.Mutex

	g.Go(func() error {
		defer close(chunks)
		ch := t.newChunker(r, opts.ChunkSize, opts.Progress)
		defer func() { total.Bytes = ch.read }()
		for {
			c, err := ch.next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			select {
			case chunks <- c:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	for range workers {
		g.Go(func() error {
			// One session for the whole run, so that its word cache is never
			// dropped by the pool between chunks.
			s := t.streamSession()
			defer t.putStreamSession(s)
			local := make([]uint64, len(t.tokens))
			var ids []int32
			var n uint64
			for c := range chunks {
				ids = s.encode(ids[:0], c.text, false, false, !c.first)
				for _, id := range ids {
					local[id]++
				}
				n += uint64(len(ids))
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for i, v := range local {
				total.Counts[i] += v
			}
			total.Tokens += n
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return total, nil
}

// cut returns where to end a chunk of b, 0 if it has no safe place. With
// force it falls back to a place before a space, then to any character
// boundary.
func (t *Tokenizer) cut(b []byte, force bool) int {
	for end := len(b); ; {
		i := bytes.LastIndexByte(b[:end], '\n')
		if i < 1 {
			break
		}
		end = i
		if lineCut(b, i) {
			return i + 1
		}
	}
	if !force {
		return 0
	}
	for end := len(b); ; {
		i := bytes.LastIndexByte(b[:end], ' ')
		if i < 1 {
			break
		}
		end = i
		if !isCSpace(b[i-1]) && startsWithLetter(b[i+1:]) {
			return i
		}
	}
	for i := len(b) - 1; i > 0; i-- {
		if b[i]&0xC0 != 0x80 {
			return i
		}
	}
	return len(b)
}

// lineCut reports whether b may be cut after the line break at i: one that
// follows a visible character and precedes a letter. No pre-tokenizer rule,
// BPE merge or WordPiece word spans such a place, nor a SentencePiece merge
// where no token has a line break inside (spmModel's cutNewline). The line
// break must also be a character of its own where SentencePiece cuts
// characters by their first byte: a broken sequence whose first byte is
// shortly before it would swallow it.
func lineCut[T string | []byte](b T, i int) bool {
	if i < 1 || i+1 >= len(b) || b[i] != '\n' || isCSpace(b[i-1]) || !startsWithLetter(b[i+1:]) {
		return false
	}
	for k := 1; k <= 3 && k <= i; k++ {
		if utf8Len(b[i-k]) > k {
			return false
		}
	}
	return true
}

// startsWithLetter reports whether b begins with a complete letter.
func startsWithLetter[T string | []byte](b T) bool {
	if len(b) == 0 {
		return false
	}
	n := min(len(b), 4)
	c, _ := decodeCpt(string(b[:n]), 0)
	return cptFlags(c)&flagLetter != 0 && c != 0xFFFD
}

// ChunkExact reports whether Count gives exactly the counts of tokenizing
// each corpus whole: true unless some token reaches past a line break (a
// SentencePiece piece such as "\nThe", or a user-defined token with a line
// break inside followed by more text), which a merge across a chunk boundary
// would need.
func (t *Tokenizer) ChunkExact() bool {
	for i, w := range t.tokens {
		spm := t.kind == kindSPM && t.attrs[i]&attrByte == 0
		if !spm && t.attrs[i]&attrUserDefined == 0 {
			continue
		}
		for k := 0; k+1 < len(w); k++ {
			if w[k] == '\n' && w[k+1] != '\n' && w[k+1] != '\r' {
				return false
			}
		}
	}
	return true
}

// countsMagic starts a counts file, so that select can tell one from a text.
const countsMagic = "# gguf vocab count"

// IsCountsFile reports whether data (the start of a file) begins like a file
// WriteCounts wrote.
func IsCountsFile(data []byte) bool { return bytes.HasPrefix(data, []byte(countsMagic+"\n")) }

// WriteCounts writes counts as a TSV file: comment lines (countsMagic, the
// header lines, bytes and tokens), a column line, then "id, count, text"
// for every token seen, most frequent first (ties by id). The text is the
// token's piece, Go-quoted.
func WriteCounts(w io.Writer, t *Tokenizer, header []string, c *Counts) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, countsMagic)
	for _, h := range header {
		fmt.Fprintf(bw, "# %s\n", h)
	}
	fmt.Fprintf(bw, "# bytes: %d\n# tokens: %d\nid\tcount\ttext\n", c.Bytes, c.Tokens)
	for _, id := range byFrequency(c.Counts) {
		fmt.Fprintf(bw, "%d\t%d\t%s\n", id, c.Counts[id], strconv.Quote(string(t.TokenToPiece(id, true))))
	}
	return bw.Flush()
}

// MaxCountsLine is the longest line a counts file may have.
const MaxCountsLine = 1 << 20

// ReadCounts reads a file WriteCounts wrote for a vocabulary of vocabSize
// tokens. An error names the line and what is wrong with it, never its
// text: a recipe may name any file as a corpus.
func ReadCounts(r io.Reader, vocabSize int) (*Counts, error) {
	sc := textline.NewScanner(r, MaxCountsLine)
	c := &Counts{Counts: make([]uint64, vocabSize)}
	for sc.Scan() {
		line, s := sc.Line(), sc.Text()
		if line == 1 && s != countsMagic {
			return nil, fmt.Errorf("line 1: not a counts file (want %q)", countsMagic)
		}
		if b, ok := strings.CutPrefix(s, "# bytes: "); ok {
			v, err := strconv.ParseInt(b, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: the byte count is not a decimal integer", line)
			}
			c.Bytes = v
		}
		if strings.HasPrefix(s, "#") || s == "id\tcount\ttext" {
			continue
		}
		f := strings.SplitN(s, "\t", 3)
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: want id<TAB>count<TAB>text", line)
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || id < 0 || id >= int64(vocabSize) {
			return nil, fmt.Errorf("line %d: the id is not one of this vocabulary (%d tokens)", line, vocabSize)
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: the count is not a decimal integer below 2^64", line)
		}
		if c.Counts[id] != 0 {
			return nil, fmt.Errorf("line %d: the id appears twice", line)
		}
		c.Counts[id] = n
		c.Tokens += n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return c, nil
}
