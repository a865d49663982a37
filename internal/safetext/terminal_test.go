package safetext

import (
	"bytes"
	"testing"
)

// TestTerminalWriter: controls are escaped but newlines and tabs kept,
// and a character spelled over several writes (byte tokens) comes out
// whole, not as escaped bytes.
func TestTerminalWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewTerminalWriter(&b)
	for _, p := range []string{"time\x1b[2J", "\x1b]0;pwned\a", "a\tb\n", "\xe6", "\x97", "\xa5 ok\r\n", "\xff\n"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	want := `time\x1b[2J\x1b]0;pwned\x07a` + "\tb\n日 ok\\x0d\n\\xff\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
