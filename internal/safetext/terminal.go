package safetext

import (
	"io"
	"strings"
	"unicode/utf8"
)

// TerminalWriter writes generated text to a terminal: each line's
// characters as Escape writes them, newlines and tabs as they are (a
// terminal only lays them out). A character cut between two writes (a
// model's byte tokens spell one a byte at a time) is held until the next
// write shows whether it completes; text ending in the middle of one
// keeps those bytes, at most three, unwritten.
type TerminalWriter struct {
	w    io.Writer
	tail []byte
}

// NewTerminalWriter returns a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write writes p escaped, holding an incomplete last character back. It
// reports all of p written unless w fails.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	b := append(t.tail, p...)
	n := len(b) - incomplete(b)
	var out strings.Builder
	for line := range strings.SplitAfterSeq(string(b[:n]), "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		for i, cell := range strings.Split(body, "\t") {
			if i > 0 {
				out.WriteByte('\t')
			}
			out.WriteString(Escape(cell))
		}
		if nl {
			out.WriteByte('\n')
		}
	}
	t.tail = append(t.tail[:0:0], b[n:]...)
	if _, err := io.WriteString(t.w, out.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incomplete returns how many bytes at the end of b start a UTF-8
// character that later bytes could still complete.
func incomplete(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if b[i] >= utf8.RuneSelf && !utf8.FullRune(b[i:]) {
				return len(b) - i
			}
			return 0
		}
	}
	return 0
}
