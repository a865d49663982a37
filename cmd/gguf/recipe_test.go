package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/recipes"
)

// TestRecipeCLI: plan, lock, run, verify on the SmolLM2 seed recipe against
// a look-alike on the loopback Hub, with the exit codes CLI.md fixes: a
// changed expected sha256 is exit 1 naming the tensor with nothing left, a
// branch refused by run is exit 2, as is a malformed recipe.
func TestRecipeCLI(t *testing.T) {
	m := fixture.Model{Name: "SmolLM2-360M-Instruct", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 512,
		Tied: true, Type: 1, HeadType: 1, Seed: 360}
	hub := startHub(t, hubtest.Options{}, "bartowski/SmolLM2-360M-Instruct-GGUF",
		map[string]hubtest.Content{"SmolLM2-360M-Instruct-f16.gguf": hubtest.Bytes(m.Build())})
	dir := t.TempDir()
	text, err := os.ReadFile("../../recipes/smollm2-360m-ipad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(dir, "smollm2.yaml")
	if err := os.WriteFile(recipe, text, 0o644); err != nil {
		t.Fatal(err)
	}
	hubFlag := []string{"--hub", hub.URL()}

	plan := mustRun(t, nil, append([]string{"recipe", "plan", recipe}, hubFlag...)...)
	for _, want := range []string{"blk.1.ffn_down.weight", "Q4_K", "remote fetch to come:", "unpinned", "output: not pinned"} {
		if !strings.Contains(string(plan.stdout), want) {
			t.Errorf("plan output lacks %q:\n%s", want, plan.stdout)
		}
	}
	var pj recipes.PlanReport
	if err := json.Unmarshal(mustRun(t, nil, append([]string{"recipe", "plan", recipe, "--json"}, hubFlag...)...).stdout, &pj); err != nil {
		t.Fatal(err)
	}
	if len(pj.Tensors) != 20 || pj.FileBytes <= pj.HeaderBytes || len(pj.Costs) != 1 || !pj.Costs[0].Counted || pj.Costs[0].Requests == 0 {
		t.Errorf("plan --json: %d tensors, %d of %d bytes header, costs %+v", len(pj.Tensors), pj.HeaderBytes, pj.FileBytes, pj.Costs)
	}
	out := filepath.Join(dir, "smol.gguf")
	checkOneLineError(t, runGGUF(t, nil, append([]string{"recipe", "run", recipe, "-o", out}, hubFlag...)...), 2, "not a 40-hex commit")

	mustRun(t, nil, append([]string{"recipe", "lock", recipe}, hubFlag...)...)
	locked, _ := os.ReadFile(recipe)
	if !regexp.MustCompile(`hf://bartowski/SmolLM2-360M-Instruct-GGUF@[0-9a-f]{40}/`).Match(locked) {
		t.Fatalf("lock did not pin the commit:\n%s", locked)
	}
	r := mustRun(t, nil, append([]string{"recipe", "run", recipe, "-o", out, "--json"}, hubFlag...)...)
	var rep recipes.RunReport
	if err := json.Unmarshal(r.stdout, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Match || !rep.Written || rep.Requests == 0 || len(rep.Inputs) != 1 || rep.Inputs[0].Commit == "" {
		t.Errorf("run --json: %+v", rep)
	}
	mustRun(t, nil, "recipe", "verify", recipe, out)

	// A changed expected sha256 for one tensor (and so the file): exit 1,
	// the tensor named, nothing under the output name.
	bad := regexp.MustCompile(`(name: blk\.0\.attn_k\.weight, sha256: )[0-9a-f]{64}`).ReplaceAll(locked, []byte("${1}"+strings.Repeat("0", 64)))
	bad = regexp.MustCompile(`(?m)^(  sha256: )[0-9a-f]{64}$`).ReplaceAll(bad, []byte("${1}"+strings.Repeat("1", 64)))
	badRecipe := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badRecipe, bad, 0o644)
	out2 := filepath.Join(dir, "smol2.gguf")
	checkOneLineError(t, runGGUF(t, nil, append([]string{"recipe", "run", badRecipe, "-o", out2}, hubFlag...)...), 1, "first differing tensor #")
	if _, err := os.Stat(out2); err == nil {
		t.Error("a run whose output differs left it behind")
	}
	checkOneLineError(t, runGGUF(t, nil, "recipe", "verify", badRecipe, out), 1, "blk.0.attn_k.weight")

	// A malformed recipe: exit 2 with the line and column.
	os.WriteFile(badRecipe, []byte("name: x\ninputs:\n  model: {source: m.gguf, sha: x}\nbuild: {from: model}\n"), 0o644)
	checkOneLineError(t, runGGUF(t, nil, "recipe", "plan", badRecipe), 2, "bad.yaml:3:27: unknown field \"sha\"")
}

// TestRecipePlanEscapes: recipe plan shows a hostile recipe's name,
// description, input names and tensor-type patterns escaped (a title change, a screen clear, a
// carriage return, a faked line), as info shows a model's names.
func TestRecipePlanEscapes(t *testing.T) {
	dir := t.TempDir()
	denseModel(t, dir)
	writeIDs(t, dir, "ids.txt", 5, 6, 7)
	recipe := filepath.Join(dir, "evil.yaml")
	os.WriteFile(recipe, []byte(`name: "evil\e]0;pwned\a"
description: "desc\e[2J\rFAKE\ngguf: fake line"
inputs:
  "model\e[1A": {source: dense.gguf}
  "ids\rX": {source: ids.txt}
build:
  from: "model\e[1A"
  head: {ids: "ids\rX"}
  quantize: {type: Q8_0, tensor_types: ["ffn_down|\e\\[2J=F16"]}
`), 0o644)
	r := mustRun(t, nil, "recipe", "plan", recipe)
	checkNoControls(t, "recipe plan", r.stdout)
	for _, want := range []string{`evil\x1b]0;pwned\x07`, `desc\x1b[2J\x0dFAKE\x0agguf: fake line`, `model\x1b[1A`, `ids\x0dX`, `ffn_down|\x1b\[2J=F16`} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("plan does not show %q:\n%s", want, r.stdout)
		}
	}
}

// TestRecipeInputErrorsQuoteNothing: a recipe may name any file as an
// input (a relative path such as ../secret, or an absolute one); a file
// that is not what its role needs is refused naming the recipe's line, the
// input, its file and the line of the file, and what is wrong there, never
// with the file's text: an ids file, and a counts file as a corpus.
func TestRecipeInputErrorsQuoteNothing(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "recipes")
	os.Mkdir(sub, 0o755)
	denseModel(t, dir)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("5\nroot:SECRET-HASH:19000:0:99999:7:::\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "counts"), []byte("# gguf vocab count\n# bytes: SECRET\n5\t1\t\"x\"\n"), 0o600)
	for _, c := range []struct{ head, file, mentions string }{
		{"{ids: ids}", "../secret", "r.yaml:7:9: build.head.ids ids (../secret): line 2: not a token id"},
		{"{select: {corpora: [{input: ids}], rows: 8}}", "../counts", "r.yaml:7:18: build.head.select corpus ids (../counts): line 2: the byte count is not a decimal integer"},
	} {
		recipe := filepath.Join(sub, "r.yaml")
		os.WriteFile(recipe, []byte("name: r\ninputs:\n  model: {source: ../dense.gguf}\n  ids: {source: "+c.file+"}\nbuild:\n  from: model\n  head: "+c.head+"\n"), 0o644)
		r := runGGUF(t, nil, "recipe", "plan", recipe)
		checkOneLineError(t, r, exitUsage, c.mentions)
		if strings.Contains(string(r.stderr), "SECRET") {
			t.Errorf("the error quotes the file: %s", r.stderr)
		}
	}
}
