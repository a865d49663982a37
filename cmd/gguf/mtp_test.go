package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/mtpfixture"
	"github.com/ggufkit/gguf/safetensors"
)

// withFiller returns checkpoint ck with a 4 MiB tensor of the main model in
// front of its own, as a real shard holds far more than the MTP block.
func withFiller(t *testing.T, ck []byte) []byte {
	t.Helper()
	b, err := mtpfixture.WithFiller(ck, 32768)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildAddMTPLocal makes the MTP case of m (the block Q8_0), writes its
// model without the block and its checkpoint behind a filler tensor to a
// new directory and checks gguf build --add-mtp of them equals the
// converted model; it returns the case, the directory, the output and the
// checkpoint's bytes.
func buildAddMTPLocal(t *testing.T, m fixture.Model) (c *mtpfixture.MTPCase, dir, out string, big []byte) {
	return buildAddMTPCase(t, m, mtpfixture.QwenMTP)
}

// buildAddMTPCase is buildAddMTPLocal of the case mk makes.
func buildAddMTPCase(t *testing.T, m fixture.Model, mk func(fixture.Model, gguf.Type) (*mtpfixture.MTPCase, error)) (c *mtpfixture.MTPCase, dir, out string, big []byte) {
	t.Helper()
	c, err := mk(m, gguf.TypeQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	base, ck := filepath.Join(dir, "base.gguf"), filepath.Join(dir, "model.safetensors")
	big = withFiller(t, c.Checkpoint)
	if err := os.WriteFile(base, c.Base, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ck, big, 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "local.gguf")
	mustRun(t, nil, "build", base, "--add-mtp", ck, "--mtp-outtype", "q8_0", "-o", out, "-q")
	if got, _ := os.ReadFile(out); !bytes.Equal(got, c.Want) {
		t.Fatalf("%s: build --add-mtp of a local checkpoint differs from the converted model", m.Arch)
	}
	return c, dir, out, big
}

// checkDraftMTP: gguf run --spec-type draft-mtp on model drafts and prints
// the greedy text gguf run prints without drafting.
func checkDraftMTP(t *testing.T, model string) {
	t.Helper()
	args := []string{"run", model, "-p", "t1 t2 t3 t4", "-n", "12", "--temp", "0"}
	plain := mustRun(t, nil, args...)
	spec := mustRun(t, nil, append(args, "--spec-type", "draft-mtp", "--spec-draft-n-max", "2")...)
	t.Logf("run: %q\n%s", spec.stdout, spec.stderr)
	if !bytes.Equal(plain.stdout, spec.stdout) || !strings.Contains(string(spec.stderr), "draft acceptance rate") {
		t.Fatalf("draft-mtp on the built model: %q vs %q\n%s", spec.stdout, plain.stdout, spec.stderr)
	}
}

// TestBuildAddMTP: gguf build --add-mtp of a local checkpoint and of one on
// the loopback Hub (model and checkpoint both hf://, the checkpoint read
// by ranges: its header and the MTP tensors, not the 4 MiB before them;
// or named by its sharded index, which leads to the shard holding mtp.*)
// equals the model as convert_hf_to_gguf.py writes it with the block, and
// the output drafts with --spec-type draft-mtp, the text unchanged.
func TestBuildAddMTP(t *testing.T) {
	c, dir, local, big := buildAddMTPLocal(t, fixture.Qwen35MTP(gguf.TypeF32))

	index := `{"metadata":{},"weight_map":{"model.language_model.embed_tokens.weight":"model-00001-of-00002.safetensors",` +
		`"mtp.fc.weight":"model-00002-of-00002.safetensors","mtp.norm.weight":"model-00002-of-00002.safetensors"}}`
	hub := startHub(t, hubtest.Options{}, "org/qwen", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(c.Base), "model.safetensors": hubtest.Bytes(big),
		"ck/model-00002-of-00002.safetensors": hubtest.Bytes(big), "ck/model.safetensors.index.json": hubtest.Bytes([]byte(index))})
	before := hub.Stats()
	remote := filepath.Join(dir, "remote.gguf")
	r := mustRun(t, nil, "build", "hf://org/qwen/model.gguf", "--add-mtp", "hf://org/qwen/model.safetensors", "--mtp-outtype", "Q8_0", "-o", remote, "--stats")
	if got, _ := os.ReadFile(remote); !bytes.Equal(got, c.Want) {
		t.Fatalf("build --add-mtp over the Hub differs from the converted model\n%s", r.stderr)
	}
	_, fetched := cost(before, hub.Stats())
	if limit := int64(len(c.Base) + len(c.Checkpoint) + 64<<10); fetched > limit {
		t.Errorf("fetched %d bytes: more than the model and the MTP tensors (%d)", fetched, limit)
	}
	t.Logf("fetched %d bytes of %d + %d\n%s", fetched, len(c.Base), len(big), r.stderr)
	viaIndex := filepath.Join(dir, "index.gguf")
	mustRun(t, nil, "build", "hf://org/qwen/model.gguf", "--add-mtp", "hf://org/qwen/ck/model.safetensors.index.json", "--mtp-outtype", "q8_0", "-o", viaIndex)
	if got, _ := os.ReadFile(viaIndex); !bytes.Equal(got, c.Want) {
		t.Fatal("build --add-mtp of a checkpoint's index differs from the converted model")
	}

	checkDraftMTP(t, local)
	// a conversation of two turns, the MTP block kept from one to the next
	chatArgs := []string{"run", local, "--chat", "-n", "6", "--temp", "0", "--chat-template", "chatml"}
	in := "t1 t2 t3\nt4 t5\n"
	plainChat := mustRun(t, strings.NewReader(in), chatArgs...)
	specChat := mustRun(t, strings.NewReader(in), append(chatArgs, "--spec-type", "draft-mtp", "--spec-draft-n-max", "2")...)
	t.Logf("chat: %q / %q", specChat.stdout, specChat.stderr)
	if !bytes.Equal(plainChat.stdout, specChat.stdout) || !strings.Contains(string(specChat.stderr), "draft acceptance rate") {
		t.Fatalf("draft-mtp chat: %q vs %q\n%s", specChat.stdout, plainChat.stdout, specChat.stderr)
	}
}

// TestBuildAddMTPErrors: a bad checkpoint and a bad --mtp-outtype are
// one-line errors.
func TestBuildAddMTPErrors(t *testing.T) {
	c, err := mtpfixture.QwenMTP(fixture.Qwen35MTP(gguf.TypeF32), gguf.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base, bad := filepath.Join(dir, "base.gguf"), filepath.Join(dir, "bad.safetensors")
	if err := os.WriteFile(base, c.Base, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, append([]byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, "{}"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	checkOneLineError(t, runGGUF(t, nil, "build", base, "--add-mtp", bad, "-o", out), 2, "past the end")
	checkOneLineError(t, runGGUF(t, nil, "build", base, "--add-mtp", bad, "--mtp-outtype", "q4_k", "-o", out), 2, "--mtp-outtype")
	checkOneLineError(t, runGGUF(t, nil, "build", base, "--mtp-outtype", "f16", "-o", out), 2, "needs --add-mtp")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a failed build left its output")
	}
}

// TestBuildAddMTPMoE: gguf build --add-mtp of a qwen35moe checkpoint (its
// block's 12 experts one tensor each, stored in the order of their names,
// experts.10 before experts.2, and read in the order of their indexes),
// local and on the loopback Hub, equals the model as convert_hf_to_gguf.py
// writes it with the block, and the output drafts with --spec-type
// draft-mtp, the greedy text unchanged.
func TestBuildAddMTPMoE(t *testing.T) {
	m := fixture.Qwen35MoEMTP(gguf.TypeF32)
	m.Experts = 12
	c, dir, out, big := buildAddMTPLocal(t, m)
	startHub(t, hubtest.Options{}, "org/qwen", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(c.Base), "model.safetensors": hubtest.Bytes(big)})
	remote := filepath.Join(dir, "remote.gguf")
	r := mustRun(t, nil, "build", "hf://org/qwen/model.gguf", "--add-mtp", "hf://org/qwen/model.safetensors", "--mtp-outtype", "q8_0", "-o", remote, "--stats")
	if got, _ := os.ReadFile(remote); !bytes.Equal(got, c.Want) {
		t.Fatalf("build --add-mtp of a qwen35moe checkpoint over the Hub differs from the converted model\n%s", r.stderr)
	}
	checkDraftMTP(t, out)
}

// TestBuildAddMTPMoEFused: gguf build --add-mtp of a qwen35moe checkpoint
// whose block's experts are stored fused (mlp.experts.gate_up_proj and
// down_proj, as recent transformers save Qwen3.5-MoE), local and on the
// loopback Hub, equals the model as convert_hf_to_gguf.py writes it, its
// gate and up experts split from gate_up_proj; over the Hub it fetches no
// more than the model and the block, and the output drafts.
func TestBuildAddMTPMoEFused(t *testing.T) {
	m := fixture.Qwen35MoEMTP(gguf.TypeF32)
	m.Experts = 12
	c, dir, out, big := buildAddMTPCase(t, m, mtpfixture.QwenMTPFused)
	hub := startHub(t, hubtest.Options{}, "org/qwen", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(c.Base), "model.safetensors": hubtest.Bytes(big)})
	before := hub.Stats()
	remote := filepath.Join(dir, "remote.gguf")
	r := mustRun(t, nil, "build", "hf://org/qwen/model.gguf", "--add-mtp", "hf://org/qwen/model.safetensors", "--mtp-outtype", "q8_0", "-o", remote, "--stats")
	if got, _ := os.ReadFile(remote); !bytes.Equal(got, c.Want) {
		t.Fatalf("build --add-mtp of a fused qwen35moe checkpoint over the Hub differs from the converted model\n%s", r.stderr)
	}
	// the gate and the up halves are each read with the other's rows
	// between them read through as gaps (less than 64 KiB apart here,
	// cheaper than a request per expert): gate_up_proj counts twice
	ck, err := safetensors.Parse(bytes.NewReader(c.Checkpoint), int64(len(c.Checkpoint)))
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(len(c.Base)+len(c.Checkpoint)) + 64<<10
	for _, x := range ck.Tensors {
		if strings.HasSuffix(x.Name, "gate_up_proj") {
			limit += x.Len
		}
	}
	_, fetched := cost(before, hub.Stats())
	t.Logf("fetched %d bytes (limit %d) of %d + %d", fetched, limit, len(c.Base), len(big))
	if fetched > limit {
		t.Errorf("fetched %d bytes: more than the model and the MTP tensors, gate_up_proj twice (%d)", fetched, limit)
	}
	checkDraftMTP(t, out)
}

// TestRecipeAddMTP: gguf recipe plan, lock, run and verify of a recipe
// whose build adds the MTP block of a checkpoint on the loopback Hub
// (build.add_mtp over a pinned safetensors input): the plan names the
// block's tensors and the shard they come from, and the run writes the
// model convert_hf_to_gguf.py writes with the block.
func TestRecipeAddMTP(t *testing.T) {
	c, err := mtpfixture.QwenMTP(fixture.Qwen35MTP(gguf.TypeF32), gguf.TypeQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	hub := startHub(t, hubtest.Options{}, "org/qwen", map[string]hubtest.Content{
		"model.gguf": hubtest.Bytes(c.Base), "model.safetensors": hubtest.Bytes(withFiller(t, c.Checkpoint))})
	dir := t.TempDir()
	recipe := filepath.Join(dir, "mtp.yaml")
	if err := os.WriteFile(recipe, []byte(`name: qwen-mtp
inputs:
  model: {source: "hf://org/qwen/model.gguf"}
  ck: {source: "hf://org/qwen/model.safetensors"}
build:
  from: model
  add_mtp: {from: [ck], outtype: q8_0}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	hubFlag := []string{"--hub", hub.URL()}
	plan := mustRun(t, nil, append([]string{"recipe", "plan", recipe}, hubFlag...)...)
	for _, want := range []string{"blk.2.nextn.eh_proj.weight", "mtp.fc.weight of hf://org/qwen/model.safetensors", "convert BF16 to F32 +1"} {
		if !strings.Contains(string(plan.stdout), want) {
			t.Errorf("plan output lacks %q:\n%s", want, plan.stdout)
		}
	}
	mustRun(t, nil, append([]string{"recipe", "lock", recipe}, hubFlag...)...)
	out := filepath.Join(dir, "mtp.gguf")
	mustRun(t, nil, append([]string{"recipe", "run", recipe, "-o", out}, hubFlag...)...)
	if got, _ := os.ReadFile(out); !bytes.Equal(got, c.Want) {
		t.Fatal("recipe run with add_mtp differs from the converted model")
	}
	mustRun(t, nil, "recipe", "verify", recipe, out)
}
