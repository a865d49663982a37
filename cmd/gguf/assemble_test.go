package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// assembleModel is a small MoE whose expert rows fit Q2_K's 256-value
// blocks, so experts can be converted to Q2_K and repacked to q2lut.
func assembleModel(seed uint64, typ gguf.Type) fixture.Model {
	return fixture.Model{Name: "asm", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96,
		Experts: 4, ExpertsUsed: 2, Type: typ, HeadType: gguf.TypeF16, Seed: seed}
}

func writeModel(t *testing.T, dir, name string, m fixture.Model) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustEqualFiles(t *testing.T, what, a, b string) []byte {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s: %s (%d bytes) and %s (%d bytes) differ", what, a, len(x), b, len(y))
	}
	return x
}

// TestAssembleEqualsBuild: assemble gives the bytes of the equivalent
// build (--add the experts --replace, --experts-last), from a base with its
// own experts or from its non-expert subset; with --experts-type and
// --experts-layout, those of a build adding experts quantized --pure by
// gguf quantize and then repacked; -o - equals -o FILE.
func TestAssembleEqualsBuild(t *testing.T) {
	dir := t.TempDir()
	base := writeModel(t, dir, "base.gguf", assembleModel(1, gguf.TypeQ8_0))
	exps := writeModel(t, dir, "exps.gguf", assembleModel(2, gguf.TypeQ8_0))
	p := func(n string) string { return filepath.Join(dir, n) }

	mustRun(t, nil, "build", base, "--add", exps+`:_exps\.`, "--replace", "--experts-last", "-o", p("build.gguf"))
	mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "-o", p("asm.gguf"))
	got := mustEqualFiles(t, "assemble vs build", p("asm.gguf"), p("build.gguf"))
	gr, err := gguf.NewReader(bytes.NewReader(got), int64(len(got)))
	if err != nil {
		t.Fatal(err)
	}
	if info := experts.Describe(gr.File); info == nil || !info.Last || info.ExpertTensors != 6 {
		t.Fatalf("assembled file's experts: %+v", info)
	}

	mustRun(t, nil, "fetch", base, "--exclude", `_exps\.`, "-o", p("dense.gguf"))
	mustRun(t, nil, "assemble", "--base", p("dense.gguf"), "--experts", exps, "-o", p("asm-dense.gguf"))
	mustEqualFiles(t, "assemble from the non-expert subset", p("asm-dense.gguf"), p("build.gguf"))

	mustRun(t, nil, "quantize", exps, p("exps-q2k.gguf"), "--type", "Q2_K", "--pure", "--allow-requantize")
	mustRun(t, nil, "build", base, "--add", p("exps-q2k.gguf")+`:_exps\.`, "--replace", "--experts-last", "--experts-layout", "q2lut", "-o", p("build-lut.gguf"))
	r := mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "--experts-type", "Q2_K", "--experts-layout", "q2lut", "-o", p("asm-lut.gguf"))
	t.Logf("%s", r.stderr)
	mustEqualFiles(t, "assemble --experts-type Q2_K --experts-layout q2lut vs quantize + build", p("asm-lut.gguf"), p("build-lut.gguf"))

	so := mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "--experts-type", "Q2_K", "--experts-layout", "q2lut", "-o", "-")
	if want, _ := os.ReadFile(p("asm-lut.gguf")); !bytes.Equal(so.stdout, want) {
		t.Error("assemble -o - differs from -o FILE")
	}
}

// TestAssembleRefusals: mismatched sources get one-line errors.
func TestAssembleRefusals(t *testing.T) {
	dir := t.TempDir()
	base := writeModel(t, dir, "base.gguf", assembleModel(1, gguf.TypeQ8_0))
	eight := assembleModel(2, gguf.TypeQ8_0)
	eight.Experts = 8
	wide := assembleModel(3, gguf.TypeQ8_0)
	wide.FF = 512
	dense := assembleModel(4, gguf.TypeQ8_0)
	dense.Experts = 0
	for _, c := range []struct {
		name string
		m    fixture.Model
		want string
	}{
		{"eight.gguf", eight, "has 8 experts per layer, the base"},
		{"wide.gguf", wide, "has shape"},
		{"dense.gguf", dense, "no expert tensors"},
	} {
		exps := writeModel(t, dir, c.name, c.m)
		checkOneLineError(t, runGGUF(t, nil, "assemble", "--base", base, "--experts", exps, "-o", filepath.Join(dir, "out.gguf")), exitUsage, c.want)
	}
	checkOneLineError(t, runGGUF(t, nil, "assemble", "--base", base, "-o", "x.gguf"), exitUsage, "needs --base SRC and --experts SRC")
	checkOneLineError(t, runGGUF(t, nil, "assemble", "--base", base, "--experts", base, "--experts-type", "Q9_Z", "-o", "x.gguf"), exitUsage, "--experts-type")
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files in the directory after refusals, want the 4 sources", len(entries))
	}
}

// TestAssembleRemote: with both sources on a loopback Hub answering after
// 20 ms, assemble writes the local run's bytes, and the Hub serves at most
// 1.01 x the bytes the output needs (both headers, the base's non-expert
// tensors, the experts) in a counted number of requests.
func TestAssembleRemote(t *testing.T) {
	dir := t.TempDir()
	big := func(seed uint64) fixture.Model {
		m := assembleModel(seed, gguf.TypeQ8_0)
		m.Layers, m.Embd, m.FF, m.Experts = 4, 512, 512, 8
		return m
	}
	base := writeModel(t, dir, "base.gguf", big(1))
	exps := writeModel(t, dir, "exps.gguf", big(2))
	local := filepath.Join(dir, "local.gguf")
	mustRun(t, nil, "assemble", "--base", base, "--experts", exps, "--experts-type", "Q2_K", "--experts-layout", "q2lut", "-o", local)
	hub := startHub(t, hubtest.Options{Latency: 20 * time.Millisecond}, "org/moe", map[string]hubtest.Content{
		"base.gguf": testfiles.Content(t, base), "exps.gguf": testfiles.Content(t, exps)})

	needed, headers := int64(0), int64(0)
	for _, c := range []struct {
		path    string
		experts bool
	}{{base, false}, {exps, true}} {
		r := testfiles.Reader(t, c.path)
		f := r.File
		needed += f.DataOffset
		headers += f.DataOffset
		for _, ti := range f.Tensors {
			if experts.IsExpert(ti.Name) == c.experts {
				needed += ti.Size()
			}
		}
	}
	// The header probe reads ahead of the header (1 MiB or a quarter of
	// it, see TestRemoteInfoEqualsLocal): measured with gguf info, it is a
	// fixed cost per source whatever the model's size, counted apart.
	before := hub.Stats()
	mustRun(t, nil, "info", "hf://org/moe/base.gguf")
	mustRun(t, nil, "info", "hf://org/moe/exps.gguf")
	_, probe := cost(before, hub.Stats())
	probe -= headers
	before = hub.Stats()
	out := filepath.Join(dir, "remote.gguf")
	r := mustRun(t, nil, "assemble", "--base", "hf://org/moe/base.gguf", "--experts", "hf://org/moe/exps.gguf",
		"--experts-type", "Q2_K", "--experts-layout", "q2lut", "--stats", "-o", out)
	reqs, n := cost(before, hub.Stats())
	mustEqualFiles(t, "remote vs local assemble", out, local)
	t.Logf("needed %d bytes, fetched %d (%.4f x; header probes past the headers %d) in %d requests\n%s",
		needed, n, float64(n)/float64(needed), probe, reqs, r.stderr)
	if float64(n-probe) > 1.01*float64(needed) {
		t.Errorf("fetched %d bytes (%d past the header probes) for %d needed", n, n-probe, needed)
	}
}

// TestAssembleRemoteBig measures an assemble of two large generated MoE
// models (base.gguf and exps.gguf in $GGUF_ASSEMBLE_BIG, e.g. from
// bench/genmodel -experts 32) from a loopback Hub answering after 20 ms:
// bytes fetched against needed, requests and the command's peak RSS, and
// checks the result equals the local assemble (local.gguf there). It is
// skipped unless the variable is set.
func TestAssembleRemoteBig(t *testing.T) {
	dir := os.Getenv("GGUF_ASSEMBLE_BIG")
	if dir == "" {
		t.Skip("set GGUF_ASSEMBLE_BIG to a directory holding base.gguf, exps.gguf and their local assemble local.gguf")
	}
	base, exps := filepath.Join(dir, "base.gguf"), filepath.Join(dir, "exps.gguf")
	hub := startHub(t, hubtest.Options{Latency: 20 * time.Millisecond}, "org/big", map[string]hubtest.Content{
		"base.gguf": testfiles.Content(t, base), "exps.gguf": testfiles.Content(t, exps)})
	needed := int64(0)
	for _, c := range []struct {
		path    string
		experts bool
	}{{base, false}, {exps, true}} {
		f := testfiles.Reader(t, c.path).File
		needed += f.DataOffset
		for _, ti := range f.Tensors {
			if experts.IsExpert(ti.Name) == c.experts {
				needed += ti.Size()
			}
		}
	}
	out := filepath.Join(t.TempDir(), "remote.gguf")
	before := hub.Stats()
	cmd := exec.Command(ggufBin, "assemble", "--base", "hf://org/big/base.gguf", "--experts", "hf://org/big/exps.gguf", "-q", "--stats", "-o", out)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	reqs, n := cost(before, hub.Stats())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	t.Logf("needed %d bytes, fetched %d (%.5f x) in %d requests, peak RSS %d KiB\n%s", needed, n, float64(n)/float64(needed), reqs, rss, msg)
	if float64(n) > 1.01*float64(needed) {
		t.Errorf("fetched %d bytes for %d needed", n, needed)
	}
	mustEqualFiles(t, "remote vs local", out, filepath.Join(dir, "local.gguf"))
}

// TestAssembleChecksDenseBase: into a base fetched with --exclude _exps
// (no experts to compare shapes with), experts of another embedding width
// or expert FFN width, or lacking a layer, are refused against the base's
// metadata with one line and no output; the right experts make a file the
// runtime runs.
func TestAssembleChecksDenseBase(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	base := writeModel(t, dir, "base.gguf", assembleModel(1, gguf.TypeQ8_0))
	mustRun(t, nil, "fetch", base, "--exclude", `_exps\.`, "-o", p("dense.gguf"))
	wideEmbd := assembleModel(2, gguf.TypeQ8_0)
	wideEmbd.Embd = 512
	wideFF := assembleModel(3, gguf.TypeQ8_0)
	wideFF.FF = 512
	oneLayer := assembleModel(4, gguf.TypeQ8_0)
	oneLayer.Layers = 1
	for _, c := range []struct {
		name string
		m    fixture.Model
		want string
	}{
		{"embd.gguf", wideEmbd, `"blk.0.ffn_gate_exps.weight" has shape [512, 256, 4], the base ` + p("dense.gguf") + `'s metadata needs [256, 256, 4] (embedding width 256, expert FFN width 256`},
		{"ff.gguf", wideFF, `has shape [256, 512, 4], the base ` + p("dense.gguf") + `'s metadata needs [256, 256, 4]`},
		{"one.gguf", oneLayer, `lacks tensor "blk.1.ffn_down_exps.weight"`},
	} {
		exps := writeModel(t, dir, c.name, c.m)
		checkOneLineError(t, runGGUF(t, nil, "assemble", "--base", p("dense.gguf"), "--experts", exps, "-o", p("out.gguf")), exitUsage, c.want)
		if _, err := os.Stat(p("out.gguf")); err == nil {
			t.Errorf("%s: an output was written", c.name)
		}
	}
	mustRun(t, nil, "assemble", "--base", p("dense.gguf"), "--experts", writeModel(t, dir, "right.gguf", assembleModel(5, gguf.TypeQ8_0)), "-o", p("out.gguf"))
	mustRun(t, nil, "run", p("out.gguf"), "-p", "t1", "-n", "1")
}
