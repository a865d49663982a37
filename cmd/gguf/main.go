package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/internal/safetext"
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

// Flags every command accepts.
var (
	tokenFlag string
	statsFlag bool
)

func init() {
	rootCmd.Version = version()
	rootCmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	rootCmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkFlags(cmd) }
	rootCmd.SetFlagErrorFunc(flagError)
	rootCmd.SetGlobalNormalizationFunc(normalizeFlag)
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&tokenFlag, "token", "", "Hugging Face token for hf:// sources (default: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, or the token file under HF_HOME)")
	pf.BoolVar(&statsFlag, "stats", false, "print the requests, bytes and retries of each remote source on stderr")
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// On Ctrl-C or SIGTERM, remove outputs in progress and leave at once,
		// even if the build is blocked reading a pipe or the network.
		s := <-sigs
		cancel()
		sink.RemoveAll()
		onScreen.clear()
		fmt.Fprintln(os.Stderr, "gguf: interrupted")
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	groupCommands(rootCmd)
	rootCmd.SetArgs(llamaSpellings(args))
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
	onScreen.clear()
	fmt.Fprintln(os.Stderr, "gguf: "+safetext.Message(err.Error()))
	return code
}
