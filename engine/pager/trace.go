package pager

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/internal/textline"
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

// maxTraceCells bounds layers times experts: every simulated pool holds
// a few words per expert of each layer it sees, so a trace naming 65,536
// layers of 65,536 experts would ask for terabytes. The largest models
// have a few hundred experts in fewer than a hundred layers (~32 K).
const maxTraceCells = 1 << 20

// MaxTraceLine is the longest line a trace may have: a call of every
// expert of the largest layer, with room to spare.
const MaxTraceLine = 1 << 20

// TraceReader reads a trace one call at a time, in memory independent of
// the trace's length. Every number is checked: layers and experts in
// range, no expert twice in a call. An error names the line and what is
// wrong there, never the line's text (a trace may be any file).
type TraceReader struct {
	sc      *textline.Scanner
	experts int
	seen    []int  // per expert: the line it was last seen on
	layer   []bool // layers seen
	layers  int
	call    Call
	err     error
}

// NewTraceReader reads the header of a trace written by TraceWriter.
func NewTraceReader(r io.Reader) (*TraceReader, error) {
	t := &TraceReader{sc: textline.NewScanner(r, MaxTraceLine)}
	s, ok := t.next()
	if !ok || s != traceMagic {
		if err := t.sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("not a gguf moe trace (the first line must be %q)", traceMagic)
	}
	s, _ = t.next()
	n, ok := strings.CutPrefix(s, "experts ")
	e, err := strconv.Atoi(n)
	if !ok || err != nil || e <= 0 || e > maxTraceExperts {
		if err := t.sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line %d: expected \"experts N\" with 0 < N <= %d", t.sc.Line(), maxTraceExperts)
	}
	t.experts, t.seen = e, make([]int, e)
	return t, nil
}

// next returns the next line that is not blank, trimmed.
func (t *TraceReader) next() (string, bool) {
	for t.sc.Scan() {
		if s := strings.TrimSpace(t.sc.Text()); s != "" {
			return s, true
		}
	}
	return "", false
}

// Experts is the number of experts per layer.
func (t *TraceReader) Experts() int { return t.experts }

// Line is the number of the line last read.
func (t *TraceReader) Line() int { return t.sc.Line() }

// Next reads the next call; false at the end of the trace or on an error
// (see Err).
func (t *TraceReader) Next() bool {
	if t.err != nil {
		return false
	}
	s, ok := t.next()
	if !ok {
		if err := t.sc.Err(); err != nil {
			t.err = err
		}
		return false
	}
	line := t.sc.Line()
	ls, rest, ok := strings.Cut(s, ":")
	l, err := strconv.Atoi(ls)
	if !ok || err != nil || l < 0 || l >= maxTraceLayer {
		t.err = fmt.Errorf("line %d: expected \"LAYER: E E ...\" with 0 <= LAYER < %d", line, maxTraceLayer)
		return false
	}
	if t.layer == nil {
		t.layer = make([]bool, maxTraceLayer)
	}
	if !t.layer[l] {
		if (t.layers+1)*t.experts > maxTraceCells {
			t.err = fmt.Errorf("line %d: %d layers of %d experts: more than the %d layer-experts a trace may have", line, t.layers+1, t.experts, maxTraceCells)
			return false
		}
		t.layer[l] = true
		t.layers++
	}
	t.call.Layer, t.call.Experts = l, t.call.Experts[:0]
	for _, f := range strings.Fields(rest) {
		e, err := strconv.Atoi(f)
		if err != nil || e < 0 || e >= t.experts {
			t.err = fmt.Errorf("line %d: an expert is not a number in [0, %d)", line, t.experts)
			return false
		}
		if t.seen[e] == line {
			t.err = fmt.Errorf("line %d: an expert appears twice", line)
			return false
		}
		t.seen[e] = line
		t.call.Experts = append(t.call.Experts, e)
	}
	return true
}

// Call is the call Next read; its Experts are overwritten by the next one.
func (t *TraceReader) Call() Call { return t.call }

// Err is the error that ended Next, nil at the end of the trace.
func (t *TraceReader) Err() error { return t.err }

// ReadTrace reads a whole trace into memory (see TraceReader to read one
// call at a time).
func ReadTrace(r io.Reader) (*Trace, error) {
	tr, err := NewTraceReader(r)
	if err != nil {
		return nil, err
	}
	t := &Trace{Experts: tr.Experts()}
	for tr.Next() {
		c := tr.Call()
		t.Calls = append(t.Calls, Call{Layer: c.Layer, Experts: slices.Clone(c.Experts)})
	}
	if err := tr.Err(); err != nil {
		return nil, err
	}
	return t, nil
}
