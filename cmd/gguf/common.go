package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/source"
)

// stderr and stdout are variables so tests can capture them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
	stdin  io.Reader = os.Stdin
)

// usageError marks an error as a usage problem (exit code 2).
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// inflight is the number of range requests each remote source keeps in
// flight (0: hfremote's default); gguf assemble sets it with --inflight.
var inflight int

// opened are the sources the command opened, and remoteTotal the counts of
// all remote files it touched (failed opens included), for --stats.
var (
	opened      []*source.Source
	remoteTotal hfremote.Stats
)

// openSource opens a SOURCE argument: a path, -, an https:// URL or an
// hf:// Hub path, with --token (else the environment's) for the Hub.
func openSource(cmd *cobra.Command, spec string) (*source.Source, error) {
	s, err := source.Open(cmd.Context(), spec, sourceOptions())
	if err == nil {
		opened = append(opened, s)
	}
	return s, err
}

// sourceOptions are the options every source is opened with.
func sourceOptions() source.Options {
	return source.Options{Stdin: stdin, Token: tokenFlag, Stats: &remoteTotal, Concurrency: inflight}
}

// openRawSource opens an input that is not a GGUF file (a path, an https://
// URL or an hf:// Hub path) as openSource does, header decoding its header.
func openRawSource(cmd *cobra.Command, spec string, header func(r io.ReaderAt, size int64) error) (*source.Source, error) {
	s, err := source.OpenRaw(cmd.Context(), spec, sourceOptions(), header)
	if err == nil {
		opened = append(opened, s)
	}
	return s, err
}

func init() { cobra.OnFinalize(printStats) }

// printStats prints what each remote source cost, with --stats, when the
// command ends (whether it succeeded or not), and the total when it is not
// one source's.
func printStats() {
	if !statsFlag {
		return
	}
	onScreen.clear()
	remote := 0
	for _, s := range opened {
		if s.Remote() {
			remote++
			fmt.Fprintf(stderr, "gguf: stats: %s: %s\n", s.Name, s.Stats())
		}
	}
	total := remoteTotal.Snapshot()
	switch {
	case total.Requests == 0:
		fmt.Fprintln(stderr, "gguf: stats: no remote requests")
	case remote != 1:
		fmt.Fprintf(stderr, "gguf: stats: total: %s\n", total)
	}
}

// planInput turns an opened source into a plan input.
func planInput(s *source.Source) *plan.Input { return s.PlanInput() }

// progress returns a progress callback drawing a bar on stderr, or nil when
// stderr is not a terminal or quiet is set: logs and pipes get only the
// final summary line.
func progress(quiet bool, what string) func(done, total int64) {
	f := progressTerminal(quiet)
	if f == nil {
		return nil
	}
	return barTo(f, what, os.Getenv("NO_COLOR") == "")
}

// barTo returns a progress callback drawing a byte bar on w. The bar is
// drawn at the first call, which plan.Execute makes before the first byte,
// so the rate it shows is measured from the start; until it has a rate
// sampled over half a second, the rate is the bytes over the time since
// then, drawn at most every 100 ms.
func barTo(w io.Writer, what string, color bool) func(done, total int64) {
	var bar *progressbar.ProgressBar
	return func(done, total int64) {
		if total <= 0 {
			return
		}
		if bar == nil {
			bar = newBar(w, total, what, color)
			onScreen.set(bar)
			bar.RenderBlank()
		}
		bar.Set64(done)
		if done >= total {
			bar.Finish()
			onScreen.set(nil)
		}
	}
}

// onScreen is the progress bar being drawn, if any: a message printed
// while it is (an interrupt, an error) first clears its line.
var onScreen screenBar

type screenBar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func (s *screenBar) set(b *progressbar.ProgressBar) {
	s.mu.Lock()
	s.bar = b
	s.mu.Unlock()
}

// clear stops the bar (later updates draw nothing) and blanks its line.
func (s *screenBar) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar != nil {
		s.bar.Exit()
		s.bar.Clear()
		s.bar = nil
	}
}

// progressTerminal returns stderr when a progress bar should be drawn on
// it: a terminal, not dumb, and not --quiet.
func progressTerminal(quiet bool) *os.File {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	return f
}

// newBar is the toolkit's byte progress bar with an ETA, on w.
func newBar(w io.Writer, total int64, what string, color bool) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionEnableColorCodes(color),
	)
}

// rate formats a throughput.
func rate(bytes int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return humanize.Bytes(uint64(float64(bytes)/d.Seconds())) + "/s"
}

// printWrote prints the summary line that ends a build. Its rate is that of
// the input read, the speed the model was processed at (a quantized output
// is a fraction of its input); of the output when nothing was read.
func printWrote(files string, written int64, p *plan.Plan, readBy map[string]int64, d time.Duration) {
	var read int64
	for _, n := range readBy {
		read += n
	}
	fmt.Fprintf(stderr, "gguf: wrote %s: %s (%d bytes), %s, read %s in %s (%s)\n",
		outputName(files), humanize.Bytes(uint64(written)), written, p.DescribeCounts(),
		humanize.Bytes(uint64(read)), d.Round(time.Millisecond), rate(cmp.Or(read, written), d))
}

// outputName names an output in a summary: stdout is not a file called "-".
func outputName(name string) string {
	if name == "-" {
		return "stdout"
	}
	return name
}
