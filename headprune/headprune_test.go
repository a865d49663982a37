package headprune

import (
	"slices"
	"strings"
	"testing"
)

// TestReadIDs checks the ids file format and its errors, which name the
// line and what is wrong but never quote the file's text (it may be any
// file a recipe names), and a line longer than the limit, which is said
// with its number and the limit.
func TestReadIDs(t *testing.T) {
	ids, err := ReadIDs(strings.NewReader("# header\n\n5\n 3 # comment\n0\n"), 10)
	if err != nil || !slices.Equal(ids, []int32{5, 3, 0}) {
		t.Fatalf("got %v, %v", ids, err)
	}
	for _, c := range []struct{ in, want string }{
		{"1\n2\n1\n", "line 3: the id repeats line 1"},
		{"1\n10\n", "line 2: the id is outside the vocabulary (0..9)"},
		{"-1\n", "line 1: the id is outside"},
		{"1\nsecret\n", "line 2: not a token id"},
		{"99999999999999999999\n", "line 1"},
		{"1\n" + strings.Repeat("7", MaxIDsLine+1), "line 2 is longer than 1.0 MiB"},
	} {
		_, err := ReadIDs(strings.NewReader(c.in), 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.20q: error %v, want %q", c.in, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "999") || strings.Contains(err.Error(), "777")) {
			t.Errorf("%.20q: the error %q quotes the file", c.in, err)
		}
	}
}
