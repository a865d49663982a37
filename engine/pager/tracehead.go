package pager

import "io"

// IsTrace reports whether r starts with a trace's first line, as
// TraceWriter writes it: a file that --moe-trace may replace without
// losing anything but an older trace.
func IsTrace(r io.Reader) bool {
	b := make([]byte, len(traceMagic)+1)
	if _, err := io.ReadFull(r, b); err != nil {
		return false
	}
	return string(b[:len(traceMagic)]) == traceMagic && (b[len(traceMagic)] == '\n' || b[len(traceMagic)] == '\r')
}
