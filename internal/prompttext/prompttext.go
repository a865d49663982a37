// Package prompttext is what gguf run does to the text of a prompt and of
// a generation as llama.cpp's tools do: -e's escapes (ProcessEscapes), the
// most bytes a context can hold (MaxBytes), and -r's reverse prompts found
// as the text comes (ReverseWatch). It works on text and a tokenizer's
// pieces only: it must not import the runtime (engine) or the CLI.
package prompttext

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/vocabselect"
)

// MaxBytes is the most text a context of ctx tokens can hold: each token
// stands for at most its longest piece's bytes (4 at least, an unknown
// character); with -e an escape (\xNN) is 4 bytes of one.
func MaxBytes(tok *vocabselect.Tokenizer, ctx int, escapes bool) int64 {
	longest := 4
	for id := range tok.NumTokens() {
		longest = max(longest, len(tok.TokenToPiece(int32(id), true)))
	}
	n := int64(ctx) * int64(longest)
	if escapes {
		n *= 4
	}
	return n
}

// ProcessEscapes replaces the escapes llama.cpp's -e processes
// (string_process_escapes): \n, \r, \t, \', \", \\ and \xNN; any other
// backslash stays as it is.
func ProcessEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '\'', '"', '\\':
			b.WriteByte(c)
		case 'x':
			if v, err := strconv.ParseUint(s[i+1:min(i+3, len(s))], 16, 8); err == nil && i+3 <= len(s) {
				b.WriteByte(byte(v))
				i += 2
				break
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ReverseWatch finds the -r prompts in generated text as it comes,
// keeping only the end of it that a prompt could still complete.
type ReverseWatch struct {
	prompts []string
	keep    int
	tail    []byte
}

// NewReverseWatch returns a ReverseWatch for prompts (none: it never
// finds one).
func NewReverseWatch(prompts []string) *ReverseWatch {
	w := &ReverseWatch{prompts: prompts}
	for _, p := range prompts {
		w.keep = max(w.keep, len(p))
	}
	return w
}

// Add appends a piece of text and reports whether a prompt ends within it.
func (w *ReverseWatch) Add(piece []byte) bool {
	if w.keep == 0 {
		return false
	}
	w.tail = append(w.tail, piece...)
	// A prompt found here ends in the new piece: one found before would
	// have stopped the generation then.
	for _, p := range w.prompts {
		if p != "" && bytes.Contains(w.tail, []byte(p)) {
			return true
		}
	}
	if n := len(w.tail) - (w.keep - 1); n > 0 {
		w.tail = w.tail[:copy(w.tail, w.tail[n:])]
	}
	return false
}
