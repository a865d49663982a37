// Package safetext makes text read from a file safe to print on a terminal.
// A downloaded GGUF is untrusted: a name holding ESC, CSI or OSC sequences,
// BEL, CR or backspaces could retitle the terminal, clear the screen or
// overwrite what was printed before it, and a 100 kB name would drown a
// one-line message. Escape, Name and Message print such text visibly and
// briefly; JSON output needs none of this (encoding/json escapes it).
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every byte a terminal could act on written as a Go
// escape: C0 and C1 controls, DEL, invalid UTF-8 (\xNN), and the Unicode
// format and separator characters that reorder or break lines (bidi
// overrides, U+2028). Printable text, spaces included, is unchanged.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// clean reports whether s is printable ASCII, the common case.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// MaxName is how many bytes of a name Name keeps.
const MaxName = 200

// Name returns s escaped and cut to MaxName bytes (at a character
// boundary), with its length noted when cut: for names in tables and
// messages.
func Name(s string) string {
	return Escape(cut(s, MaxName))
}

// cut keeps the first max bytes of s (whole characters) and notes the
// full length.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	k := max
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:k], len(s))
}

// MaxMessage bounds a whole message, whatever it quotes.
const MaxMessage = 2000

// Message makes an error message safe and short: every quoted string in it
// (Go's %q, which escapes controls already) longer than MaxName is cut,
// then the rest is escaped and the whole bounded by MaxMessage.
func Message(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := quoteEnd(s, i)
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		q := s[i : j+1]
		if len(q) > MaxName+2 {
			body := cut(q[1:len(q)-1], MaxName)
			k := strings.LastIndex(body, "... (")
			q = `"` + body[:k] + `"...` + body[k+3:]
		}
		b.WriteString(q)
		s = s[j+1:]
	}
	return Escape(cut(b.String(), MaxMessage))
}

// quoteEnd returns the index of the quote closing the one at s[i], or -1.
func quoteEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}
