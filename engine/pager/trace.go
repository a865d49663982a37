package pager

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A trace records, call by call, which experts each MoE layer used: one
// line "LAYER: E E E ..." per call (a token when decoding one at a time,
// a batch of a prompt otherwise), after a header
//
//	# gguf moe trace v1
//	experts N
//
// Experts are listed in the order the pool was asked for them. The text
// form keeps traces readable and diffable; a 3,072-token trace of a
// 24-layer, top-8 model is about 1.5 MB.

// traceMagic is the first line of a trace.
const traceMagic = "# gguf moe trace v1"

// Call is one call of a layer: the distinct experts it used.
type Call struct {
	Layer   int
	Experts []int
}

// Trace is a recorded sequence of calls.
type Trace struct {
	// Experts is the number of experts per layer.
	Experts int
	Calls   []Call
}

// TraceWriter writes a trace as calls happen.
type TraceWriter struct {
	w   *bufio.Writer
	err error
}

// NewTraceWriter writes the header of a trace of layers of experts
// experts to w.
func NewTraceWriter(w io.Writer, experts int) *TraceWriter {
	t := &TraceWriter{w: bufio.NewWriter(w)}
	_, t.err = fmt.Fprintf(t.w, "%s\nexperts %d\n", traceMagic, experts)
	return t
}

// Call appends one call. Errors are kept for Flush.
func (t *TraceWriter) Call(layer int, experts []int) {
	if t.err != nil {
		return
	}
	b := t.w.AvailableBuffer()
	b = strconv.AppendInt(b, int64(layer), 10)
	b = append(b, ':')
	for _, e := range experts {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e), 10)
	}
	b = append(b, '\n')
	_, t.err = t.w.Write(b)
}

// Flush writes what is buffered and returns the first error.
func (t *TraceWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}

// maxTraceExperts bounds the header's expert count (the largest MoE has
// a few hundred experts per layer).
const maxTraceExperts = 1 << 16

// maxTraceLayer bounds layer numbers.
const maxTraceLayer = 1 << 16

// ReadTrace reads a trace written by TraceWriter. Every number is checked:
// layers and experts in range, no expert twice in a call.
func ReadTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	next := func() (string, bool) {
		for sc.Scan() {
			line++
			if s := strings.TrimSpace(sc.Text()); s != "" {
				return s, true
			}
		}
		return "", false
	}
	if s, ok := next(); !ok || s != traceMagic {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("not a gguf moe trace (the first line must be %q)", traceMagic)
	}
	t := &Trace{}
	s, _ := next()
	n, ok := strings.CutPrefix(s, "experts ")
	var err error
	if t.Experts, err = strconv.Atoi(n); !ok || err != nil || t.Experts <= 0 || t.Experts > maxTraceExperts {
		return nil, fmt.Errorf("line %d: expected \"experts N\" with 0 < N <= %d, got %q", line, maxTraceExperts, s)
	}
	seen := make([]int, t.Experts)
	for {
		s, ok := next()
		if !ok {
			break
		}
		ls, rest, ok := strings.Cut(s, ":")
		l, err := strconv.Atoi(ls)
		if !ok || err != nil || l < 0 || l >= maxTraceLayer {
			return nil, fmt.Errorf("line %d: expected \"LAYER: E E ...\", got %q", line, s)
		}
		c := Call{Layer: l}
		for _, f := range strings.Fields(rest) {
			e, err := strconv.Atoi(f)
			if err != nil || e < 0 || e >= t.Experts {
				return nil, fmt.Errorf("line %d: expert %q is not in [0, %d)", line, f, t.Experts)
			}
			if seen[e] == line {
				return nil, fmt.Errorf("line %d: expert %d appears twice", line, e)
			}
			seen[e] = line
			c.Experts = append(c.Experts, e)
		}
		t.Calls = append(t.Calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return t, nil
}
