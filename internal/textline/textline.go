// Package textline reads text one line at a time with a bound on a line's
// length. bufio.Scanner alone reports a line past its buffer as "token too
// long", which names neither the line nor the limit; an endless line (a
// device such as /dev/zero, a file with no newline) must fail at the
// limit, not grow a buffer without end. Scanner counts lines and its Err
// says which line was too long and what the limit is.
package textline

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
)

// Scanner reads lines (without their end, "\r\n" or "\n") of at most Max
// bytes each.
type Scanner struct {
	sc   *bufio.Scanner
	max  int
	line int
}

// NewScanner reads the lines of r, refusing one longer than max bytes.
func NewScanner(r io.Reader, max int) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(max, 64<<10)), max)
	return &Scanner{sc: sc, max: max}
}

// Scan reads the next line; false at the end of the input or on an error
// (see Err).
func (s *Scanner) Scan() bool {
	if !s.sc.Scan() {
		return false
	}
	s.line++
	return true
}

// Text is the line Scan read.
func (s *Scanner) Text() string { return s.sc.Text() }

// Line is the number of the line Scan read, from 1.
func (s *Scanner) Line() int { return s.line }

// Err is the error that ended Scan, nil at the end of the input. A line
// over the limit is a *TooLongError.
func (s *Scanner) Err() error {
	err := s.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return &TooLongError{Line: s.line + 1, Max: s.max}
	}
	return err
}

// TooLongError is a line longer than a Scanner's limit.
type TooLongError struct {
	Line int // its number, from 1
	Max  int // the limit, in bytes
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %s, the most a line may hold", e.Line, humanize.IBytes(uint64(e.Max)))
}
