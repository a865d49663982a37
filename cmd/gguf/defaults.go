package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/memguard"
	"github.com/ggufkit/gguf/source"
)

// threadsFor is the default worker count on goarch with cores CPUs: on
// ARM with more than 2 cores one core is left free, min(cores,
// max(cores-1, 2)) (the seeds' E3, E40, E66: 3 of a Cortex-A55's 4 cores
// beat 4, the fourth serving the OS and the page cache), every core
// elsewhere.
func threadsFor(goarch string, cores int) int {
	if (goarch == "arm64" || goarch == "arm") && cores > 2 {
		return min(cores, max(cores-1, 2))
	}
	return max(cores, 1)
}

// defaultThreads is threadsFor this machine.
func defaultThreads() int { return threadsFor(runtime.GOARCH, runtime.NumCPU()) }

// defaultCtx is the context of run and serve without --ctx: the model's
// context_length, at most 4096 (llama.cpp's default -c): a model trained
// on 40,960 positions would otherwise get a cache of ten times that.
const defaultCtx = 4096

// contextFor returns the context a command runs m with (ctx, or the
// default when 0) and, when the default cuts the model's, prints it with
// the KV cache's bytes in the flags' cache types (a model within 4096
// positions runs as it always did, silently: the end-of-run line has the
// KV bytes).
func contextFor(verb string, m *engine.Model, mf *modelFlags, ctx, slots int) int {
	if ctx != 0 {
		return ctx
	}
	n := m.Config.ContextLength
	if n > 0 && n <= defaultCtx {
		return n
	}
	ctx = defaultCtx
	k, v, _ := mf.cacheTypes()
	per := ""
	if slots > 1 {
		per = fmt.Sprintf(" per slot (%d slots)", slots)
	}
	fmt.Fprintf(stderr, "gguf: %s: context %d tokens (the model's %d, at most %d without --ctx): KV cache %s%s (K %s, V %s)\n",
		verb, ctx, m.Config.ContextLength, defaultCtx, humanize.IBytes(uint64(m.KVCacheBytesOf(ctx, k, v))), per,
		engine.CacheTypeName(k), engine.CacheTypeName(v))
	return ctx
}

// samplingDefaults sets the repeat penalty and its window from the
// model's general.sampling.penalty_repeat and penalty_last_n (llama.cpp's
// keys for its author's sampling defaults) where the command line did not
// give them: the seeds' E100, a penalty of 1.15 over 256 tokens stopped a
// Q2_K model's experts looping, is then carried by the file.
func samplingDefaults(cmd *cobra.Command, md *gguf.Metadata, penalty *float32, lastN *int) {
	if v, ok := md.Get("general.sampling.penalty_repeat"); ok && !cmd.Flags().Changed("repeat-penalty") {
		if f, ok := v.Float(); ok && f > 0 {
			*penalty = float32(f)
		}
	}
	if v, ok := md.Get("general.sampling.penalty_last_n"); ok && !cmd.Flags().Changed("repeat-last-n") {
		if n, ok := v.Int(); ok && n >= 0 && n <= 1<<20 {
			*lastN = int(n)
		}
	}
}

// warnUnguarded warns, with the memory guard off (--mem-reserve off),
// about --mlock of more weights than the memory available (with the
// expert pager only the part before the experts is locked) and an expert
// budget larger than it: both crashed the seeds' iPad (E141, E150).
// Pools asked for as a slot count are checked once the model is open
// (warnUnguardedPools).
func warnUnguarded(verb, path string, mf *modelFlags) {
	avail := availableUnguarded()
	if avail <= 0 {
		return
	}
	if mf.mlock {
		if src, err := source.Open(context.Background(), path, source.Options{}); err == nil {
			size := src.Size()
			if info := experts.Describe(src.File()); mf.paged() && info != nil && info.Last {
				size = info.NonExpertEnd
			}
			if size > avail {
				fmt.Fprintf(stderr, "gguf: %s: warning: --mlock of %s of weights with %s available\n",
					verb, humanize.IBytes(uint64(size)), humanize.IBytes(uint64(avail)))
			}
			src.Close()
		}
	}
	if b, err := humanize.ParseBytes(mf.budget); err == nil && mf.budget != "" && int64(b) > avail {
		fmt.Fprintf(stderr, "gguf: %s: warning: --moe-budget %s is more than the %s available\n",
			verb, mf.budget, humanize.IBytes(uint64(avail)))
	}
}

// warnUnguardedPools warns, with the memory guard off, about expert pools
// asked for as a slot count (--moe-pool) that take more than the memory
// available: the seeds' iPad panicked with pool 16 (E141), which --moe-pool
// 16 asks for just as silently.
func warnUnguardedPools(verb string, m *engine.Model, po *engine.PagerOptions, n int) {
	if po == nil || po.Pool <= 0 {
		return
	}
	avail := availableUnguarded()
	if pools := int64(po.Pool) * m.ExpertSlotBytes() * int64(n); avail > 0 && pools > avail {
		fmt.Fprintf(stderr, "gguf: %s: warning: --moe-pool %d takes %s with %s available\n",
			verb, po.Pool, humanize.IBytes(uint64(pools)), humanize.IBytes(uint64(avail)))
	}
}

// availableUnguarded is the memory available (0 when unknown), read for
// the warnings given with the guard off.
func availableUnguarded() int64 {
	r, err := memguard.Read(memRoots())
	if err != nil {
		return 0
	}
	return r.Available()
}
