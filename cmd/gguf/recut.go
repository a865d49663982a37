package main

import (
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/source"
)

func init() { rootCmd.AddCommand(newRecutCmd()) }

func newRecutCmd() *cobra.Command {
	var bf buildFlags
	var of opFlags
	cmd := &cobra.Command{
		Use:   "recut BUILT --head-ids FILE -o OUT",
		Short: "Re-cut the pruned head of an already built file, on the device, in seconds",
		Long: `Replaces the output head of a file built with --head-ids by a head of other ids, without the original
model. With a tied embedding the new rows come from token_embd.weight, so any ids work; with an
untied head only ids already in the head can be kept (the error lists the missing ones). The result
is byte-identical to 'gguf build ORIGINAL --head-ids FILE' with the same head options.
Runs on the device: static, no cgo, memory independent of the model size.`,
		Example: `  gguf recut qwen3.5-2b-head45k.gguf --head-ids head-ids.txt --head-rows 65672 -o qwen3.5-2b-head65k.gguf`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if of.headIDs == "" {
				return usageError("missing --head-ids FILE")
			}
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout)")
			}
			return buildFrom(cmd, args[0], &of, bf, func(src *source.Source) error {
				if _, pruned := src.File().Tensor(headprune.IDsTensor); !pruned {
					return usageError("%s has no pruned head (no %s): use 'gguf build --head-ids'", args[0], headprune.IDsTensor)
				}
				return nil
			})
		},
	}
	bf.register(cmd)
	bf.registerMerge(cmd)
	of.registerHead(cmd)
	return cmd
}
