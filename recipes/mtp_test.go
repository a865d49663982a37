package recipes

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/mtpfixture"
	"github.com/ggufkit/gguf/internal/testfiles"
	"github.com/ggufkit/gguf/safetensors"
)

// TestAddMTPRecipe: a recipe whose build adds the MTP block of a
// checkpoint on the loopback Hub (a qwen35moe one, its experts stored
// fused, split into two shards as the Hub's checkpoints are) is pinned by
// lock (the checkpoint's shards by commit, sha256 and size like any
// input), planned (the block's tensors sourced from the shard holding
// them, the checkpoint read by ranges: its header and the block, not the
// main model's tensors in front of it) and run to the model
// convert_hf_to_gguf.py writes with the block; verify accepts the output.
func TestAddMTPRecipe(t *testing.T) {
	m := fixture.Qwen35MoEMTP(gguf.TypeF32)
	c, err := mtpfixture.QwenMTPFused(m, gguf.TypeQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := mtpfixture.WithFiller(c.Checkpoint, 8192)
	if err != nil {
		t.Fatal(err)
	}
	hub := testfiles.Hub(t, hubtest.Options{}, "org/qwen", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(c.Base), "ck/model-00002-of-00002.safetensors": hubtest.Bytes(shard),
	})
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "mtp.yaml")
	writeFiles(t, dir, map[string][]byte{"mtp.yaml": []byte(`name: qwen-mtp
description: the MTP block a GGUF was published without, back from its checkpoint
inputs:
  model: {source: "hf://org/qwen/model.gguf"}
  ck2: {source: "hf://org/qwen@main/ck/model-00002-of-00002.safetensors"}
build:
  from: model
  add_mtp: {from: [ck2], outtype: q8_0}
`)})
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := Options{Endpoint: hub.URL(), Threads: 2}
	lr, err := Lock(ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if lr.Sums.SHA256 != sum(c.Want) {
		t.Fatal("lock: the build's sha256 is not the converted model's")
	}
	text, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string][]byte{"mtp.yaml": text})
	if r, err = Load(path); err != nil {
		t.Fatal(err)
	}
	if ck := r.Inputs["ck2"]; !strings.Contains(ck.Source, "@") || strings.Contains(ck.Source, "@main") || ck.SHA256 == "" {
		t.Fatalf("lock did not pin the checkpoint: %+v", ck)
	}
	opts.Pinned = true
	res, b, costs := openPlanned(t, r, opts)
	// The gate and up halves of gate_up_proj, each read with the other's
	// rows between them read through as gaps (less than 64 KiB apart
	// here): it counts twice.
	ck, err := safetensors.Parse(bytes.NewReader(c.Checkpoint), int64(len(c.Checkpoint)))
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(len(c.Checkpoint)) + 64<<10
	for _, x := range ck.Tensors {
		if strings.HasSuffix(x.Name, "gate_up_proj") {
			limit += x.Len
		}
	}
	for _, cst := range costs {
		if cst.Name == "ck2" && (cst.Needed == 0 || cst.SpentBytes+cst.Bytes > limit) {
			t.Errorf("the checkpoint costs %+v: more than its MTP tensors, gate_up_proj twice (%d bytes)", cst, limit)
		}
	}
	rep, err := res.PlanReport(path, b, costs)
	if err != nil {
		t.Fatal(err)
	}
	var described bool
	for _, x := range rep.Tensors {
		described = described || (x.Name == "blk.2.ffn_up_exps.weight" && strings.Contains(x.Source, "up rows") && strings.Contains(x.Source, "ck/model-00002-of-00002.safetensors"))
	}
	if !described {
		t.Errorf("the plan does not say where the up experts come from: %+v", rep.Tensors)
	}
	out := filepath.Join(dir, "out.gguf")
	if _, err := res.Run(ctx, out, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, c.Want) {
		t.Fatal("the recipe's output is not the converted model")
	}
	if _, err := r.Verify(out); err != nil {
		t.Fatal(err)
	}
}

// TestAddMTPRecipeErrors: add_mtp without inputs, with an input used as a
// model too, or with an outtype the converter has not, is refused where
// it stands.
func TestAddMTPRecipeErrors(t *testing.T) {
	for _, tc := range []struct{ op, want string }{
		{`add_mtp: {outtype: q8_0}`, "r.yaml:6:12: build.add_mtp: needs from"},
		{`add_mtp: {from: [model]}`, `input "model" is used as a model and as a safetensors checkpoint`},
		{`add_mtp: {from: [ck], outtype: q4_k}`, `build.add_mtp.outtype "q4_k": want f32, f16, bf16, q8_0 or auto`},
	} {
		_, err := Parse("r.yaml", []byte("name: x\ninputs:\n  model: {source: m.gguf}\n  ck: {source: ck.safetensors}\nbuild:\n  "+tc.op+"\n  from: model\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.op, err, tc.want)
		}
	}
}
