package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/internal/safetext"
)

func init() { rootCmd.AddCommand(newMoECmd()) }

func newMoECmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "moe",
		Short: "Tools for the expert pager: simulate cache policies on a recorded expert trace",
	}
	cmd.AddCommand(newMoESimulateCmd())
	return cmd
}

// simRow is one line of moe simulate's output.
type simRow struct {
	Pool     int     `json:"pool"`
	Policy   string  `json:"policy"`
	Accesses int64   `json:"accesses"`
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	HitRate  float64 `json:"hit_rate"`
}

func newMoESimulateCmd() *cobra.Command {
	var pools, policies string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "simulate TRACE --pool N[,N...]",
		Short: "Replay an expert trace through pools of each size under each policy and print the hit rates",
		Long: `simulate reads a trace written by run or perplexity --moe-trace FILE (each MoE layer's
experts per call) and replays it through per-layer pools of each --pool size under each
--policy, placing experts exactly as the runtime's pager does (same code), so the hit
rate it prints for a policy is the one the runtime counts on the same calls. belady is
the clairvoyant optimum (evict the expert used again farthest in the future), the
ceiling no policy can beat. A trace recorded with --moe-bias depends on the pool it was
recorded with: replay it at that size for an exact figure. A pool larger than a layer's
experts is clamped to them, as the runtime does. The trace is read one call at a time
(twice with belady, which then needs a file, not a pipe), never held whole.`,
		Example: `  gguf run moe-xl.gguf -p "Once upon a time" -n 256 --moe-pool 14 --moe-trace story.trace
  gguf moe simulate story.trace --pool 8,14,20 --policy lru,lfu:0.95,belady`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sims []pager.Sim
			var pols []pager.Policy
			for _, s := range strings.Split(policies, ",") {
				p, err := pager.ParsePolicy(s)
				if err != nil {
					return usageError("--policy: %v", err)
				}
				pols = append(pols, p)
			}
			for _, s := range strings.Split(pools, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 1 {
					return usageError("--pool %q: sizes must be positive integers, comma-separated", pools)
				}
				for _, p := range pols {
					sims = append(sims, pager.Sim{Slots: n, Policy: p})
				}
			}
			f, err := os.Open(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			defer f.Close()
			// One pass over the trace for all pools and policies (two with
			// belady), never holding the whole trace.
			start := time.Now()
			rep, err := pager.Replay(f, sims)
			if err != nil {
				return usageError("%s: %v", args[0], err)
			}
			// What the replay cost, as run reports it: the memory is what a
			// long trace would make grow.
			fmt.Fprintf(stderr, "gguf: replayed %d calls (%d experts per layer) through %d simulations in %s, peak RSS %s\n",
				rep.Calls, rep.Experts, len(sims), time.Since(start).Round(time.Millisecond), humanize.IBytes(uint64(osmem.PeakRSS())))
			var rows []simRow
			for _, r := range rep.Results {
				rows = append(rows, simRow{r.Slots, r.Policy.String(), r.Total.Accesses, r.Total.Hits, r.Total.Misses, r.Total.HitRate()})
			}
			if jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			fmt.Fprintf(stdout, "%s: %d calls, %d experts per layer\n", safetext.Escape(args[0]), rep.Calls, rep.Experts)
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "pool\tpolicy\taccesses\thits\tmisses\thit rate\t")
			for _, r := range rows {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%.2f%%\t\n", r.Pool, r.Policy, r.Accesses, r.Hits, r.Misses, 100*r.HitRate)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&pools, "pool", "", "pool sizes (slots per layer), comma-separated")
	cmd.Flags().StringVar(&policies, "policy", "lru,lfu:0.95,belady", "policies, comma-separated: lru, lfu[:DECAY], belady")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "machine-readable output")
	cmd.MarkFlagRequired("pool")
	return cmd
}
