package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/plan"
)

func init() { rootCmd.AddCommand(newFetchCmd()) }

func newFetchCmd() *cobra.Command {
	var bf buildFlags
	var include, exclude, revision, localDir string
	var globs []string
	cmd := &cobra.Command{
		Use:   "fetch SOURCE -o OUT | fetch OWNER/REPO FILE [--local-dir DIR]",
		Short: "Download a GGUF file, or only the tensors you select, with range requests",
		Long: `Writes a new, valid GGUF file holding all of SOURCE's metadata and the tensors whose names match
--tensors (default: all) and not --exclude, in their original order. From a remote SOURCE
(hf://owner/repo[@rev]/file.gguf or an https:// URL) only the header and the selected tensors are
downloaded, several ranges at a time; a whole file is checked against the sha256 the Hub
published before OUT is written. A split model is fetched from its first file.

As huggingface-cli download spells it, OWNER/REPO FILE is hf://OWNER/REPO/FILE, and
--local-dir DIR writes DIR/FILE (the directories made as needed) when -o is not given.`,
		Example: `  # only the non-expert tensors of a 10 GB MoE model (the experts are 90% of it)
  gguf fetch hf://bartowski/inclusionAI_Ling-mini-2.0-GGUF/inclusionAI_Ling-mini-2.0-Q4_K_M.gguf --exclude '_exps\.' -o ling-dense-part.gguf

  # huggingface-cli's spelling: writes models/Qwen3.5-0.8B-Q4_K_M.gguf
  gguf fetch unsloth/Qwen3.5-0.8B-GGUF Qwen3.5-0.8B-Q4_K_M.gguf --local-dir models

  # a whole file, checked, with the cost on stderr
  gguf fetch --stats hf://unsloth/Qwen3.5-0.8B-GGUF/Qwen3.5-0.8B-Q4_K_M.gguf -o qwen3.5-0.8b.gguf

  # the output head and embeddings of a gated model
  HF_TOKEN=hf_... gguf fetch hf://meta-llama/Llama-3.2-1B-GGUF/model.gguf --tensors '^(output|token_embd)\.' -o head.gguf`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, file, err := fetchSource(args)
			if err != nil {
				return err
			}
			if localDir != "" {
				if bf.out != "" {
					return usageError("give -o OUT or --local-dir DIR, not both")
				}
				if file == "" {
					file = hubFileName(spec)
				}
				bf.out = filepath.Join(localDir, filepath.FromSlash(file))
				if err := os.MkdirAll(filepath.Dir(bf.out), 0o755); err != nil {
					return usageError("--local-dir: %v", err)
				}
			}
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout) or --local-dir DIR")
			}
			inc, err := compileFilter("--tensors", include)
			if err != nil {
				return err
			}
			exc, err := compileFilter("--exclude", exclude)
			if err != nil {
				return err
			}
			for _, g := range globs {
				if _, err := path.Match(g, ""); err != nil {
					return usageError("--include %q: %v", g, err)
				}
			}
			if revision != "" {
				if spec, err = hfremote.WithRevision(spec, revision); err != nil {
					return usageError("--revision: %v", err)
				}
			}
			src, err := openSource(cmd, spec)
			if err != nil {
				return err
			}
			defer src.Close()
			if err := bf.checkMerge(src, spec); err != nil {
				return err
			}
			p := selectTensors(plan.Identity(planInput(src)), inc, exc, globs)
			if len(p.Tensors) == 0 && len(src.File().Tensors) > 0 {
				return usageError("no tensor of %s matches --tensors %q, --include %q and not --exclude %q", spec, include, globs, exclude)
			}
			return writePlan(cmd, p, nil, bf)
		},
	}
	bf.register(cmd)
	bf.registerMerge(cmd)
	cmd.Flags().StringVar(&include, "tensors", "", "keep only tensors whose name matches REGEX (default: all)")
	cmd.Flags().StringVar(&exclude, "exclude", "", "drop tensors whose name matches REGEX")
	cmd.Flags().StringArrayVar(&globs, "include", nil, "keep only tensors whose name matches GLOB (huggingface-cli's spelling, with tensor names for file names), repeatable")
	cmd.Flags().StringVar(&revision, "revision", "", "the revision of an hf:// SOURCE (a branch, tag, commit or refs/pr/N), as huggingface-cli's --revision")
	cmd.Flags().StringVar(&localDir, "local-dir", "", "write the file under DIR by its name in the repo, as huggingface-cli's --local-dir (instead of -o)")
	return cmd
}

// fetchSource returns the source of fetch's arguments: SOURCE, or
// huggingface-cli's OWNER/REPO FILE as hf://OWNER/REPO/FILE (and FILE).
func fetchSource(args []string) (spec, file string, err error) {
	if len(args) == 1 {
		return args[0], "", nil
	}
	repo, file := args[0], args[1]
	owner, name, ok := strings.Cut(repo, "/")
	if _, statErr := os.Stat(repo); statErr == nil || hfremote.IsRemote(repo) || !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usageError("two arguments are OWNER/REPO FILE, as huggingface-cli download takes them (the same as hf://OWNER/REPO/FILE); %q is not OWNER/REPO (to name the output, use -o OUT)", repo)
	}
	return "hf://" + repo + "/" + strings.TrimPrefix(file, "/"), file, nil
}

// hubFileName returns the path of an hf:// source's file within its repo,
// or its base name for another source.
func hubFileName(spec string) string {
	if loc, err := hfremote.ParseHF(spec); err == nil {
		return loc.Path
	}
	return path.Base(spec)
}

// compileFilter compiles a tensor-name filter; "" is no filter.
func compileFilter(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageError("%s %q: %v", flag, expr, err)
	}
	return re, nil
}

// selectTensors keeps the tensors of p matching inc (nil: all), one of
// globs (none: all) and not exc (nil: none), in order.
func selectTensors(p *plan.Plan, inc, exc *regexp.Regexp, globs []string) *plan.Plan {
	globbed := func(name string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return len(globs) == 0
	}
	kept := p.Tensors[:0]
	for _, t := range p.Tensors {
		if (inc == nil || inc.MatchString(t.Info.Name)) && globbed(t.Info.Name) && (exc == nil || !exc.MatchString(t.Info.Name)) {
			kept = append(kept, t)
		}
	}
	p.Tensors = kept
	return p
}
