package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
)

func writeIDs(t *testing.T, dir, name string, ids ...int) string {
	var b strings.Builder
	b.WriteString("# test head, ranked\n")
	for _, id := range ids {
		fmt.Fprintln(&b, id)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuildOpsStreams: the same build to a file, to stdout, and from stdin
// gives the same bytes; recut of the result equals a direct build.
func TestBuildOpsStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := fixture.MoE()
	m.Tied = true
	model := filepath.Join(dir, "moe.gguf")
	data := m.Build()
	os.WriteFile(model, data, 0o644)
	ids1 := writeIDs(t, dir, "ids1.txt", 90, 4, 17, 33, 60, 61, 62, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20)
	ids2 := writeIDs(t, dir, "ids2.txt", 50, 51, 52, 95, 94, 93)
	args := []string{"--head-ids", ids1, "--head-rows", "12", "--experts-last", "--set", "general.name=str:pruned"}

	out := filepath.Join(dir, "out.gguf")
	r := mustRun(t, nil, append([]string{"build", model, "-o", out}, args...)...)
	for _, want := range []string{"head pruned to 16 rows from token_embd.weight (12 ranked, 4 specials, 0 padding)", "copied", "cut", "added"} {
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("summary lacks %q: %s", want, r.stderr)
		}
	}
	file, _ := os.ReadFile(out)
	if so := mustRun(t, nil, append([]string{"build", model, "-o", "-"}, args...)...); !bytes.Equal(so.stdout, file) {
		t.Error("-o - differs from -o FILE")
	}
	if si := mustRun(t, bytes.NewReader(data), append([]string{"build", "-", "-o", "-"}, args...)...); !bytes.Equal(si.stdout, file) {
		t.Error("stdin to stdout differs from -o FILE")
	}
	mustRun(t, nil, "info", out)

	recut := filepath.Join(dir, "recut.gguf")
	direct := filepath.Join(dir, "direct.gguf")
	mustRun(t, nil, "recut", out, "--head-ids", ids2, "-o", recut)
	mustRun(t, nil, "build", model, "-o", direct, "--head-ids", ids2, "--experts-last", "--set", "general.name=str:pruned")
	a, _ := os.ReadFile(recut)
	b, _ := os.ReadFile(direct)
	if !bytes.Equal(a, b) {
		t.Error("recut differs from a direct build")
	}
	checkOneLineError(t, runGGUF(t, nil, "recut", model, "--head-ids", ids2, "-o", recut), 2, "no pruned head")
	d := mustRun(t, nil, "build", model, "--head-ids", ids2, "--dry-run")
	if !strings.Contains(string(d.stdout), "output_ids.weight") || !strings.Contains(string(d.stdout), "rows 16/96 of token_embd.weight") {
		t.Errorf("dry run: %s", d.stdout)
	}
}

// TestBuildInPlace: the output may be the input; a failed build leaves the
// input untouched.
func TestBuildInPlace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	data, _ := os.ReadFile(shared.Path(t, "models", "stories260K-f32.gguf"))
	os.WriteFile(p, data, 0o644)
	checkOneLineError(t, runGGUF(t, nil, "build", p, "--drop", "no-such-tensor", "-o", p), 2, "matches no tensor")
	if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
		t.Fatal("failed build changed its input")
	}
	checkOneLineError(t, runGGUF(t, nil, "build", p, "--experts-last", "-o", p), 2, "no expert tensors")
	mustRun(t, nil, "build", p, "--set", "general.name=str:in-place", "-o", p)
	r := mustRun(t, nil, "info", "--json", p)
	if !strings.Contains(string(r.stdout), `"name": "in-place"`) {
		t.Error("in-place build did not replace the file")
	}
}

// TestKillMidBuild: a build killed while writing leaves nothing under the
// output name (SIGTERM: no temporary either; SIGKILL: the temporary was
// never named), and the input is intact.
func TestKillMidBuild(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile(shared.Path(t, "models", "stories260K-f32.gguf"))
	sum := sha256.Sum256(data)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			os.WriteFile(in, data, 0o644)
			out := filepath.Join(dir, "out.gguf")
			cmd := exec.Command(ggufBin, "build", "-", "-o", out)
			stdin, _ := cmd.StdinPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Feed half the model, so the build is mid-way and waiting.
			f, _ := os.Open(in)
			io.CopyN(stdin, f, int64(len(data)/2))
			f.Close()
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(sig)
			cmd.Wait()
			stdin.Close()
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "in.gguf" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			got, _ := os.ReadFile(in)
			if sha256.Sum256(got) != sum {
				t.Error("input changed")
			}
			if sig != syscall.SIGKILL && strings.Contains(stderr.String(), "panic") {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}

// TestAlignBound: an alignment over 2 MiB is refused with the limit in the
// message, from --align, from --set general.alignment (even forced) and
// from a recipe's align (at its line), and nothing is written; 2 MiB
// itself is taken.
func TestAlignBound(t *testing.T) {
	dir := t.TempDir()
	model := denseModel(t, dir)
	out := filepath.Join(dir, "out.gguf")
	for _, args := range [][]string{
		{"build", model, "--align", "2147483648", "-o", out},
		{"build", model, "--set", "general.alignment=u32:4194304", "--force", "-o", out},
	} {
		checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, "over the limit of 2097152 (2 MiB)")
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: an output was written", args)
		}
	}
	recipe := filepath.Join(dir, "r.yaml")
	os.WriteFile(recipe, []byte("name: r\ninputs:\n  model: {source: dense.gguf}\nbuild:\n  from: model\n  align: 2147483648\n"), 0o644)
	checkOneLineError(t, runGGUF(t, nil, "recipe", "plan", recipe), exitUsage, "r.yaml:5:3: build.align: alignment 2147483648 is over the limit of 2097152")

	mustRun(t, nil, "build", model, "--align", "2097152", "-o", out)
	if a := infoAlignment(t, out); a != 2<<20 {
		t.Errorf("alignment %d, want 2 MiB", a)
	}
}

// infoAlignment is a file's alignment as info --json reports it.
func infoAlignment(t *testing.T, path string) int {
	var s struct{ Alignment int }
	if err := json.Unmarshal(mustRun(t, nil, "info", "--json", path).stdout, &s); err != nil {
		t.Fatal(err)
	}
	return s.Alignment
}

// TestHeadIDsLongLine: an ids file whose line never ends (/dev/zero) is
// refused at the line limit, saying so, not with bufio's "token too
// long"; an id list's error never quotes its line.
func TestHeadIDsLongLine(t *testing.T) {
	dir := t.TempDir()
	model := denseModel(t, dir)
	out := filepath.Join(dir, "out.gguf")
	checkOneLineError(t, runGGUF(t, nil, "build", model, "--head-ids", "/dev/zero", "-o", out), exitUsage,
		"--head-ids /dev/zero: line 1 is longer than 1.0 MiB, the most a line may hold")
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("3\nhunter2\n"), 0o600)
	r := runGGUF(t, nil, "build", model, "--head-ids", secret, "-o", out)
	checkOneLineError(t, r, exitUsage, "line 2: not a token id")
	if strings.Contains(string(r.stderr), "hunter2") {
		t.Errorf("the error quotes the file: %s", r.stderr)
	}
}
