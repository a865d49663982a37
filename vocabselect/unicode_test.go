package vocabselect

import (
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestLowerCpt checks lowerCpt's shortcut over the blocks without case
// against unicode.ToLower for every code point (and past the last one,
// which llama.cpp leaves as it is).
func TestLowerCpt(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune+0x10; r++ {
		want := r
		if r <= unicode.MaxRune {
			want = unicode.ToLower(r)
		}
		if got := lowerCpt(r); got != want {
			t.Fatalf("lowerCpt(%U) = %U, want %U", r, got, want)
		}
	}
}

// TestNFDCpt checks nfdCpt's tables against x/text's NFD of each code point
// alone: the first code point of the decomposition.
func TestNFDCpt(t *testing.T) {
	for r := rune(0); r < 0x30000; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		want, _ := utf8.DecodeRuneInString(norm.NFD.String(string(r)))
		if got := nfdCpt(r); got != want {
			t.Fatalf("nfdCpt(%U) = %U, want %U", r, got, want)
		}
	}
}
