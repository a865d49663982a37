// Command enginelogits is the Go side of bench/llama-logits.sh, which
// compares the engine with a real llama.cpp.
//
//	enginelogits -gen DIR [-words N]
//
// writes the crosscheck models into DIR: SHAPE-F32.gguf for each shape and
// TAG.gguf for every case (package crosscheck), the imatrix of the small
// shape as crosscheck.ImatrixFile, and eval.txt, a text of N words for
// perplexity runs.
//
//	enginelogits -list
//
// prints the case tags, one per line (-list-families: only the cases of
// the families other than llama, crosscheck.FamilyCases).
//
//	enginelogits -m MODEL [-ids "1 21 ..."] [-ref LLAMA.f32] [-o OURS.f32] [-t THREADS] [-greedy N]
//
// evaluates the ids (default crosscheck.PromptIDs; llama-logits prints a
// prompt's ids) as one batch (n_ctx 512), writes the
// logits of every position (float32 little-endian, position-major) to -o
// and, with -ref, prints per position the max |ours - llama.cpp| and
// whether the argmax agrees; with -greedy, the prompt's greedy
// continuation of N tokens ("greedy: ID ...", as llama-logits -g prints
// it); then one summary line:
//
//	max=D argmax=A/N worst_pos=P
//
//	enginelogits -m MODEL -ids "1 21 ..." -mtp NEXT [-ref LLAMA.f32] [-o OURS.f32]
//
// evaluates the ids with the model's MTP block mirrored and compares the
// block's logits for NEXT at the following position (engine.MTPLogits)
// instead: one row, as bench/llama-mtp.c writes it.
//
//	enginelogits -print-prompt
//
// prints crosscheck.Prompt, the text whose ids are the default.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/engine"
)

func main() {
	gen := flag.String("gen", "", "write the crosscheck models and eval.txt into this folder")
	match := flag.String("match", "", "with -gen: only the cases whose tag matches this regular expression (and their F32 sources)")
	words := flag.Int("words", 1200, "words of eval.txt")
	model := flag.String("m", "", "model to evaluate")
	ref := flag.String("ref", "", "llama.cpp logits to compare with")
	out := flag.String("o", "", "write our logits here")
	threads := flag.Int("t", 2, "threads")
	list := flag.Bool("list", false, "print the case tags and exit")
	listFam := flag.Bool("list-families", false, "print the tags of the other families' cases and exit")
	printPrompt := flag.Bool("print-prompt", false, "print the crosscheck prompt text and exit")
	greedy := flag.Int("greedy", 0, "also print the prompt's greedy continuation of this many tokens")
	idList := flag.String("ids", "", "space-separated token ids to evaluate (default: the crosscheck prompt)")
	mtp := flag.Int("mtp", -1, "compare the MTP block's logits for this next token instead")
	ctk := flag.String("ctk", "f32", "KV cache type of the keys (f32, f16, q8_0)")
	ctv := flag.String("ctv", "f32", "KV cache type of the values (f32, f16, q8_0)")
	flag.Parse()
	var o engine.Options
	var err error
	o.TypeK, err = engine.ParseCacheType(*ctk)
	check(err)
	o.TypeV, err = engine.ParseCacheType(*ctv)
	check(err)
	ids := crosscheck.PromptIDs
	if *idList != "" {
		ids = nil
		for _, f := range strings.Fields(*idList) {
			v, err := strconv.ParseInt(f, 10, 32)
			check(err)
			ids = append(ids, int32(v))
		}
	}
	switch {
	case *listFam:
		for _, c := range crosscheck.FamilyCases() {
			fmt.Println(c.Tag())
		}
	case *list:
		for _, c := range crosscheck.Cases() {
			fmt.Println(c.Tag())
		}
	case *printPrompt:
		fmt.Println(crosscheck.Prompt)
	case *gen != "":
		re, err := regexp.Compile(*match)
		check(err)
		check(generate(*gen, *words, re))
	case *model != "":
		o.Ctx, o.Threads, o.Batch = 512, *threads, len(ids)
		check(compare(*model, ids, *ref, *out, o, *greedy, *mtp))
	default:
		fmt.Fprintln(os.Stderr, "usage: enginelogits -gen DIR | -m MODEL [-ref F] [-o F] [-t N]")
		os.Exit(2)
	}
}

func generate(dir string, words int, match *regexp.Regexp) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shapes := map[string]bool{}
	cases := append(append(crosscheck.Cases(), crosscheck.MTPCases()...), crosscheck.DraftCases()...)
	for _, c := range cases {
		if match.MatchString(c.Tag()) {
			shapes[c.Shape] = true
		}
	}
	for name, s := range crosscheck.Shapes {
		if !shapes[name] {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-F32.gguf"), crosscheck.F32(s), 0o644); err != nil {
			return err
		}
	}
	im := crosscheck.Imatrix(crosscheck.Shapes["small"])
	if err := os.WriteFile(filepath.Join(dir, crosscheck.ImatrixFile), im, 0o644); err != nil {
		return err
	}
	for _, c := range cases {
		if c.Type == "F32" || !match.MatchString(c.Tag()) {
			continue
		}
		b, err := crosscheck.Build(c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Tag(), err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Tag()+".gguf"), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "eval.txt"), []byte(crosscheck.Text(words)), 0o644)
}

func compare(path string, ids []int32, ref, out string, o engine.Options, greedy, mtp int) error {
	m, err := engine.Open(path)
	if err != nil {
		return err
	}
	defer m.Close()
	s, err := engine.NewState(m, o)
	if err != nil {
		return err
	}
	defer s.Close()
	var got []float32
	if mtp >= 0 {
		if got, err = engine.MTPLogits(s, ids, int32(mtp)); err != nil {
			return err
		}
	} else if err := s.Eval(ids, 0, func(_ int, l []float32) { got = append(got, l...) }); err != nil {
		return err
	}
	if greedy > 0 {
		s.Reset()
		sm := engine.NewSampler(engine.SamplerOptions{Temp: 0, RepeatPenalty: 1}, m.Config.Vocab)
		fmt.Print("greedy:")
		_, err := engine.Generate(s, sm, ids, greedy, func(int32) bool { return false }, func(id int32) error {
			fmt.Printf(" %d", id)
			return nil
		})
		fmt.Println()
		if err != nil {
			return err
		}
	}
	if out != "" {
		b := make([]byte, 4*len(got))
		for i, v := range got {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return err
		}
	}
	if ref == "" {
		return nil
	}
	b, err := os.ReadFile(ref)
	if err != nil {
		return err
	}
	if len(b) != 4*len(got) {
		return fmt.Errorf("%s: %d bytes, want %d", ref, len(b), 4*len(got))
	}
	want := make([]float32, len(got))
	for i := range want {
		want[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	vocab := m.Config.Vocab
	n := len(got) / vocab
	worst, worstPos, agree := 0.0, 0, 0
	for p := range n {
		g, w := got[p*vocab:(p+1)*vocab], want[p*vocab:(p+1)*vocab]
		d := 0.0
		for i := range g {
			d = max(d, math.Abs(float64(g[i])-float64(w[i])))
		}
		ag, aw := argmax(g), argmax(w)
		if ag == aw {
			agree++
		}
		if d > worst {
			worst, worstPos = d, p
		}
		fmt.Printf("pos %d: max|diff| %.3g argmax ours %d llama.cpp %d\n", p, d, ag, aw)
	}
	fmt.Printf("max=%.3g argmax=%d/%d worst_pos=%d\n", worst, agree, n, worstPos)
	return nil
}

func argmax(l []float32) int {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return best
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginelogits:", err)
		os.Exit(1)
	}
}
