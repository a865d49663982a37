package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bounds is the range a numeric flag accepts when given: [min, max], or
// (min, max] with above set.
type bounds struct {
	min, max float64
	above    bool
}

func atLeast(n float64) bounds { return bounds{min: n, max: math.Inf(1)} }

// flagBounds holds the range of every numeric flag, by flag name, or by
// command path and flag name where one command means something else by it
// ("vocab count --threads" takes 0 for all cores). A default outside the
// range means "not given" and is never checked; TestEveryNumericFlagBounded
// keeps this table complete.
var flagBounds = map[string]bounds{
	"--threads":                  atLeast(1),
	"--head-rows":                atLeast(1),
	"--head-pad":                 atLeast(1),
	"--align":                    atLeast(1),
	"--split-max-tensors":        atLeast(1),
	"--inflight":                 atLeast(1),
	"--max-array":                atLeast(0),
	"--ctx":                      atLeast(1),
	"--chunks":                   atLeast(0),
	"--n-predict":                atLeast(-1),
	"--temp":                     atLeast(0),
	"--seed":                     atLeast(-1),
	"--top-k":                    atLeast(0),
	"--top-p":                    {min: 0, max: 1},
	"--min-p":                    {min: 0, max: 1},
	"--spec-draft-p-min":         {min: 0, max: 1},
	"--repeat-penalty":           {min: 0, max: math.Inf(1), above: true},
	"--repeat-last-n":            atLeast(0),
	"--rows":                     atLeast(1),
	"--keep-below":               atLeast(0),
	"--pad":                      atLeast(1),
	"--top":                      atLeast(0),
	"--experts":                  atLeast(0),
	"--batch-size":               atLeast(0),
	"--moe-topp":                 {min: 0, max: 1},
	"--attn-eps":                 {min: 0, max: math.Nextafter(1, 0)}, // a threshold below 1, or 0 (off)
	"--moe-pool":                 atLeast(0),
	"--moe-bias":                 atLeast(0),
	"--moe-prefetch":             atLeast(0),
	"--moe-readers":              atLeast(1),
	"--threads-batch":            atLeast(-1),
	"--spec-draft-n-max":         atLeast(1),
	"--spec-draft-n-min":         atLeast(0),
	"--spec-ngram-simple-size-n": atLeast(1),
	"--spec-ngram-simple-size-m": atLeast(1),
	"run --ctx":                  atLeast(0),
	"serve --ctx":                atLeast(0),
	"--port":                     {min: 0, max: 65535},
	"--parallel":                 atLeast(1),
	"--queue":                    atLeast(0),
	"--timeout":                  atLeast(1),
	"vocab count --threads":      atLeast(0),
	"vocab select --threads":     atLeast(0),
	"vocab coverage --threads":   atLeast(0),
}

// flagAliases are llama.cpp's spellings of flags whose names here differ:
// the alias is read as the flag (see normalizeFlag).
var flagAliases = map[string]string{
	"output-tensor-type":   "output-type",
	"token-embedding-type": "embd-type",
	"ctx-size":             "ctx",
}

// normalizeFlag maps llama.cpp's spellings to this tool's flag names, for
// every command (cobra's global normalization).
func normalizeFlag(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if canonical, ok := flagAliases[name]; ok {
		return pflag.NormalizedName(canonical)
	}
	return pflag.NormalizedName(name)
}

// numericFlag reports whether f holds a number.
func numericFlag(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return true
	}
	return false
}

// boundsOf returns the range of cmd's flag f.
func boundsOf(cmd *cobra.Command, f *pflag.Flag) (bounds, bool) {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if b, ok := flagBounds[path+" --"+f.Name]; ok {
		return b, true
	}
	b, ok := flagBounds["--"+f.Name]
	return b, ok
}

// checkFlags refuses a numeric flag given outside its range, or not a
// finite number, in one line.
func checkFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if why := f.Annotations[ignoredAnnotation]; len(why) > 0 {
			fmt.Fprintf(stderr, "gguf: note: --%s ignored: %s\n", f.Name, why[0])
		}
		if err != nil || !numericFlag(f) {
			return
		}
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		if perr != nil {
			return
		}
		// NaN fails every comparison below and Inf passes the open-ended
		// ones, so neither would be caught by a range.
		if math.IsNaN(v) || math.IsInf(v, 0) {
			err = usageError("--%s %s: must be a finite number (see '%s --help')", f.Name, f.Value, cmd.CommandPath())
			return
		}
		b, ok := boundsOf(cmd, f)
		if !ok {
			return
		}
		if v < b.min || v > b.max || b.above && v == b.min {
			err = usageError("--%s %s: %s (see '%s --help')", f.Name, f.Value, b.describe(), cmd.CommandPath())
		}
	})
	return err
}

// describe says what a value must be.
func (b bounds) describe() string {
	switch {
	case b.above && math.IsInf(b.max, 1):
		return fmt.Sprintf("must be more than %g", b.min)
	case math.IsInf(b.max, 1):
		return fmt.Sprintf("must be at least %g", b.min)
	}
	return fmt.Sprintf("must be between %g and %g", b.min, b.max)
}

// llamaFlag is llama.cpp's spelling of a flag that pflag cannot read as
// it is (a single-dash long name such as -ngl, which it takes for -n gl)
// or that this tool names otherwise.
type llamaFlag struct {
	names []string // llama.cpp's spellings
	flag  string   // this tool's, with =VALUE when the spelling sets one
	// values are the values the flag may take as the next argument; a
	// spelling without one of them sets the flag's default (NoOptDefVal).
	values []string
	cmds   []string // the commands that take it
}

var (
	runOnly   = []string{"run"}
	bothModel = []string{"run", "perplexity"}
	// cpuModel take llama.cpp's GPU and batch-thread flags (ignored).
	cpuModel  = []string{"run", "perplexity", "serve"}
	serveOnly = []string{"serve"}
)

// llamaFlags are the llama-cli, llama-completion and llama-perplexity
// spellings rewritten before cobra parses (see llamaSpellings).
var llamaFlags = []llamaFlag{
	{names: []string{"-cnv", "--conversation", "-i", "--interactive"}, flag: "--chat", cmds: runOnly},
	{names: []string{"-no-cnv", "--no-conversation"}, flag: "--chat=false", cmds: runOnly},
	{names: []string{"-sys", "--system-prompt"}, flag: "--system", cmds: runOnly},
	{names: []string{"-st"}, flag: "--single-turn", cmds: runOnly},
	{names: []string{"--prompt-file"}, flag: "--file", cmds: bothModel},
	{names: []string{"-ngl", "--gpu-layers"}, flag: "--n-gpu-layers", cmds: cpuModel},
	{names: []string{"-tb"}, flag: "--threads-batch", cmds: cpuModel},
	{names: []string{"-np"}, flag: "--parallel", cmds: serveOnly},
	{names: []string{"-to"}, flag: "--timeout", cmds: serveOnly},
	{names: []string{"-ctk"}, flag: "--cache-type-k", cmds: cpuModel},
	{names: []string{"-ctv"}, flag: "--cache-type-v", cmds: cpuModel},
	{names: []string{"-fa", "--flash-attn"}, flag: "--flash-attn", values: []string{"on", "off", "auto", "1", "0", "-1", "true", "false", "enabled", "disabled"}, cmds: cpuModel},
}

// llamaSpellings rewrites the llamaFlags spellings in args into this
// tool's, for the command args name. A flag's value is never rewritten
// (-p -cnv prompts "-cnv"), nor anything after "--".
func llamaSpellings(args []string) []string {
	cmd, _, err := rootCmd.Find(args)
	if err != nil || cmd == rootCmd {
		return slices.Clone(args)
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, value, hasValue := strings.Cut(a, "=")
		if lf := findLlamaFlag(cmd.Name(), name); lf != nil {
			switch {
			case hasValue:
				out = append(out, lf.flag+"="+value)
			case lf.values != nil && i+1 < len(args) && slices.Contains(lf.values, args[i+1]):
				out = append(out, lf.flag+"="+args[i+1])
				i++
			default:
				out = append(out, lf.flag)
			}
			continue
		}
		out = append(out, a)
		if !hasValue && takesValue(cmd, a) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// findLlamaFlag returns the llamaFlags entry of spelling name in command
// cmd, or nil.
func findLlamaFlag(cmd, name string) *llamaFlag {
	for i, lf := range llamaFlags {
		if slices.Contains(lf.cmds, cmd) && slices.Contains(lf.names, name) {
			return &llamaFlags[i]
		}
	}
	return nil
}

// takesValue reports whether arg is a flag of cmd that reads the next
// argument as its value.
func takesValue(cmd *cobra.Command, arg string) bool {
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(arg, "--"):
		if f = cmd.Flags().Lookup(arg[2:]); f == nil {
			f = cmd.InheritedFlags().Lookup(arg[2:])
		}
	case len(arg) == 2 && arg[0] == '-':
		f = cmd.Flags().ShorthandLookup(arg[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

// ignoredAnnotation marks a flag accepted for llama.cpp's command lines
// that means nothing here; its value says why, in the note printed when
// the flag is given (checkFlags).
const ignoredAnnotation = "gguf_ignored"

// addLlamaCPUFlags adds llama.cpp's GPU and batch-thread flags to cmd,
// accepted so a llama.cpp command line runs, and ignored with a note.
func addLlamaCPUFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("n-gpu-layers", "", "llama.cpp's layers on the GPU (-ngl N|auto|all): accepted and ignored, this runtime runs on the CPU")
	fl.String("flash-attn", "", "llama.cpp's flash attention (-fa [on|off|auto]): accepted and ignored, this runtime has one attention")
	fl.Lookup("flash-attn").NoOptDefVal = "on"
	fl.Int("threads-batch", 0, "llama.cpp's prompt threads (-tb N): accepted and ignored, prompts use the --threads workers")
	for name, why := range map[string]string{
		"n-gpu-layers":  "this runtime runs on the CPU only",
		"flash-attn":    "this runtime has one attention implementation",
		"threads-batch": "prompts use the --threads workers",
	} {
		fl.SetAnnotation(name, ignoredAnnotation, []string{why})
	}
}

// printJSON prints v as indented JSON on stdout (the --json reports).
func printJSON(v any) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
