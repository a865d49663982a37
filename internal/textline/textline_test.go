package textline

import (
	"errors"
	"strings"
	"testing"
)

// TestScanner: lines are counted from 1 (a "\r\n" end is cut), and a line
// over the limit stops the scan with an error naming it and the limit.
func TestScanner(t *testing.T) {
	sc := NewScanner(strings.NewReader("a\r\n\nccc\n"+strings.Repeat("x", 17)+"\nnever"), 16)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
		if sc.Line() != len(got) {
			t.Fatalf("line %d after %d lines", sc.Line(), len(got))
		}
	}
	if strings.Join(got, "|") != "a||ccc" {
		t.Errorf("lines %q", got)
	}
	var tl *TooLongError
	if err := sc.Err(); !errors.As(err, &tl) || tl.Line != 4 || err.Error() != "line 4 is longer than 16 B, the most a line may hold" {
		t.Errorf("error %v", err)
	}
	sc = NewScanner(strings.NewReader("one\ntwo"), 16)
	for sc.Scan() {
	}
	if sc.Err() != nil || sc.Line() != 2 {
		t.Errorf("a last line without its newline: line %d, %v", sc.Line(), sc.Err())
	}
}
