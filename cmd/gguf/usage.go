package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// buildVersion and buildCommit are stamped by the Makefile (-ldflags
// "-X main.buildVersion=... -X main.buildCommit=..."), for builds where the
// toolchain records no module version or VCS information (go build in a
// checkout gives "(devel)", -buildvcs=false or a source tarball no commit).
var buildVersion, buildCommit string

// version is the module version and the commit the binary was built from:
// as stamped, else as the Go toolchain records them, else "devel".
func version() string {
	v, rev, modified, goVersion := buildVersion, buildCommit, "", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && buildCommit == "":
				modified = ", modified"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if rev != "" {
		v += fmt.Sprintf(" (commit %s%s)", rev, modified)
	}
	return v + ", " + goVersion
}

// flagError makes a flag parsing error one line with the command's help
// hint, suggesting the closest flag for an unknown one.
func flagError(c *cobra.Command, err error) error {
	hint := ""
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if s := closestFlag(c, name); s != "" {
			hint = fmt.Sprintf("; did you mean --%s?", s)
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%w%s (see '%s --help')", err, hint, c.CommandPath())}
}

// closestFlag returns the flag of c whose name is nearest to name, as
// cobra suggests commands: within two edits, or a prefix.
func closestFlag(c *cobra.Command, name string) string {
	best, bestD := "", 3
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := levenshtein.ComputeDistance(strings.ToLower(name), f.Name)
		if strings.HasPrefix(f.Name, name) {
			d = 1
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// groupCommands makes every command that only holds subcommands (gguf,
// gguf vocab) refuse an unknown subcommand with exit 2 and a suggestion,
// where cobra would print the help and exit 0 (or, for the root, a
// several-line message).
func groupCommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		groupCommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		hint := ""
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usageError("unknown command %q for %q%s (see '%s --help')", args[0], cmd.CommandPath(), hint, cmd.CommandPath())
	}
}
