package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/llama2c"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/recipes"
	"github.com/ggufkit/gguf/sink"
	"github.com/ggufkit/gguf/source"
	"github.com/ggufkit/gguf/vocabselect"
)

// The demo's real model: Karpathy's stories260K and its tokenizer (MIT,
// see demodata/README.md), imported with import-llama2c at demo time.
var (
	//go:embed demodata/stories260K.bin
	demoStoriesBin []byte
	//go:embed demodata/tok512.bin
	demoTok512 []byte
	//go:embed demodata/stories260k-demo.yaml
	demoStoriesRecipe []byte
	//go:embed demodata/moe-demo.yaml
	demoMoERecipe []byte
)

// demoPrompt is the prompt of the reference story; demoStoryTokens its
// length (llama2.c's run.c at its full context of 512).
const (
	demoPrompt      = "Once upon a time"
	demoStoryTokens = 341
)

// demoStorySHA256 is the sha256 of llama2.c's greedy story for demoPrompt
// (../shared/refdata/llama2c/greedy_once_upon_a_time_n0.stdout.txt: run.c
// on stories260K.bin, which prints it without the SentencePiece leading
// space and ends it with a newline). The demo's story must hash to it.
const demoStorySHA256 = "e0c267ef267cb50130db210849536569e50920fbfdf130bc9784d6d5ae66aaad"

// demoCorpusPrompts start the greedy stories the stories260K head is chosen
// over: text from the model itself. demoPrompt is among them: a 192-row
// head chosen over the other four stories misses 3 token ids of its story,
// which then changes at byte 460 (measured when the recipe was pinned).
var demoCorpusPrompts = []string{"Lily", "Tom", "The dog", "One day", demoPrompt}

// demoFail reports a failed check.
func demoFail(format string, args ...any) error {
	return &CheckError{Err: fmt.Errorf("demo: "+format, args...)}
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
	p, rep, err := ops.Plan(s.PlanInput(), opts)
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

// demoImport writes the embedded checkpoint and tokenizer into dir and
// imports them as import-llama2c does.
func demoImport(dir string) (string, error) {
	bin, tokf := filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin")
	for path, b := range map[string][]byte{bin: demoStoriesBin, tokf: demoTok512} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return "", err
		}
	}
	ck, err := llama2c.Open(bytes.NewReader(demoStoriesBin), int64(len(demoStoriesBin)))
	if err != nil {
		return "", err
	}
	tok, err := llama2c.ReadTokenizer(bytes.NewReader(demoTok512), int64(len(demoTok512)), ck.Vocab)
	if err != nil {
		return "", err
	}
	model := filepath.Join(dir, "stories260K.gguf")
	o, err := sink.Create(model, false)
	if err != nil {
		return "", err
	}
	defer o.Abort()
	if err := llama2c.Convert(o, ck, tok); err != nil {
		return "", err
	}
	return model, o.Commit()
}

// demoGreedy tells the greedy story of prompt with the Go runtime (as
// `gguf run -p PROMPT -n N --temp 0`, at the model's context), and calls
// each for every generated token.
func (e *Env) demoGreedy(path, prompt string, n int, each func(int32)) (string, engine.GenStats, error) {
	m, tok, st, err := e.Load(path, 0, 0, 2)
	if err != nil {
		return "", engine.GenStats{}, err
	}
	defer m.Close()
	defer st.Close()
	var b bytes.Buffer
	ids := tok.Encode(prompt, true, false)
	for _, id := range ids {
		b.Write(tok.TokenToPiece(id, false))
	}
	sm := engine.NewSampler(engine.SamplerOptions{Temp: 0}, m.Config.Vocab)
	gs, err := engine.Generate(st, sm, ids, n, tok.IsEOG, func(id int32) error {
		if each != nil {
			each(id)
		}
		b.Write(tok.TokenToPiece(id, false))
		return nil
	})
	return b.String(), gs, err
}

// demoRecipe runs a bundled recipe from the Hub at hub into out, then
// verifies out against the recipe, and reports what it fetched; it
// returns the bytes fetched of the model file.
func demoRecipe(ctx context.Context, w io.Writer, dir, name string, text []byte, hub, out string) (*recipes.RunResult, int64, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return nil, 0, err
	}
	r, err := recipes.Parse(path, text)
	if err != nil {
		return nil, 0, err
	}
	var stats hfremote.Stats
	t0 := time.Now()
	res, err := recipes.Open(ctx, r, recipes.Options{Endpoint: hub, Stats: &stats, Pinned: true, Threads: 2})
	if err != nil {
		return nil, 0, err
	}
	defer res.Close()
	rr, err := res.Run(ctx, out, recipes.RunOptions{})
	if err != nil {
		return nil, 0, err
	}
	model := res.Inputs[r.Build.From]
	sn := stats.Snapshot()
	var data int64 // the other inputs, fetched whole
	for _, in := range res.Inputs {
		if in != model {
			data += in.Size
		}
	}
	fetched := sn.Bytes - data
	fmt.Fprintf(w, "   %s from %s: fetched %d bytes of the %d-byte model file (%d at open, the header prefetch; then the tensor ranges the build reads beyond it; %d read and discarded) and the %d-byte pinned corpus, in %d requests; wrote %d bytes in %s\n",
		r.Name, model.Input.Source, fetched, model.Size, model.Spent.Bytes, sn.WastedBytes, data, sn.Requests, rr.Sums.Size, time.Since(t0).Round(time.Millisecond))
	sums, err := r.Verify(out)
	if err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(w, "   sha256 %s, as the recipe pins: ok\n", sums.SHA256)
	demoCmd(w, "gguf", "recipe", "verify", path, out)
	return rr, fetched, nil
}

// Run runs the demo in dir; keep says whether dir outlives it (--dir),
// so that the closing line says where the files are or that they are gone.
// A failed check is a *CheckError.
func Run(ctx context.Context, dir string, keep bool, env Env) error {
	return env.run(ctx, dir, keep)
}

func (e *Env) run(ctx context.Context, dir string, keep bool) error {
	w := e.Out
	stories, err := demoImport(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "1. import-llama2c: the embedded stories260K (Karpathy, MIT; 260,032 parameters) -> %s\n", stories)
	demoCmd(w, "gguf", "import-llama2c", filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"), "-o", stories)
	var corpus strings.Builder
	for _, p := range demoCorpusPrompts {
		text, _, err := e.demoGreedy(stories, p, demoStoryTokens, nil)
		if err != nil {
			return err
		}
		corpus.WriteString(text + "\n")
	}
	storiesData, err := os.ReadFile(stories)
	if err != nil {
		return err
	}
	storiesText := filepath.Join(dir, "stories.txt")
	if err := os.WriteFile(storiesText, []byte(corpus.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "   its greedy stories for %q (gguf run -p PROMPT -n %d --temp 0): %s, %d bytes of text from the model itself, the corpus of its head\n",
		demoCorpusPrompts, demoStoryTokens, storiesText, corpus.Len())

	m := fixture.MoE()
	m.Vocab = 512
	model := filepath.Join(dir, "demo-moe.gguf")
	data := m.Build()
	if err := os.WriteFile(model, data, 0o644); err != nil {
		return err
	}
	text := demoText(m, 20000)
	textFile := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(textFile, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n2. generated %s (%d bytes, random weights, %d tokens of vocabulary) and %d bytes of text over its vocabulary\n", model, len(data), m.Vocab, len(text))
	src, err := source.Open(ctx, model, source.Options{})
	if err != nil {
		return err
	}
	demoCmd(w, "gguf", "info", model)
	e.PrintSummary(w, inspect.Summarize(model, src.File(), src.Size()))
	tok, err := vocabselect.NewTokenizer(src.File().Metadata)
	src.Close()
	if err != nil {
		return err
	}

	hub, err := hubtest.NewServer("", hubtest.Options{})
	if err != nil {
		return err
	}
	defer hub.Close()
	sc, err := hub.Commit("karpathy/stories260K", "main", map[string]hubtest.Content{
		"stories260K.gguf": hubtest.Bytes(storiesData), "stories.txt": hubtest.Bytes([]byte(corpus.String()))})
	if err != nil {
		return err
	}
	mc, err := hub.Commit("ggufkit/demo-moe", "main", map[string]hubtest.Content{
		"demo-moe.gguf": hubtest.Bytes(data), "corpus.txt": hubtest.Bytes([]byte(text))})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n3. loopback Hub at %s: hf://karpathy/stories260K@%s, hf://ggufkit/demo-moe@%s\n", hub.URL(), sc, mc)

	device := filepath.Join(dir, "stories260K-h192-f16.gguf")
	fmt.Fprintln(w, "\n4. gguf recipe run stories260k-demo.yaml: head chosen by frequency, F16, from the Hub")
	srr, fetched, err := demoRecipe(ctx, w, dir, "stories260k-demo.yaml", demoStoriesRecipe, hub.URL(), device)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   chosen: a head of the %d rows most frequent in the model's own stories (%d bytes of F32 head -> %d of F16), every weight F16.\n",
		len(srr.Build.Report.Head.IDs), 512*64*4, len(srr.Build.Report.Head.IDs)*64*2)
	fmt.Fprintln(w, "   why: Q8_0 changes this greedy story (at byte 297, as llama.cpp's Q8_0 file does: measured), F16 keeps it;")
	fmt.Fprintln(w, "   the corpus holds this prompt's own story: a 192-row head over the other four stories misses 3 of its token ids (\" so\", \"f\", \"A\")")
	fmt.Fprintln(w, "   and the greedy story changes at byte 460 (measured), so the head is chosen over text that includes it.")

	head := map[int32]bool{}
	for _, id := range srr.Build.Report.Head.IDs {
		head[id] = true
	}
	outside := 0
	story, gs, err := e.demoGreedy(device, demoPrompt, demoStoryTokens, func(id int32) {
		if !head[id] {
			outside++
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n5. gguf run %s -p %q -n %d --temp 0 (greedy, Go runtime):\n\n%s\n\n", filepath.Base(device), demoPrompt, demoStoryTokens, story)
	sum := sha256.Sum256([]byte(strings.TrimPrefix(story, " ") + "\n"))
	if got := hex.EncodeToString(sum[:]); got != demoStorySHA256 {
		return demoFail("the device file's greedy story (sha256 %s) is not llama2.c's reference story (%s)", got, demoStorySHA256)
	}
	if outside > 0 {
		return demoFail("the story has %d tokens outside the pruned head", outside)
	}
	fmt.Fprintf(w, "   %d tokens at %.0f tok/s, all inside the %d-row head; the story is llama2.c's reference story (sha256 %s…): ok\n",
		gs.Generated, gs.GenRate(), len(head), demoStorySHA256[:12])
	fmt.Fprintf(w, "   summary: fetched %d bytes of the %d-byte file on the Hub (a file this small is nearly all header prefetch and needed tensors), device file %d bytes (%.0f%% of it), %.0f tok/s\n",
		fetched, len(storiesData), srr.Sums.Size, 100*float64(srr.Sums.Size)/float64(len(storiesData)), gs.GenRate())
	demoCmd(w, "gguf", "run", device, "-p", demoPrompt, "-n", fmt.Sprint(demoStoryTokens), "--temp", "0")

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
	built := filepath.Join(dir, "demo-moe-h120-q8_0-el.gguf")
	fmt.Fprintln(w, "\n6. gguf recipe run moe-demo.yaml: head chosen by frequency, Q8_0, experts last, from the Hub")
	mrr, _, err := demoRecipe(ctx, w, dir, "moe-demo.yaml", demoMoERecipe, hub.URL(), built)
	if err != nil {
		return err
	}
	rep := mrr.Build.Report
	if !slices.Equal(mrr.Build.Selection.IDs, sel.IDs) {
		return demoFail("the recipe's head (%d ids) differs from gguf vocab select's (%d ids)", len(mrr.Build.Selection.IDs), len(sel.IDs))
	}
	fmt.Fprintf(w, "   head %d rows cut from %s (as gguf vocab select picks them: it misses %d of %d tokens of the text, %.2f%%), %d tensors quantized, %d experts moved last\n",
		len(rep.Head.IDs), rep.HeadSource, cov.Misses, cov.Tokens, 100*float64(cov.Misses)/float64(max(cov.Tokens, 1)),
		countQuantized(rep.Quant), rep.ExpertTensors)
	demoCmd(w, "gguf", "vocab", "select", model, "--corpus", "demo="+textFile, "--rows", "120", "-o", idsFile)
	demoCmd(w, "gguf", "vocab", "coverage", model, "--ids", idsFile, "--text", textFile)
	demoCmd(w, "gguf", "build", model, "--head-ids", idsFile, "--type", "Q8_0", "--experts-last", "-o", built)

	q8, err := quant.ParseFileType("Q8_0") // as --type Q8_0 reads it
	if err != nil {
		return err
	}
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
	opts := ops.Options{HeadIDs: smaller, Head: headprune.Options{Pad: 8}, ExpertsLast: true,
		Quant: &ops.Quantize{Rules: &quant.Rules{FileType: q8}, Threads: 2}}
	if _, _, err := demoBuild(ctx, model, opts, direct); err != nil {
		return err
	}
	a, _ := os.ReadFile(recut)
	b, _ := os.ReadFile(direct)
	if !bytes.Equal(a, b) {
		return demoFail("the re-cut head differs from a direct build")
	}
	fmt.Fprintf(w, "\n7. gguf recut to 40 ranked ids: byte-identical to a direct build (%d bytes): ok\n", len(a))
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
	nd, err := inspect.CompareNumeric(sa.File(), e.TensorData(sa), sb.File(), e.TensorData(sb))
	if err != nil {
		return err
	}
	worst := inspect.NumericDiff{}
	for _, d := range nd {
		if d.BType == "Q8_0" && d.RMSE/max(d.RMS, 1e-30) > worst.RMSE/max(worst.RMS, 1e-30) {
			worst = d
		}
	}
	fmt.Fprintf(w, "\n8. gguf diff --numeric: %d tensors compared; worst Q8_0 tensor %s: max abs error %.3g, RMSE %.3g (%.2f%% of its RMS)\n",
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
	moeHead := map[int32]bool{}
	for _, id := range rep.Head.IDs {
		moeHead[id] = true
	}
	outside = 0
	var mapped []int32
	mgs, err := engine.Generate(st, sm, tok.Encode(prompt, true, false), 48, tok.IsEOG, func(id int32) error {
		if !moeHead[id] {
			outside++
		}
		mapped = append(mapped, id)
		return nil
	})
	if err != nil {
		return err
	}
	if outside > 0 {
		return demoFail("generated %d tokens outside the pruned head", outside)
	}
	fmt.Fprintf(w, "\n9. gguf run (MoE, experts last in the file): %d tokens at %.0f tok/s, none outside the %d-row head: ok\n",
		mgs.Generated, mgs.GenRate(), len(rep.Head.IDs))
	demoCmd(w, "gguf", "run", built, "-p", prompt, "-n", "48", "--ctx", "128", "-t", "2",
		"--temp", "1", "--top-k", "40", "--top-p", "0.95", "--min-p", "0", "--repeat-penalty", "1", "--seed", "1")
	if err := e.demoPaged(w, built, prompt, mapped); err != nil {
		return err
	}

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
	// Bits per byte count the text's tokens, not the BOS added before them,
	// as gguf perplexity does: the printed command prints the same figure.
	textTokens := len(ids)
	if tok.AddBOS() && textTokens > 0 {
		textTokens--
	}
	fmt.Fprintf(w, "\n10. gguf perplexity --ctx 64: head's tokens only PPL %.2f ± %.2f over %d scored tokens (%d misses skipped), misses charged ln(vocab) PPL %.2f; %.3f bits per byte head-only\n",
		pr.PPL, pr.PPLErr, pr.Scored, pr.Misses, pr.ChargedPPL, engine.BitsPerByte(pr.PPL, textTokens, len(evalText)))
	demoCmd(w, "gguf", "perplexity", built, "-f", evalFile, "--ctx", "64", "--chunks", "8", "-t", "2")
	if keep {
		fmt.Fprintf(w, "\nevery file above is in %s\n", dir)
	} else {
		fmt.Fprintf(w, "\nthe files above are removed on exit (gguf demo --dir DIR keeps them, and the commands then run as printed)\n")
	}
	fmt.Fprintln(w, "\nall checks passed (the MoE has random weights: its text means nothing, its bytes and counts are what is checked)")
	return nil
}

// demoPaged runs the MoE again with its experts paged into pools of one
// token's working set (gguf run --moe-pool K): the same sampled tokens
// must come out, with only the non-expert part of the file mapped.
func (e *Env) demoPaged(w io.Writer, built, prompt string, want []int32) error {
	m, tok, st, err := e.Load(built, 2, 128, 2)
	if err != nil {
		return err
	}
	defer m.Close()
	defer st.Close()
	sm := engine.NewSampler(engine.SamplerOptions{Temp: 1, TopK: 40, TopP: 0.95, RepeatPenalty: 1, Seed: 1}, m.Config.Vocab)
	var got []int32
	gs, err := engine.Generate(st, sm, tok.Encode(prompt, true, false), 48, tok.IsEOG, func(id int32) error {
		got = append(got, id)
		return nil
	})
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return demoFail("the paged run generated other tokens than the mapped one")
	}
	ps := st.PagerStats()
	fmt.Fprintf(w, "\n9b. gguf run --moe-pool 2 (experts paged, %s of %s mapped): the same %d tokens at %.0f tok/s; %d expert uses, %.0f%% hits, %s read: ok\n",
		humanize.IBytes(uint64(m.ResidentBytes)), humanize.IBytes(uint64(m.WeightBytes)), gs.Generated, gs.GenRate(),
		ps.Accesses, 100*ps.HitRate(), humanize.IBytes(uint64(ps.BytesRead)))
	demoCmd(w, "gguf", "run", built, "-p", prompt, "-n", "48", "--ctx", "128", "-t", "2",
		"--temp", "1", "--top-k", "40", "--top-p", "0.95", "--min-p", "0", "--repeat-penalty", "1", "--seed", "1", "--moe-pool", "2", "--moe-stats")
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
