package main

import (
	"fmt"
	"io"
	"os"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/internal/safetext"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/vocabselect"
)

// What the commands that run a model (run, perplexity, serve, demo) share:
// the model argument, the thread and kernel flags, opening a model with its
// tokenizer and inference states under the model flags, and where text for
// a person goes.

// modelPath returns the model of a run or perplexity command line: its
// argument or -m, llama.cpp's spelling.
func modelPath(args []string, m string) (string, error) {
	switch {
	case len(args) == 1 && m != "":
		return "", usageError("give MODEL or -m MODEL, not both")
	case len(args) == 1:
		return args[0], nil
	case m == "":
		return "", usageError("missing MODEL (or -m MODEL)")
	}
	return m, nil
}

// isTerminal reports whether v (stdin, stdout) is a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// generatedOutput returns where run writes text for a person: w, or, when
// escape is set (w is a terminal and --raw is not given), w behind a
// writer that escapes what a terminal would act on.
func generatedOutput(w io.Writer, escape bool) io.Writer {
	if escape {
		return safetext.NewTerminalWriter(w)
	}
	return w
}

// kernelsFlag adds --kernels to cmd: the dot-product kernels (package kernels),
// installed before the command runs (kernels.SelectKernels; the
// GGUF_KERNELS environment variable does the same for any command).
func kernelsFlag(cmd *cobra.Command) {
	var name string
	cmd.Flags().StringVar(&name, "kernels", "auto", "dot-product kernels: auto (the CPU's best), portable (Go), avx2 or vnni (amd64), neon or dotprod (arm64)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if err := kernels.SelectKernels(name); err != nil {
			return usageError("--kernels: %v", err)
		}
		return nil
	}
}

// loadModel opens a model, its tokenizer and an inference state with the
// model flags mf (nil: the defaults); verb names the command in the
// message for a model that is not a local file. The moeRun holds the
// pager's trace: close it when done.
func loadModel(verb, path string, mf *modelFlags, ctx, threads, batch int) (*engine.Model, *vocabselect.Tokenizer, *engine.State, *moeRun, error) {
	m, tok, ss, mr, err := loadModelSlots(verb, path, mf, ctx, threads, batch, 1)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return m, tok, ss[0], mr, nil
}

// loadModelSlots is loadModel with n inference states on the one model
// (serve's --parallel): each has its own KV cache and, when paging, its
// own expert pools.
func loadModelSlots(verb, path string, mf *modelFlags, ctx, threads, batch, n int) (*engine.Model, *vocabselect.Tokenizer, []*engine.State, *moeRun, error) {
	if mf == nil {
		mf = &modelFlags{policy: "lru", cacheK: "f16", cacheV: "f16"}
	}
	fail := func(err error) (*engine.Model, *vocabselect.Tokenizer, []*engine.State, *moeRun, error) {
		return nil, nil, nil, nil, err
	}
	if threads < 1 {
		return fail(usageError("--threads must be at least 1"))
	}
	if ctx < 0 {
		return fail(usageError("--ctx must not be negative"))
	}
	// The runtime memory-maps the weights, and pages experts from them.
	if path == "-" {
		return fail(usageError("-: %s needs a local file, not stdin: save the model to a file first", verb))
	}
	if hfremote.IsRemote(path) {
		return fail(usageError("%s: %s needs a local file: download it first with `gguf fetch %s -o model.gguf`", path, verb, path))
	}
	tk, tv, err := mf.cacheTypes()
	if err != nil {
		return fail(err)
	}
	g, err := mf.memGuard()
	if err != nil {
		return fail(err)
	}
	oo, err := mf.openOptions()
	if err != nil {
		return fail(err)
	}
	fit, err := fitBeforeOpen(verb, path, mf, g)
	if err != nil {
		return fail(err)
	}
	oo.PageExperts = mf.paged()
	po, err := mf.pagerOptions()
	if err != nil {
		return fail(err)
	}
	if po != nil && po.Direct && !mf.isGiven("moe-direct") && !directReads(path, mf.expertsFrom) {
		mf.direct, po.Direct = false, false // the default, not asked for: read through the page cache
	}
	m, err := engine.OpenWith(path, oo)
	if err != nil {
		return fail(err)
	}
	ctx = contextFor(verb, m, mf, ctx, n)
	if err := fitPools(verb, fit, mf, m, po, ctx, n); err != nil {
		m.Close()
		return fail(err)
	}
	tok, err := vocabselect.NewTokenizer(m.Metadata)
	if err != nil {
		m.Close()
		return fail(fmt.Errorf("%s: tokenizer: %w", path, err))
	}
	if tok.NumTokens() != m.Config.Vocab {
		m.Close()
		return fail(fmt.Errorf("%s: the tokenizer has %d tokens, token_embd %d rows", path, tok.NumTokens(), m.Config.Vocab))
	}
	mr := &moeRun{f: mf, guard: g}
	if err := mr.openTrace(path, m.Config.Experts); err != nil {
		m.Close()
		return fail(err)
	}
	so := engine.Options{Ctx: ctx, Threads: threads, Batch: batch, TypeK: tk, TypeV: tv, AttnEps: mf.attnEps, Pager: po, Trace: mr.trace}
	if po == nil {
		if so.Thrash, err = mf.flash(); err != nil {
			mr.abort()
			m.Close()
			return fail(err)
		}
	}
	var ss []*engine.State
	for range n {
		s, err := engine.NewState(m, so)
		if err != nil {
			for _, s := range ss {
				s.Close()
			}
			mr.abort()
			m.Close()
			return fail(err)
		}
		ss = append(ss, s)
	}
	return m, tok, ss, mr, nil
}

// weightsLine describes the weights' memory: all of them, or for a paged
// model the resident part and the pools.
func weightsLine(m *engine.Model, s *engine.State) string {
	if st := s.PagerStats(); st != nil {
		return fmt.Sprintf("weights %s resident of %s, expert pools %s", humanize.IBytes(uint64(m.ResidentBytes)),
			humanize.IBytes(uint64(m.WeightBytes)), humanize.IBytes(uint64(st.PoolBytes)))
	}
	return "weights " + humanize.IBytes(uint64(m.WeightBytes))
}

// directReads reports whether the experts' file (expertsFrom when given,
// else path) can be opened for direct I/O: not on every file system
// (tmpfs has no O_DIRECT) nor every OS.
func directReads(path, expertsFrom string) bool {
	if expertsFrom != "" {
		path = expertsFrom
	}
	f, err := osmem.OpenDirect(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
