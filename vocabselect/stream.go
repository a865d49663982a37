package vocabselect

import (
	"errors"
	"io"
	"unicode/utf8"
)

// DefaultChunkSize is the size of the pieces the streaming tokenizers
// (Count, TokenReader) cut a text into; a piece grows up to
// maxChunkFactor times that while no safe cut point turns up.
const DefaultChunkSize = 64 << 10

// maxChunkFactor bounds how far a chunk may grow past its size while no
// safe place to cut it turns up (a line longer than the chunk size).
const maxChunkFactor = 16

// streamMaxWord is the longest text a streaming session merges at once: a
// longer pre-tokenized word (a run of NUL bytes, a line of random CJK, which
// the pre-tokenizers keep whole) is merged in pieces of at most this many
// bytes, cut between characters.
// Merging costs about 110 bytes of scratch per byte of word, so this bounds
// it at 7 MB where a word of a whole chunk took hundreds of MB. Only such
// words (and text without a safe cut point for 16 chunk sizes) may get other
// tokens than one-shot tokenization, which merges every word whole.
const streamMaxWord = 64 << 10

// The streaming tokenizers' memory, besides the tokenizer itself, is
// bounded whatever the text: per worker one chunk of at most
// maxChunkFactor x DefaultChunkSize (1 MiB), its code point, offset and id
// buffers (about 40 bytes per byte), and the merge scratch of one
// streamMaxWord piece (7 MB): about 50 MB per worker; plus the chunks queued
// between the reader and the workers (1 MiB each, workers + 2 of them).

// streamSession is a pooled session that merges words in pieces of at most
// streamMaxWord bytes; putStreamSession returns it to the pool.
func (t *Tokenizer) streamSession() *session {
	s := t.getSession()
	s.maxWord = streamMaxWord
	return s
}

func (t *Tokenizer) putStreamSession(s *session) {
	s.maxWord = 0
	t.sessions.Put(s)
}

// charStart returns the last character start in b[1:n+1], so that b[:i]
// is a non-empty run of whole characters of at most n bytes (when b is
// valid UTF-8; any byte when it is not).
func charStart[T string | []byte](b T, n int) int {
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

// chunk is one piece of a text; first marks the text's start, last its end.
type chunk struct {
	text        string
	first, last bool
}

// chunker cuts a text read from r into pieces of about size bytes, at most
// maxChunkFactor times that. Each piece ends at the last safe cut point of
// what was read: a line break
// that follows a visible character and precedes a letter (lineCut), where
// no pre-tokenizer rule, BPE merge or WordPiece word reaches across and
// SentencePiece goes on without a new leading space, so tokenizing the
// pieces one after the other gives the tokens of the whole text (when the
// tokenizer is ChunkExact). While there is none, twice as much is read; a
// stretch of maxChunkFactor x size bytes without one is cut before its last space that follows a visible character and precedes a
// letter (exact for the byte-level BPE pre-tokenizers, where a space starts
// the next word) or, failing that, before its last character: only there
// may the tokens differ from tokenizing the text whole.
type chunker struct {
	t        *Tokenizer
	r        io.Reader
	buf      []byte
	base     int // the chunk size asked for
	size     int // what is read before looking for a cut
	eof      bool
	first    bool
	read     int64 // bytes read from r
	progress func(int64)
}

func (t *Tokenizer) newChunker(r io.Reader, size int, progress func(int64)) *chunker {
	if size <= 0 {
		size = DefaultChunkSize
	}
	return &chunker{t: t, r: r, buf: make([]byte, 0, 2*size), base: size, size: size, first: true, progress: progress}
}

// next returns the next piece of the text, io.EOF after the last.
func (c *chunker) next() (chunk, error) {
	for {
		if cap(c.buf) < c.size {
			c.buf = append(make([]byte, 0, c.size), c.buf...)
		}
		for len(c.buf) < c.size && !c.eof {
			n, err := c.r.Read(c.buf[len(c.buf):c.size])
			c.buf = c.buf[:len(c.buf)+n]
			c.read += int64(n)
			if c.progress != nil && n > 0 {
				c.progress(c.read)
			}
			if errors.Is(err, io.EOF) {
				c.eof = true
			} else if err != nil {
				return chunk{}, err
			}
		}
		if len(c.buf) == 0 {
			return chunk{}, io.EOF
		}
		n := len(c.buf)
		if !c.eof {
			n = c.t.cut(c.buf, c.size >= maxChunkFactor*c.base)
		}
		if n == 0 {
			c.size *= 2 // no safe place yet: read more before cutting
			continue
		}
		ch := chunk{text: string(c.buf[:n]), first: c.first}
		c.first, c.size = false, c.base
		c.buf = c.buf[:copy(c.buf, c.buf[n:])]
		ch.last = c.eof && len(c.buf) == 0
		return ch, nil
	}
}

// TokenReader tokenizes a text read from an io.Reader piece by piece, in
// order (see chunker and streamMaxWord), holding one piece of at most 1 MiB
// and its tokens at a time: the tokens are those of Encode except next to
// the forced cuts of text without safe cut points. Special tokens written in
// the text are recognized within a piece (with parseSpecial).
type TokenReader struct {
	t            *Tokenizer
	ch           *chunker
	s            *session
	addSpecial   bool
	parseSpecial bool
	ids          []int32
	bytes        int64
	tokens       int64
	done         bool
}

// NewTokenReader returns a TokenReader over r. With addSpecial the model's
// BOS comes before the first piece's tokens and its EOS after the last's,
// as Encode adds them.
func (t *Tokenizer) NewTokenReader(r io.Reader, addSpecial, parseSpecial bool) *TokenReader {
	return &TokenReader{t: t, ch: t.newChunker(r, 0, nil), s: t.streamSession(), addSpecial: addSpecial, parseSpecial: parseSpecial}
}

// Next returns the tokens of the next piece of the text, valid until the
// next call; io.EOF after the last piece (an empty text has one piece,
// empty or holding BOS/EOS).
func (tr *TokenReader) Next() ([]int32, error) {
	if tr.done {
		return nil, io.EOF
	}
	bos, eos := tr.t.affixes()
	ids := tr.ids[:0]
	c, err := tr.ch.next()
	if err == io.EOF {
		tr.done = true
		if !tr.ch.first { // the last piece ended where the text did: only EOS is left
			if !tr.addSpecial || eos < 0 {
				return nil, io.EOF
			}
			tr.ids = append(ids, eos)
			tr.tokens++
			return tr.ids, nil
		}
		c, err = chunk{first: true, last: true}, nil // an empty text
	}
	if err != nil {
		return nil, err
	}
	tr.done = c.last
	tr.bytes += int64(len(c.text))
	if tr.addSpecial && c.first && bos >= 0 {
		ids = append(ids, bos)
	}
	ids = tr.s.encodeText(ids, c.text, tr.parseSpecial, !c.first)
	if tr.addSpecial && c.last && eos >= 0 {
		ids = append(ids, eos)
	}
	tr.ids = ids
	tr.tokens += int64(len(ids))
	return ids, nil
}

// Bytes returns the bytes of text tokenized so far.
func (tr *TokenReader) Bytes() int64 { return tr.bytes }

// Tokens returns the number of tokens returned so far.
func (tr *TokenReader) Tokens() int64 { return tr.tokens }

// Close returns the reader's session to the tokenizer's pool.
func (tr *TokenReader) Close() {
	if tr.s != nil {
		tr.t.putStreamSession(tr.s)
		tr.s = nil
	}
}
