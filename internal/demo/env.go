package demo

import (
	"io"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/source"
	"github.com/ggufkit/gguf/vocabselect"
)

// Env is what the demo takes from the command that runs it: where it
// prints, and the commands' own code for the steps it shares with them, so
// that each step runs what the command it prints would run.
type Env struct {
	// Out receives the demo's report.
	Out io.Writer
	// Load opens a model, its tokenizer and an inference state as gguf
	// run does at context ctx with threads threads; pool > 0 pages the
	// experts into pools of that many slots (--moe-pool, LRU).
	Load func(path string, pool, ctx, threads int) (*engine.Model, *vocabselect.Tokenizer, *engine.State, error)
	// PrintSummary prints a file's summary as gguf info does.
	PrintSummary func(io.Writer, *inspect.Summary)
	// TensorData serves a source's tensor bytes as gguf diff reads them.
	TensorData func(*source.Source) inspect.TensorData
}

// CheckError is a check of the demo that failed: the pipeline ran and
// gave other bytes or tokens than it must (the command exits 1 for it, as
// for a difference found, not 2 as for bad input).
type CheckError struct {
	Err error
}

func (e *CheckError) Error() string { return e.Err.Error() }

// Unwrap returns the check's message.
func (e *CheckError) Unwrap() error { return e.Err }
