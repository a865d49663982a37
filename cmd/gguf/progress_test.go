package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// TestBarStartsAtZeroAndClearsItsLine: the bar is drawn at 0 when the build
// starts (so its rate is measured from there, not from the first MiB), and
// clearing it for a message (an interrupt, an error) blanks its line and
// stops it drawing.
func TestBarStartsAtZeroAndClearsItsLine(t *testing.T) {
	var w bytes.Buffer
	const total = 100 << 20
	fn := barTo(&w, "build", false)
	fn(0, total)
	if !strings.Contains(w.String(), "0%") || strings.Contains(w.String(), "/s") {
		t.Fatalf("first draw %q: want a bar at 0%% with no rate yet", w.String())
	}
	for done := int64(1 << 20); done < total/2; done += 1 << 20 {
		fn(done, total)
	}
	onScreen.clear()
	drawn := w.String()
	bar := drawn[strings.LastIndex(drawn[:len(drawn)-1], "\r")+1:]
	if len(bar) < 40 || strings.Trim(bar, " ") != "\r" {
		t.Fatalf("after clear the line is not blank: %q", drawn[max(0, len(drawn)-200):])
	}
	fn(total/2+1<<20, total)
	fn(total, total)
	if w.String() != drawn {
		t.Fatalf("the bar drew after being cleared: %q", w.String()[len(drawn):])
	}
}

// TestUnreachableSourceFailsAtOnce: a port nothing listens on is one line
// and one request, not eight tries over 45 seconds.
func TestUnreachableSourceFailsAtOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := runGGUF(t, nil, "info", "--stats", "https://"+addr+"/m.gguf")
	lines := strings.Split(strings.TrimRight(string(r.stderr), "\n"), "\n")
	if r.code != exitUsage || len(lines) != 2 || !strings.Contains(lines[0], "1 requests") || !strings.Contains(lines[0], "0 retries") ||
		lines[1] != "gguf: https://"+addr+"/m.gguf: connection to "+addr+" refused: no server listens there" {
		t.Fatalf("exit %d, stderr %q: want one request and one line saying the connection was refused", r.code, r.stderr)
	}
}
