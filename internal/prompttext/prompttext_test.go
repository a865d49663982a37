package prompttext

import "testing"

// TestProcessEscapes: llama.cpp's escapes are replaced, anything else
// after a backslash (an unknown letter, a short \x, a last backslash) is
// kept as it is.
func TestProcessEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:          "plain",
		`a\nb\tc\rd`:     "a\nb\tc\rd",
		`\'\"\\`:         `'"\`,
		`\x41\x4a!`:      "AJ!",
		`\x4`:            `\x4`,
		`\xZZ`:           `\xZZ`,
		`\q and end \`:   `\q and end \`,
		`\\n is escaped`: `\n is escaped`,
	} {
		if got := ProcessEscapes(in); got != want {
			t.Errorf("ProcessEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReverseWatch: a prompt split over pieces is found in the piece that
// completes it, and not before; without prompts nothing is found.
func TestReverseWatch(t *testing.T) {
	w := NewReverseWatch([]string{"User:", "###"})
	for i, c := range []struct {
		piece string
		found bool
	}{{"Hello Us", false}, {"e", false}, {"r", false}, {":", true}} {
		if got := w.Add([]byte(c.piece)); got != c.found {
			t.Fatalf("piece %d %q: found %v, want %v", i, c.piece, got, c.found)
		}
	}
	if NewReverseWatch(nil).Add([]byte("User:")) {
		t.Fatal("a watch without prompts found one")
	}
}
