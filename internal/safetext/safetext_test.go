package safetext

import (
	"fmt"
	"strings"
	"testing"
)

// hostile holds what a crafted file can put in a name: ESC, a CSI that
// clears the screen, an OSC that retitles the terminal ended by BEL, a CR
// that overwrites the line, backspace, DEL, a C1 CSI, a bidi override, a
// line separator, and invalid UTF-8.
var hostile = []string{"\x1b", "\x1b[2J", "\x1b]0;pwned\a", "\r", "\b", "\x7f", "\u009b31m", "\u202e", "\u2028", "\xff\xfe", "\n"}

func TestEscape(t *testing.T) {
	for _, h := range hostile {
		got := Escape("a" + h + "b")
		for _, c := range got {
			if c < ' ' || c == 0x7f || c >= 0x80 && c < 0xa0 || c == '\u202e' || c == '\u2028' || c == '\ufffd' {
				t.Errorf("Escape(%q) = %q keeps %U", h, got, c)
			}
		}
		if !strings.HasPrefix(got, "a") || !strings.HasSuffix(got, "b") || got == "ab" {
			t.Errorf("Escape(%q) = %q", h, got)
		}
	}
	for _, s := range []string{"blk.0.attn_q.weight", "▁the", "日本語 tokens", `a\b`} {
		if got := Escape(s); got != s {
			t.Errorf("Escape(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := Escape("\x1b[2J"); got != `\x1b[2J` {
		t.Errorf("ESC shown as %q", got)
	}
}

func TestNameAndMessage(t *testing.T) {
	long := strings.Repeat("é", 50000) // 100,000 bytes
	n := Name(long)
	if len(n) > MaxName+40 || !strings.Contains(n, "(100000 bytes)") {
		t.Errorf("Name of a 100 kB name: %d bytes, %q...", len(n), n[:40])
	}
	msg := Message(fmt.Sprintf("tensor %q: bad shape, at offset 24", long))
	if len(msg) > 2*MaxName || !strings.Contains(msg, "(100000 bytes)") || !strings.HasSuffix(msg, ": bad shape, at offset 24") {
		t.Errorf("message %d bytes: %q", len(msg), msg)
	}
	if got := Message("tensor \"x\x1b[2J\": raw \x1b]0;t\a"); strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("Message kept controls: %q", got)
	}
	if got := Message(strings.Repeat("x", 10000)); len(got) > MaxMessage+40 {
		t.Errorf("Message of 10 kB: %d bytes", len(got))
	}
}
