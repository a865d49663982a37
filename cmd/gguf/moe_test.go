package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/internal/fixture"
)

// writeXLMoE writes ci-moe with 8 experts, 2 used, to dir as moe.gguf
// and its experts-last build (pageable) as xl.gguf.
func writeXLMoE(t *testing.T, dir string) {
	t.Helper()
	m := fixture.Named["ci-moe"]
	m.Experts, m.ExpertsUsed = 8, 2
	if err := os.WriteFile(filepath.Join(dir, "moe.gguf"), m.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "build", filepath.Join(dir, "moe.gguf"), "--experts-last", "-o", filepath.Join(dir, "xl.gguf"))
}

// TestMoEPagedRun: run and perplexity on an experts-last build give the
// same text and perplexity with the pager as without it, the trace they
// write replays in moe simulate to the hits the run counted, and the
// pager's misuses are one-line errors.
func TestMoEPagedRun(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	writeXLMoE(t, dir)
	args := []string{"run", p("xl.gguf"), "-p", "t1 t2 t3", "-n", "24", "--temp", "0", "-t", "2"}
	want := mustRun(t, nil, args...)
	got := mustRun(t, nil, append(args, "--moe-pool", "3", "--moe-policy", "lfu:0.9", "--moe-trace", p("run.trace"), "--moe-stats")...)
	if string(got.stdout) != string(want.stdout) {
		t.Fatalf("paged text %q, unpaged %q", got.stdout, want.stdout)
	}
	hits := regexp.MustCompile(`(\d+) hits, (\d+) misses`).FindStringSubmatch(string(got.stderr))
	if hits == nil {
		t.Fatalf("no pager stats in %s", got.stderr)
	}
	sim := mustRun(t, nil, "moe", "simulate", p("run.trace"), "--pool", "3", "--policy", "lfu:0.9", "--json")
	var rows []simRow
	if err := json.Unmarshal(sim.stdout, &rows); err != nil || len(rows) != 1 {
		t.Fatalf("simulate: %v %s", err, sim.stdout)
	}
	if strconv.FormatInt(rows[0].Hits, 10) != hits[1] || strconv.FormatInt(rows[0].Misses, 10) != hits[2] {
		t.Fatalf("simulator %d hits %d misses, run %s", rows[0].Hits, rows[0].Misses, hits[0])
	}
	// a punched copy pages its experts from the cache it was checked against
	raw, err := os.ReadFile(p("xl.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("punched.gguf"), raw, 0o644)
	os.WriteFile(p("cache.gguf"), raw, 0o644)
	if r := runGGUF(t, nil, "punch", p("punched.gguf"), "--from", p("cache.gguf")); r.code != 0 {
		t.Logf("no punching here (%s): the punched case is not checked", r.stderr)
	} else {
		got := mustRun(t, nil, append(args[:1:1], append([]string{p("punched.gguf")}, append(args[2:], "--moe-pool", "2", "--experts-from", p("cache.gguf"))...)...)...)
		if string(got.stdout) != string(want.stdout) {
			t.Fatalf("paged punched text %q, unpaged %q", got.stdout, want.stdout)
		}
	}
	text := p("text.txt")
	words := ""
	for i := range 200 {
		words += fixture.Word(1+(i*7)%40) + " "
	}
	os.WriteFile(text, []byte(words), 0o644)
	ppl := []string{"perplexity", p("xl.gguf"), "-f", text, "--ctx", "32", "--json"}
	var a, b perplexityJSON
	json.Unmarshal(mustRun(t, nil, append(ppl, "-b", "1")...).stdout, &a)
	json.Unmarshal(mustRun(t, nil, append(ppl, "--moe-budget", "8M")...).stdout, &b)
	if a.HeadOnly.PPL != b.HeadOnly.PPL || a.HeadOnly.PPL == 0 || b.MoE == nil || b.MoE.Misses == 0 {
		t.Fatalf("perplexity unpaged %v, paged %v (moe %+v)", a.HeadOnly, b.HeadOnly, b.MoE)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", p("moe.gguf"), "-n", "1", "--moe-pool", "4"}, "--experts-last"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-pool", "1"}, "smaller than one token's working set"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-bias", "0.1"}, "needs the expert pager"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-stage", "2"}, "needs the expert pager"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-pool", "4", "--moe-stage", "2", "--moe-prefetch", "2"}, "not both"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-pool", "4", "--moe-policy", "belady"}, "gguf moe simulate"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--moe-sim-flash", "fast"}, "RATE"},
		{[]string{"run", p("xl.gguf"), "-n", "1", "--experts", "9"}, "8 experts per layer"},
		{[]string{"moe", "simulate", text, "--pool", "4"}, "not a gguf moe trace"},
	} {
		checkOneLineError(t, runGGUF(t, nil, c.args...), exitUsage, c.msg)
	}
}

// TestMoEDirectDefault: the pager reads experts with direct I/O by
// default (bench/pager-direct.sh measured it faster under a memory limit,
// as the seeds' E140 did on an iPad), --moe-direct=false through the page
// cache, and a file system without direct I/O (tmpfs) falls back to the
// page cache unless --moe-direct was asked for, which is then a one-line
// error, as is --moe-direct given without the pager. The text is the same
// every way.
func TestMoEDirectDefault(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	writeXLMoE(t, dir)
	if !directReads(p("xl.gguf"), "") {
		t.Skipf("no direct I/O in %s", dir)
	}
	args := []string{"-p", "t1 t2 t3", "-n", "8", "--temp", "0", "-t", "1", "--moe-pool", "3", "--moe-stats"}
	run := func(path string, flags ...string) result {
		return mustRun(t, nil, append(append([]string{"run", path}, args...), flags...)...)
	}
	want := run(p("xl.gguf"))
	for _, c := range []struct {
		path  string
		flags []string
		how   string
	}{
		{p("xl.gguf"), nil, "experts read with direct I/O"},
		{p("xl.gguf"), []string{"--moe-direct=false"}, "experts read through the page cache"},
	} {
		r := run(c.path, c.flags...)
		if !strings.Contains(string(r.stderr), c.how) || string(r.stdout) != string(want.stdout) {
			t.Errorf("%v: %q (want %q)\n%s", c.flags, r.stdout, want.stdout, r.stderr)
		}
	}
	checkOneLineError(t, runGGUF(t, nil, "run", p("xl.gguf"), "-n", "1", "--moe-direct"), exitUsage, "needs the expert pager")
	shm, err := os.MkdirTemp("/dev/shm", "gguf-direct")
	if err != nil {
		t.Logf("no /dev/shm: the fallback is not checked (%v)", err)
		return
	}
	defer os.RemoveAll(shm)
	raw, err := os.ReadFile(p("xl.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(shm, "xl.gguf")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if directReads(tmp, "") {
		t.Logf("%s has direct I/O: the fallback is not checked", shm)
		return
	}
	if r := run(tmp); !strings.Contains(string(r.stderr), "experts read through the page cache") || string(r.stdout) != string(want.stdout) {
		t.Errorf("tmpfs: %q (want %q)\n%s", r.stdout, want.stdout, r.stderr)
	}
	checkOneLineError(t, runGGUF(t, nil, append(append([]string{"run", tmp}, args...), "--moe-direct")...), 1, "--moe-direct")
}

// TestMoESimulateBounds: moe simulate clamps a pool to the layer's experts
// as the runtime does (99999999999 slots once asked for 3.2 TB), reads a
// 3.2 M-access trace in a few tens of MB (it held the whole trace and a
// next use per access: 186 MiB) and says so, and says which line of a trace is too long or
// malformed, with the limit and without quoting it.
func TestMoESimulateBounds(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	f, err := os.Create(p("long.trace"))
	if err != nil {
		t.Fatal(err)
	}
	w := pager.NewTraceWriter(f, 64)
	rng, ex := uint64(7), make([]int, 0, 8)
	for i := range 400_000 {
		ex = ex[:0]
		for seen := uint64(0); len(ex) < 8; {
			rng = rng*6364136223846793005 + 1442695040888963407
			e := int(rng>>40) % 64 % (12 + i%53)
			if seen&(1<<e) == 0 {
				seen |= 1 << e
				ex = append(ex, e)
			}
		}
		w.Call(i%24, ex)
	}
	if err := w.Flush(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	r := mustRun(t, nil, "moe", "simulate", p("long.trace"), "--pool", "16,99999999999", "--policy", "lru,belady", "--json")
	var rows []simRow
	if err := json.Unmarshal(r.stdout, &rows); err != nil || len(rows) != 4 {
		t.Fatalf("simulate: %v %s", err, r.stdout)
	}
	if rows[1].Misses >= rows[0].Misses || rows[2].Pool != 64 || rows[3].Misses != rows[2].Misses || rows[2].Accesses != 3_200_000 {
		t.Errorf("rows %+v", rows)
	}
	// The process's own peak (VmHWM): a child's rusage would count the
	// test binary's pages it was forked from.
	m := regexp.MustCompile(`peak RSS (.*)\n`).FindSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no peak RSS in %q", r.stderr)
	}
	if rss, err := humanize.ParseBytes(string(m[1])); err != nil || rss == 0 || rss > 48<<20 {
		t.Errorf("simulate's peak RSS was %s (%v), want at most 48 MiB", m[1], err)
	}

	os.WriteFile(p("bad.trace"), []byte("# gguf moe trace v1\nexperts 8\n0: 1 2\n1: 3 SECRET\n"), 0o644)
	r = runGGUF(t, nil, "moe", "simulate", p("bad.trace"), "--pool", "2")
	checkOneLineError(t, r, exitUsage, "bad.trace: line 4: an expert is not a number in [0, 8)")
	if strings.Contains(string(r.stderr), "SECRET") {
		t.Errorf("the error quotes the trace: %s", r.stderr)
	}
	checkOneLineError(t, runGGUF(t, nil, "moe", "simulate", "/dev/zero", "--pool", "2"), exitUsage, "/dev/zero: line 1 is longer than 1.0 MiB")
	trace, _ := os.ReadFile(p("bad.trace"))
	checkOneLineError(t, runGGUF(t, bytes.NewReader(trace[:len(trace)-10]), "moe", "simulate", "/dev/stdin", "--pool", "2", "--policy", "belady"),
		exitUsage, "the belady policy reads the trace twice, which needs a file, not a pipe")
}
