package recipes

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/ops"
)

// TestAssembleRecipeEqualsCLI: an assemble recipe writes the bytes that
// `gguf assemble` writes from the same inputs with the matching flags: the
// seeds' Ling-mini-2.0 join (Q2_K_S experts repacked into q2lut), and F32
// experts requantized to Q4_K with an importance matrix.
func TestAssembleRecipeEqualsCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gguf command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build gguf with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gguf")
	if out, err := exec.Command(goBin, "build", "-o", bin, "../cmd/gguf").CombinedOutput(); err != nil {
		t.Fatalf("building gguf: %v\n%s", err, out)
	}
	f32 := bailingMoEF32(t, "Ling-mini-2.0")
	rd, err := gguf.NewReader(bytes.NewReader(f32), int64(len(f32)))
	if err != nil {
		t.Fatal(err)
	}
	ling := lingRepos(t)
	writeFiles(t, dir, map[string][]byte{
		"base.gguf":    ling["bartowski/inclusionAI_Ling-mini-2.0-GGUF"]["inclusionAI_Ling-mini-2.0-Q4_K_M.gguf"],
		"q2ks.gguf":    ling["mradermacher/Ling-mini-2.0-i1-GGUF"]["Ling-mini-2.0.i1-Q2_K_S.gguf"],
		"f32.gguf":     f32,
		"imatrix.gguf": fixture.ImatrixFor(rd.Tensors, "calibration.txt"),
	})
	for _, tc := range []struct {
		name, recipe string
		flags        []string
	}{
		{"q2lut", "inputs:\n  base: {source: base.gguf}\n  experts: {source: q2ks.gguf}\n" +
			"assemble:\n  base: base\n  experts: experts\n  experts_layout: q2lut\n",
			[]string{"--experts", "q2ks.gguf", "--experts-layout", "q2lut"}},
		{"requantized", "inputs:\n  base: {source: base.gguf}\n  experts: {source: f32.gguf}\n  imatrix: {source: imatrix.gguf}\n" +
			"assemble:\n  base: base\n  experts: experts\n  experts_type: Q4_K\n  imatrix: imatrix\n",
			[]string{"--experts", "f32.gguf", "--experts-type", "Q4_K", "--imatrix", "imatrix.gguf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".yaml")
			writeFiles(t, dir, map[string][]byte{tc.name + ".yaml": []byte("name: " + tc.name + "\n" + tc.recipe)})
			r, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := Lock(ctx, r, Options{Threads: 2}); err != nil {
				t.Fatal(err)
			}
			res, err := Open(ctx, r, Options{Pinned: true, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			out := filepath.Join(t.TempDir(), "recipe.gguf")
			rr, err := res.Run(ctx, out, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "q2lut" && (rr.Build.Report.Layouts == nil || rr.Build.Report.Quant != nil) {
				t.Errorf("q2lut: layouts %v, conversions %v", rr.Build.Report.Layouts, rr.Build.Report.Quant)
			}
			if tc.name == "requantized" && !slices.ContainsFunc(rr.Build.Report.Quant, func(d ops.Decision) bool { return d.Quantized && d.HasImatrix }) {
				t.Error("requantized: no expert converted with the importance matrix")
			}
			cliOut := filepath.Join(t.TempDir(), "cli.gguf")
			cmd := exec.Command(bin, append([]string{"assemble", "--base", "base.gguf", "-o", cliOut, "-t", "1"}, tc.flags...)...)
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gguf assemble: %v\n%s", err, b)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(cliOut)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the recipe's output (%d bytes, sha256 %s) differs from gguf assemble's (%d bytes, sha256 %s)", len(got), sum(got), len(want), sum(want))
			}
			t.Logf("%s: %d bytes, sha256 %s, as gguf assemble writes", tc.name, len(got), sum(got))

			// `gguf recipe plan` prints the same file's tensor table and
			// what each input's tensors cost, from the locked recipe.
			text, err := r.Encode()
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string][]byte{tc.name + ".yaml": text})
			cmd = exec.Command(bin, "recipe", "plan", "--json", path)
			var so bytes.Buffer
			cmd.Stdout = &so
			if err := cmd.Run(); err != nil {
				t.Fatalf("gguf recipe plan: %v", err)
			}
			var pr struct {
				Tensors   []struct{ Name string }
				FileBytes int64 `json:"file_bytes"`
				Costs     []Cost
			}
			if err := json.Unmarshal(so.Bytes(), &pr); err != nil {
				t.Fatal(err)
			}
			if pr.FileBytes != int64(len(got)) || len(pr.Tensors) != len(rr.Sums.Tensors) {
				t.Errorf("recipe plan: %d tensors, %d bytes; the run wrote %d tensors, %d bytes", len(pr.Tensors), pr.FileBytes, len(rr.Sums.Tensors), len(got))
			}
			for _, c := range pr.Costs {
				t.Logf("%s: input %s: build reads %d tensor bytes of its %d", tc.name, c.Name, c.Needed, *r.Inputs[c.Name].Size)
			}
		})
	}
}

// TestAssembleRecipeChecksBaseMetadata: a recipe's assemble checks the
// experts against the base's metadata as `gguf assemble` does (the
// runtime's loader): experts of another FFN width into a base without
// experts are refused.
func TestAssembleRecipeChecksBaseMetadata(t *testing.T) {
	dir := t.TempDir()
	m := fixture.MoE()
	var dense []fixture.Tensor
	for _, x := range m.Tensors() {
		if !experts.IsExpert(x.Info.Name) {
			dense = append(dense, x)
		}
	}
	wide := fixture.MoE()
	wide.FF = 128
	writeFiles(t, dir, map[string][]byte{
		"dense.gguf": fixture.Write(m.Metadata(), dense),
		"wide.gguf":  wide.Build(),
		"r.yaml": []byte("name: wide\ninputs:\n  base: {source: dense.gguf}\n  experts: {source: wide.gguf}\n" +
			"assemble:\n  base: base\n  experts: experts\n"),
	})
	r, err := Load(filepath.Join(dir, "r.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(context.Background(), r, Options{Threads: 1})
	if err == nil || !strings.Contains(err.Error(), `has shape [64, 128, 4], the base`) {
		t.Errorf("lock: %v", err)
	}
}
