// Command gguf inspects, rewrites and runs GGUF model files: local, piped
// or streamed from Hugging Face with range requests.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/sink"
)

// Exit codes, as CLI.md fixes them.
const (
	exitOK    = 0
	exitFound = 1 // the operation ran and found a difference or failed its check
	exitUsage = 2 // bad flags, missing files, invalid input
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error // nil: nothing more to print
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

var rootCmd = &cobra.Command{
	Use:   "gguf",
	Short: "Inspect, rewrite and run GGUF model files, local or straight from Hugging Face",
	Long: `gguf reads GGUF files from a path, stdin (-), an https:// URL or hf://owner/repo[@rev]/file,
and rewrites them in one streaming pass: prune and pad output heads, quantize, reorder experts,
add or drop tensors, edit metadata. Outputs go to a temporary file that is renamed only when
complete, or to stdout with -o -.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// On Ctrl-C, remove outputs in progress even if a write is blocked.
		<-ctx.Done()
		sink.RemoveAll()
	}()
	rootCmd.SetArgs(args)
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w (see 'gguf %s --help')", err, c.Name())}
	})
	err := rootCmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "gguf: interrupted")
		return 130
	}
	fmt.Fprintln(os.Stderr, "gguf: "+err.Error())
	return code
}
