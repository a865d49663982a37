package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/memguard"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/sink"
)

// modelFlags are how run and perplexity load a model: a punched file's
// cache, llama.cpp's residency flags, the routing overrides and the expert
// pager.
type modelFlags struct {
	expertsFrom   string
	noMmap, mlock bool
	noRepack      bool
	experts       int
	topP          float32
	pool          int
	budget        string
	policy        string
	bias          float32
	prefetch      int
	stage         int
	readers       int
	simFlash      string
	trace         string
	force         bool
	stats         bool
	direct        bool
	memReserve    string
	// given reports whether a flag was on the command line (nil: none
	// was, for modelFlags made without flags).
	given func(name string) bool
	// cacheK and cacheV are the KV cache types (-ctk, -ctv).
	cacheK, cacheV string
	// attnEps is --attn-eps (engine.Options.AttnEps).
	attnEps float64
	// autoPage is set when the model does not fit in memory and its
	// experts are paged without --moe-pool or --moe-budget.
	autoPage bool
	// inputs are the command's other local inputs (a prompt or text
	// file, a --full model), which --moe-trace must not replace.
	inputs []string
}

// addModelFlags adds the flags of modelFlags to cmd.
func addModelFlags(cmd *cobra.Command, f *modelFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.expertsFrom, "experts-from", "", "read the experts a punched file (gguf punch) lacks from this cache file")
	fl.BoolVar(&f.noMmap, "no-mmap", false, "read the weights into memory instead of mapping them (with --moe-pool: the non-expert part)")
	fl.BoolVar(&f.mlock, "mlock", false, "lock the weights in RAM (with --moe-pool: the non-expert part)")
	fl.BoolVar(&f.noRepack, "no-repack", false, "keep every matrix in the file's row layout (no interleaved copy of Q4_0 rows at load)")
	fl.IntVar(&f.experts, "experts", 0, "experts per token, overriding expert_used_count (0: the file's)")
	fl.Float32Var(&f.topP, "moe-topp", 0, "keep the fewest selected experts holding this share of the routing weight (0: all)")
	fl.IntVar(&f.pool, "moe-pool", 0, "page the experts of an experts-last file into pools of N slots per layer (0: map them)")
	fl.StringVar(&f.budget, "moe-budget", "", "page the experts into pools of this many bytes in all, divided among the layers (e.g. 300MiB; K, M, G are powers of 1000, KiB, MiB, GiB of 1024)")
	fl.StringVar(&f.policy, "moe-policy", "lru", "pool eviction: lru or lfu[:DECAY] (decayed frequency, default decay 0.95)")
	fl.Float32Var(&f.bias, "moe-bias", 0, "cache-aware routing: add this to the router scores of pooled experts, for selection only (0: exact)")
	fl.IntVar(&f.prefetch, "moe-prefetch", 0, "pre-gated prefetch: queue the next layer's N predicted experts while decoding (0: off)")
	fl.IntVar(&f.stage, "moe-stage", 0, "speculative prefetch: read the next layer's N predicted experts into N staging slots outside the pools while decoding, evicting nothing (0: off; not with --moe-prefetch)")
	fl.IntVar(&f.readers, "moe-readers", 4, "reader threads of the pager")
	fl.StringVar(&f.simFlash, "moe-sim-flash", "", "throttle the pager's reads to a simulated flash, RATE[,LATENCY] (e.g. 200MB/s,0.3ms); without a pool, charge every weight read to it (whole-file mmap thrashing)")
	fl.StringVar(&f.trace, "moe-trace", "", "write each MoE layer's experts per call to FILE (for gguf moe simulate)")
	fl.BoolVar(&f.force, "force", false, "let --moe-trace replace an existing file that is not a trace")
	fl.BoolVar(&f.stats, "moe-stats", false, "print the pager's counts at the end")
	fl.BoolVar(&f.direct, "moe-direct", true, "read experts with direct I/O (O_DIRECT; F_NOCACHE on Apple), keeping them out of the page cache (=false: through the page cache; by default also where the file system has no direct I/O)")
	fl.StringVar(&f.cacheK, "cache-type-k", "f16", "KV cache type of the keys: f32, f16 or q8_0 (also -ctk, as llama.cpp)")
	fl.StringVar(&f.cacheV, "cache-type-v", "f16", "KV cache type of the values: f32, f16 or q8_0 (also -ctv, as llama.cpp)")
	fl.Float64Var(&f.attnEps, "attn-eps", 0, "prune attention: skip the exp and value sum of positions whose probability is below E times the largest (score < max + ln E), the softmax normalized over the kept ones; 1e-3 cost +0.19 % perplexity on stories260K and speeds a q8_0 cache's long contexts (0: off, exact)")
	f.given = fl.Changed
	fl.StringVar(&f.memReserve, "mem-reserve", "auto", "memory to keep free (Linux: MemAvailable and the cgroup limit): pools are sized to fit and shrink below it, serve refuses requests, run stops (auto: 1/16 of the memory, 64-256 MiB; off: no guard)")
}

// isGiven reports whether flag name was on the command line.
func (f *modelFlags) isGiven(name string) bool { return f.given != nil && f.given(name) }

// paged reports whether the flags ask for the expert pager.
func (f *modelFlags) paged() bool { return f.pool > 0 || f.budget != "" || f.autoPage }

// openOptions turns the flags into the engine's OpenOptions.
func (f *modelFlags) openOptions() (engine.OpenOptions, error) {
	o := engine.OpenOptions{ExpertsFrom: f.expertsFrom, NoMmap: f.noMmap, Mlock: f.mlock, NoRepack: f.noRepack,
		ExpertsUsed: f.experts, TopP: f.topP, PageExperts: f.paged()}
	if !f.paged() {
		for _, c := range []struct {
			set  bool
			name string
		}{{f.bias != 0, "--moe-bias"}, {f.prefetch != 0, "--moe-prefetch"}, {f.stage != 0, "--moe-stage"}, {f.policy != "lru", "--moe-policy"}, {f.isGiven("moe-direct"), "--moe-direct"}} {
			if c.set {
				return o, usageError("%s needs the expert pager (--moe-pool N or --moe-budget SIZE)", c.name)
			}
		}
	}
	if f.pool > 0 && f.budget != "" {
		return o, usageError("give --moe-pool or --moe-budget, not both")
	}
	if f.prefetch != 0 && f.stage != 0 {
		return o, usageError("give --moe-prefetch or --moe-stage, not both")
	}
	return o, nil
}

// cacheTypes returns the KV cache types of --cache-type-k and
// --cache-type-v, having checked them and --attn-eps (the attention
// options every command reads here, before the model is opened).
func (f *modelFlags) cacheTypes() (k, v gguf.Type, err error) {
	if k, err = engine.ParseCacheType(f.cacheK); err != nil {
		return 0, 0, usageError("--cache-type-k: %v", err)
	}
	if v, err = engine.ParseCacheType(f.cacheV); err != nil {
		return 0, 0, usageError("--cache-type-v: %v", err)
	}
	if !(f.attnEps >= 0 && f.attnEps < 1) {
		return 0, 0, usageError("--attn-eps %g: give 0 (off) or a threshold below 1, such as 1e-3", f.attnEps)
	}
	return k, v, nil
}

// kvBytes is m's KV cache (and other mixers' state) for ctx positions in
// the flags' cache types (checked before: an invalid one counts as F32).
func (f *modelFlags) kvBytes(m *engine.Model, ctx int) int64 {
	k, v, _ := f.cacheTypes()
	return m.KVCacheBytesOf(ctx, k, v)
}

// flash returns the --moe-sim-flash model, or nil.
func (f *modelFlags) flash() (*pager.Flash, error) {
	if f.simFlash == "" {
		return nil, nil
	}
	fl, err := pager.ParseFlash(f.simFlash)
	if err != nil {
		return nil, usageError("--moe-sim-flash: %v", err)
	}
	return fl, nil
}

// pagerOptions turns the flags into the engine's PagerOptions (nil when
// not paging).
func (f *modelFlags) pagerOptions() (*engine.PagerOptions, error) {
	if !f.paged() {
		return nil, nil
	}
	p := &engine.PagerOptions{Pool: f.pool, Bias: f.bias, Prefetch: f.prefetch, Stage: f.stage, Readers: f.readers, Direct: f.direct}
	var err error
	if p.Flash, err = f.flash(); err != nil {
		return nil, err
	}
	if p.Policy, err = pager.ParsePolicy(f.policy); err != nil {
		return nil, usageError("--moe-policy: %v", err)
	}
	if f.budget != "" {
		b, err := humanize.ParseBytes(f.budget)
		if err != nil || b == 0 {
			return nil, usageError("--moe-budget %q: a size such as 300M", f.budget)
		}
		p.Budget = int64(b)
	}
	return p, nil
}

// moeRun is what a command keeps of the pager flags while it runs: the
// trace file and the baseline of the fault counter.
type moeRun struct {
	f      *modelFlags
	guard  *memguard.Guard // nil: none
	out    *sink.Output
	trace  *pager.TraceWriter
	faults int64
}

// openTrace creates the --moe-trace file for a run of model. Like any
// output it is written under a temporary name and renamed by close (a
// failed or interrupted run leaves none), it is never one of the run's
// inputs (the model mapped while the trace is written, the cache, a text),
// and an existing file is replaced only if it is a trace, or empty, unless
// --force.
func (r *moeRun) openTrace(model string, experts int) error {
	if r.f.trace == "" {
		return nil
	}
	if experts == 0 {
		return usageError("--moe-trace: the model has no experts")
	}
	if r.f.trace == "-" {
		return usageError("--moe-trace -: stdout carries the run's own output: give a file")
	}
	var err error
	r.out, err = sink.CreateWith(r.f.trace, sink.Options{Force: r.f.force, Text: true,
		Inputs: append([]string{model, r.f.expertsFrom}, r.f.inputs...), Replace: replaceableTrace})
	if err != nil {
		return usageError("--moe-trace %v", err)
	}
	r.trace = pager.NewTraceWriter(r.out, experts)
	return nil
}

// replaceableTrace refuses to replace the file at path unless it is empty
// or a trace.
func replaceableTrace(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() == 0 || pager.IsTrace(f) {
		return nil
	}
	return errors.New("exists and is not a gguf moe trace")
}

// startDecode records the fault counter where decoding starts.
func (r *moeRun) startDecode() { r.faults = osmem.MajorFaults() }

// close flushes the trace and puts it in place: the run succeeded.
func (r *moeRun) close() error {
	if r.out == nil {
		return nil
	}
	err := r.trace.Flush()
	if err == nil {
		err = r.out.Commit()
	}
	r.abort()
	return err
}

// abort drops the trace of a run that failed; it does nothing after close.
func (r *moeRun) abort() {
	if r.out != nil {
		r.out.Abort()
		r.out = nil
	}
}

// moeSummary is the pager's report in JSON summaries.
type moeSummary struct {
	Slots          int     `json:"slots_per_layer"`
	PoolBytes      int64   `json:"pool_bytes"`
	Calls          int64   `json:"calls"`
	Accesses       int64   `json:"accesses"`
	Hits           int64   `json:"hits"`
	Misses         int64   `json:"misses"`
	HitRate        float64 `json:"hit_rate"`
	Prefetches     int64   `json:"prefetches"`
	PrefetchHits   int64   `json:"prefetch_hits"`
	PrefetchWasted int64   `json:"prefetch_wasted"`
	Dropped        int64   `json:"prefetches_dropped"`
	Staged         int64   `json:"staged"`
	StagedUsed     int64   `json:"staged_used"`
	BytesRead      int64   `json:"bytes_read"`
	BytesPerToken  float64 `json:"bytes_read_per_token"`
	WaitSeconds    float64 `json:"reader_wait_seconds"`
	WaitPerToken   float64 `json:"reader_wait_ms_per_token"`
	MajorFaults    int64   `json:"major_faults_decode"`
}

// summary returns the pager's counts over tokens evaluated, or nil.
func (r *moeRun) summary(s *engine.State, tokens int) *moeSummary {
	st := s.PagerStats()
	if st == nil {
		return nil
	}
	per := func(v float64) float64 {
		if tokens == 0 {
			return 0
		}
		return v / float64(tokens)
	}
	return &moeSummary{Slots: st.Slots, PoolBytes: st.PoolBytes, Calls: st.Calls, Accesses: st.Accesses,
		Hits: st.Hits, Misses: st.Misses, HitRate: st.HitRate(), Prefetches: st.Prefetches,
		PrefetchHits: st.PrefetchHits, PrefetchWasted: st.PrefetchWasted, Dropped: st.Dropped, Staged: st.Staged, StagedUsed: st.StagedUsed,
		BytesRead: st.BytesRead, BytesPerToken: per(float64(st.BytesRead)), WaitSeconds: st.Wait.Seconds(),
		WaitPerToken: per(float64(st.Wait) / float64(time.Millisecond)), MajorFaults: osmem.MajorFaults() - r.faults}
}

// report prints the pager's counts on w: one line when paging, the rest
// with --moe-stats.
func (r *moeRun) report(w io.Writer, s *engine.State, tokens int) {
	m := r.summary(s, tokens)
	if m == nil {
		return
	}
	fmt.Fprintf(w, "gguf: pager: %d slots per layer (%s), %.1f%% hits, %s read (%s per token), waited %.1f ms per token\n",
		m.Slots, humanize.IBytes(uint64(m.PoolBytes)), 100*m.HitRate, humanize.IBytes(uint64(m.BytesRead)),
		humanize.IBytes(uint64(m.BytesPerToken)), m.WaitPerToken)
	if r.f.stats {
		how := "through the page cache"
		if r.f.direct {
			how = "with direct I/O"
		}
		fmt.Fprintf(w, "gguf: pager: %d calls, %d expert uses: %d hits, %d misses; prefetched %d (%d used, %d evicted unused, %d dropped stale); staged %d (%d used); %d major faults while decoding; experts read %s\n",
			m.Calls, m.Accesses, m.Hits, m.Misses, m.Prefetches, m.PrefetchHits, m.PrefetchWasted, m.Dropped, m.Staged, m.StagedUsed, m.MajorFaults, how)
	}
}
