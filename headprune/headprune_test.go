package headprune

import (
	"slices"
	"strings"
	"testing"
)

// TestReadIDs checks the ids file format and its errors.
func TestReadIDs(t *testing.T) {
	ids, err := ReadIDs(strings.NewReader("# header\n\n5\n 3 # comment\n0\n"), 10)
	if err != nil || !slices.Equal(ids, []int32{5, 3, 0}) {
		t.Fatalf("got %v, %v", ids, err)
	}
	for _, c := range []struct{ in, want string }{
		{"1\n2\n1\n", "line 3: id 1 repeats line 1"},
		{"1\n10\n", "line 2: id 10 is outside"},
		{"-1\n", "line 1: id -1 is outside"},
		{"1\nx\n", "line 2: \"x\" is not a token id"},
		{"99999999999999999999\n", "line 1"},
	} {
		_, err := ReadIDs(strings.NewReader(c.in), 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}
