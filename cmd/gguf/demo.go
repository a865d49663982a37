package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/sink"
	"github.com/ggufkit/gguf/source"
	"github.com/ggufkit/gguf/vocabselect"
)

func init() { rootCmd.AddCommand(newDemoCmd()) }

// newDemoCmd runs the toolkit's main job end to end on a model generated
// in memory, so a fresh offline clone can see it work.
func newDemoCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main pipeline on a built-in model (offline) and check every step",
		Long: `Generates a small mixture-of-experts GGUF model (llama architecture, 2 layers, 4 experts, random
weights) and a text over its vocabulary, then runs the toolkit's main job on it and checks each
step: summarize it (info), choose an output head by token frequency (vocab select), build a
device file in one pass (prune and pad the head, quantize to Q8_0 as llama-quantize does, move the
experts last), re-cut the head of the built file and check it equals a direct build, measure the
quantization error (diff --numeric), and run the result with the Go runtime (generation speed,
perplexity with the head's misses). Any failed check exits non-zero.`,
		Example: `  gguf demo
  gguf demo --dir /tmp/gguf-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "gguf-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(d)
				dir = d
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			} else if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			return runDemo(cmd.Context(), dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "keep the demo files in this directory (default: a temporary one, removed)")
	return cmd
}

func demoFail(format string, args ...any) error {
	return &exitError{code: exitFound, err: fmt.Errorf("demo: "+format, args...)}
}

// demoText writes words of the fixture's language with Zipf-like
// frequencies: word n appears about 1/n as often as the first.
func demoText(m fixture.Model, words int) string {
	rng := fixture.SplitMix64(7)
	var b strings.Builder
	for w := range words {
		u := float64(rng.Next()>>11) / (1 << 53)
		if w > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fixture.Word(1 + int(float64(m.Words()-1)*u*u*u)))
	}
	return b.String()
}

// demoBuild builds src with opts into path.
func demoBuild(ctx context.Context, src string, opts ops.Options, path string) (*ops.Report, *plan.Result, error) {
	s, err := source.Open(ctx, src, source.Options{})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	p, rep, err := ops.Plan(planInput(s), opts)
	if err != nil {
		return nil, nil, err
	}
	o, err := sink.Create(path, false)
	if err != nil {
		return nil, nil, err
	}
	defer o.Abort()
	res, err := p.Execute(ctx, o, plan.Options{})
	if err != nil {
		return nil, nil, err
	}
	return rep, res, o.Commit()
}

func runDemo(ctx context.Context, dir string) error {
	w := stdout
	m := fixture.MoE()
	m.Vocab = 512
	model := filepath.Join(dir, "demo-moe.gguf")
	data := m.Build()
	if err := os.WriteFile(model, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "1. generated %s (%d bytes, %d tokens of vocabulary)\n\n", model, len(data), m.Vocab)

	src, err := source.Open(ctx, model, source.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "2. gguf info")
	demoCmd(w, "gguf", "info", model)
	printSummary(w, inspect.Summarize(model, src.File(), src.Size()))
	tok, err := vocabselect.NewTokenizer(src.File().Metadata)
	src.Close()
	if err != nil {
		return err
	}

	text := demoText(m, 20000)
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		return err
	}
	counts, err := tok.Count(ctx, strings.NewReader(text), vocabselect.CountOptions{})
	if err != nil {
		return err
	}
	sel, err := vocabselect.Select(tok, []vocabselect.Corpus{{Name: "demo", Counts: counts}}, vocabselect.SelectOptions{Rows: 120, Pad: 8})
	if err != nil {
		return err
	}
	cov := vocabselect.Coverage(tok, sel.IDs, counts, 3)
	idsFile := filepath.Join(dir, "head-ids.txt")
	if err := writeDemoIDs(idsFile, sel.IDs); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n3. gguf vocab select: %d ranked ids for the head from %d bytes of text; the head misses %d of %d tokens (%.2f%%)\n",
		len(sel.IDs), len(text), cov.Misses, cov.Tokens, 100*float64(cov.Misses)/float64(max(cov.Tokens, 1)))
	demoCmd(w, "gguf", "vocab", "select", model, "--corpus", "demo="+corpus, "--rows", "120", "-o", idsFile)
	demoCmd(w, "gguf", "vocab", "coverage", model, "--ids", idsFile, "--text", corpus)

	q8, err := quant.ParseFileType("Q8_0") // as --type Q8_0 reads it
	if err != nil {
		return err
	}
	opts := ops.Options{HeadIDs: sel.IDs, Head: headprune.Options{Pad: 8}, ExpertsLast: true,
		Quant: &ops.Quantize{Rules: &quant.Rules{FileType: q8}, Threads: 2}}
	built := filepath.Join(dir, "demo-moe-h120-q8_0-el.gguf")
	t0 := time.Now()
	rep, res, err := demoBuild(ctx, model, opts, built)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n4. gguf build: %d -> %d bytes in %s: head %d rows cut from %s, %d tensors quantized, %d experts moved last\n",
		len(data), res.Written, time.Since(t0).Round(time.Millisecond), len(rep.Head.IDs), rep.HeadSource,
		countQuantized(rep.Quant), rep.ExpertTensors)
	demoCmd(w, "gguf", "build", model, "--head-ids", idsFile, "--type", "Q8_0", "--experts-last", "-o", built)

	// Re-cut the built file with a smaller head and compare with a direct build.
	smaller := append([]int32(nil), sel.IDs[:40]...)
	smallerFile := filepath.Join(dir, "head-ids-40.txt")
	if err := writeDemoIDs(smallerFile, smaller); err != nil {
		return err
	}
	recut := filepath.Join(dir, "recut.gguf")
	direct := filepath.Join(dir, "direct.gguf")
	if _, _, err := demoBuild(ctx, built, ops.Options{HeadIDs: smaller, Head: headprune.Options{Pad: 8}}, recut); err != nil {
		return err
	}
	opts.HeadIDs = smaller
	if _, _, err := demoBuild(ctx, model, opts, direct); err != nil {
		return err
	}
	a, _ := os.ReadFile(recut)
	b, _ := os.ReadFile(direct)
	if !bytes.Equal(a, b) {
		return demoFail("the re-cut head differs from a direct build")
	}
	fmt.Fprintf(w, "\n5. gguf recut to 40 ranked ids: byte-identical to a direct build (%d bytes): ok\n", len(a))
	demoCmd(w, "gguf", "recut", built, "--head-ids", smallerFile, "-o", recut)
	demoCmd(w, "gguf", "build", model, "--head-ids", smallerFile, "--type", "Q8_0", "--experts-last", "-o", direct)
	demoCmd(w, "cmp", recut, direct)

	sa, err := source.Open(ctx, model, source.Options{})
	if err != nil {
		return err
	}
	defer sa.Close()
	sb, err := source.Open(ctx, built, source.Options{})
	if err != nil {
		return err
	}
	defer sb.Close()
	nd, err := inspect.CompareNumeric(sa.File(), tensorData(sa), sb.File(), tensorData(sb))
	if err != nil {
		return err
	}
	worst := inspect.NumericDiff{}
	for _, d := range nd {
		if d.BType == "Q8_0" && d.RMSE/max(d.RMS, 1e-30) > worst.RMSE/max(worst.RMS, 1e-30) {
			worst = d
		}
	}
	fmt.Fprintf(w, "\n6. gguf diff --numeric: %d tensors compared; worst Q8_0 tensor %s: max abs error %.3g, RMSE %.3g (%.2f%% of its RMS)\n",
		len(nd), worst.Name, worst.MaxAbs, worst.RMSE, 100*worst.RMSE/max(worst.RMS, 1e-30))
	demoCmd(w, "gguf", "diff", "--numeric", model, built)

	em, err := engine.Open(built)
	if err != nil {
		return err
	}
	defer em.Close()
	st, err := engine.NewState(em, engine.Options{Ctx: 128, Threads: 2})
	if err != nil {
		return err
	}
	defer st.Close()
	sm := engine.NewSampler(engine.SamplerOptions{Temp: 1, TopK: 40, TopP: 0.95, RepeatPenalty: 1, Seed: 1}, em.Config.Vocab)
	prompt := fixture.Word(5) + " " + fixture.Word(6)
	head := map[int32]bool{}
	for _, id := range rep.Head.IDs {
		head[id] = true
	}
	outside := 0
	gs, err := engine.Generate(st, sm, tok.Encode(prompt, true, false), 48, tok.IsEOG, func(id int32) error {
		if !head[id] {
			outside++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if outside > 0 {
		return demoFail("generated %d tokens outside the pruned head", outside)
	}
	fmt.Fprintf(w, "\n7. gguf run: %d tokens at %.0f tok/s, none outside the %d-row head: ok\n",
		gs.Generated, tokPerSec(gs.Generated, gs.GenTime), len(rep.Head.IDs))
	demoCmd(w, "gguf", "run", built, "-p", prompt, "-n", "48", "--ctx", "128", "-t", "2",
		"--temp", "1", "--top-k", "40", "--top-p", "0.95", "--min-p", "0", "--repeat-penalty", "1", "--seed", "1")

	st2, err := engine.NewState(em, engine.Options{Ctx: 64, Threads: 2})
	if err != nil {
		return err
	}
	defer st2.Close()
	evalText := text[:4000]
	evalFile := filepath.Join(dir, "eval.txt")
	if err := os.WriteFile(evalFile, []byte(evalText), 0o644); err != nil {
		return err
	}
	ids := tok.Encode(evalText, true, false)
	pr, err := engine.Perplexity(st2, engine.SliceTokens(ids), engine.PerplexityOptions{Ctx: 64, MaxChunks: 8, BOS: tok.BOS()})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n8. gguf perplexity --ctx 64: head's tokens only PPL %.2f ± %.2f over %d scored tokens (%d misses skipped), misses charged ln(vocab) PPL %.2f; %.3f bits per byte head-only\n",
		pr.PPL, pr.PPLErr, pr.Scored, pr.Misses, pr.ChargedPPL, engine.BitsPerByte(pr.PPL, len(ids), len(evalText)))
	demoCmd(w, "gguf", "perplexity", built, "-f", evalFile, "--ctx", "64", "--chunks", "8", "-t", "2")
	fmt.Fprintf(w, "\nevery file above is in %s\n", dir)
	fmt.Fprintln(w, "\nall checks passed (random weights: the text means nothing, the bytes and counts are what is checked)")
	return nil
}

// demoCmd prints the command a step stands for, runnable as it is (each
// argument quoted for a POSIX shell where it needs it).
func demoCmd(w io.Writer, args ...string) {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	fmt.Fprintf(w, "   $ %s\n", strings.Join(q, " "))
}

// shellQuote quotes s for a POSIX shell unless it is made of characters
// that need no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeDemoIDs writes an ids file as gguf vocab select does.
func writeDemoIDs(path string, ids []int32) error {
	out, err := sink.Create(path, true)
	if err != nil {
		return err
	}
	defer out.Abort()
	if err := headprune.WriteIDs(out, []string{"gguf demo"}, ids); err != nil {
		return err
	}
	return out.Commit()
}

func countQuantized(ds []ops.Decision) int {
	n := 0
	for _, d := range ds {
		if d.Quantized {
			n++
		}
	}
	return n
}
