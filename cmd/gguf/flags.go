package main

import (
	"fmt"
	"math"
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
	"--threads":                atLeast(1),
	"--head-rows":              atLeast(1),
	"--head-pad":               atLeast(1),
	"--align":                  atLeast(1),
	"--split-max-tensors":      atLeast(1),
	"--inflight":               atLeast(1),
	"--max-array":              atLeast(0),
	"--ctx":                    atLeast(1),
	"--chunks":                 atLeast(0),
	"--n-predict":              atLeast(-1),
	"--temp":                   atLeast(0),
	"--seed":                   atLeast(-1),
	"--top-k":                  atLeast(0),
	"--top-p":                  {min: 0, max: 1},
	"--min-p":                  {min: 0, max: 1},
	"--repeat-penalty":         {min: 0, max: math.Inf(1), above: true},
	"--repeat-last-n":          atLeast(0),
	"--rows":                   atLeast(1),
	"--keep-below":             atLeast(0),
	"--pad":                    atLeast(1),
	"--top":                    atLeast(0),
	"--experts":                atLeast(0),
	"--batch-size":             atLeast(0),
	"--moe-topp":               {min: 0, max: 1},
	"--moe-pool":               atLeast(0),
	"--moe-bias":               atLeast(0),
	"--moe-prefetch":           atLeast(0),
	"--moe-readers":            atLeast(1),
	"run --ctx":                atLeast(0),
	"vocab count --threads":    atLeast(0),
	"vocab select --threads":   atLeast(0),
	"vocab coverage --threads": atLeast(0),
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

// checkFlags refuses a numeric flag given outside its range, in one line.
func checkFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || !numericFlag(f) {
			return
		}
		b, ok := boundsOf(cmd, f)
		if !ok {
			return
		}
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		if perr != nil {
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
