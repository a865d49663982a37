package main

import (
	"fmt"
	"io"
	"os"
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

// opened are the sources the command opened, and remoteTotal the counts of
// all remote files it touched (failed opens included), for --stats.
var (
	opened      []*source.Source
	remoteTotal hfremote.Stats
)

// openSource opens a SOURCE argument: a path, -, an https:// URL or an
// hf:// Hub path, with --token (else the environment's) for the Hub.
func openSource(cmd *cobra.Command, spec string) (*source.Source, error) {
	s, err := source.Open(cmd.Context(), spec, source.Options{Stdin: stdin, Token: tokenFlag, Stats: &remoteTotal})
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
func progress(quiet bool, what string) func(written, total int64) {
	f := progressTerminal(quiet)
	if f == nil {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(written, total int64) {
		if bar == nil {
			bar = newBar(f, total, what)
		}
		bar.Set64(written)
		if written >= total {
			bar.Finish()
		}
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

// newBar is the toolkit's byte progress bar with an ETA.
func newBar(f *os.File, total int64, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionEnableColorCodes(os.Getenv("NO_COLOR") == ""),
	)
}

// rate formats a throughput.
func rate(bytes int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return humanize.Bytes(uint64(float64(bytes)/d.Seconds())) + "/s"
}
