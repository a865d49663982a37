package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dustin/go-humanize"
	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/moegen"
)

// memModel writes a paged-able MoE (experts last) of 64 experts, about
// 55 MB: larger than the guard's per-State overhead, so a memory that
// holds its resident part, KV cache and a few pool slots does not hold
// the file.
func memModel(t *testing.T, dir string) (path string, m *engine.Model) {
	t.Helper()
	spec := moegen.Spec{Model: fixture.Model{Arch: "llama", Name: "memguard", Layers: 2, Embd: 256, FF: 512, Heads: 4,
		KVHeads: 2, Vocab: 256, Experts: 64, ExpertsUsed: 2, Type: gguf.TypeQ8_0, HeadType: gguf.TypeQ8_0, Seed: 5},
		Skew: 3, ExpertsLast: true, Templates: 4}
	path = filepath.Join(dir, "moe.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := spec.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, err = engine.OpenWith(path, engine.OpenOptions{PageExperts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return path, m
}

// simMemory writes a simulated /proc/meminfo (MemAvailable avail bytes of
// 1 GiB) and a cgroup without a limit under dir, for GGUF_MEM_ROOT.
func simMemory(t *testing.T, dir string, avail int64) {
	t.Helper()
	for p, c := range map[string]string{
		"proc/meminfo":     meminfoText(avail),
		"proc/self/cgroup": "0::/\n",
		"sys/fs/cgroup/x":  "",
	} {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func meminfoText(avail int64) string {
	return fmt.Sprintf("MemTotal: %d kB\nMemAvailable: %d kB\n", 1<<20, avail>>10)
}

// TestMemGuardFit: with a simulated memory, run sizes the expert pools
// to what fits: a model that does not fit is paged without being asked
// (and gives the text of the unpaged run), --moe-pool and --moe-budget
// that do not fit shrink with a note, and --no-mmap or a working set that
// cannot fit are refused with one line instead of an OOM kill.
func TestMemGuardFit(t *testing.T) {
	dir := t.TempDir()
	path, m := memModel(t, dir)
	const reserve = 64 << 20
	const ctx = 64
	slot := m.ExpertSlotBytes()
	base := int64(reserve) + m.ResidentBytes + m.KVCacheBytes(ctx) + stateOverhead
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < base-reserve+8*slot {
		t.Fatalf("the model (%d bytes) is too small for the test", st.Size())
	}
	args := []string{"run", path, "-p", "t1 t2 t3", "-n", "12", "--temp", "0", "-t", "2", "-c", fmt.Sprint(ctx), "--mem-reserve", "64MiB"}
	want := mustRun(t, nil, append(args[:len(args)-2:len(args)-2], "--mem-reserve", "off")...)
	sim := filepath.Join(dir, "sim")
	t.Setenv("GGUF_MEM_ROOT", sim)
	simMemory(t, sim, base+slot*11/2) // 5 slots fit
	got := mustRun(t, nil, args...)
	if string(got.stdout) != string(want.stdout) || !strings.Contains(string(got.stderr), "paging its experts into pools of 5 slots per layer") {
		t.Fatalf("auto paging: %q\n%s\nunpaged: %q", got.stdout, got.stderr, want.stdout)
	}
	for _, c := range []struct{ flags, note string }{
		{"--moe-pool 40", "pools of 40 slots per layer"},
		{"--moe-budget 900M", "pools of 64 slots per layer"},
	} {
		r := mustRun(t, nil, append(args, strings.Fields(c.flags)...)...)
		if !strings.Contains(string(r.stderr), c.note) || !strings.Contains(string(r.stderr), "do not fit") ||
			!strings.Contains(string(r.stderr), "using 5 slots") || !strings.Contains(string(r.stderr), "pager: 5 slots per layer") {
			t.Fatalf("%s: %s", c.flags, r.stderr)
		}
	}
	if r := mustRun(t, nil, append(args, "--moe-pool", "4")...); strings.Contains(string(r.stderr), "do not fit") {
		t.Fatalf("a pool that fits was changed: %s", r.stderr)
	}
	simMemory(t, sim, base+slot*3/2) // less than one token's two experts
	checkOneLineError(t, runGGUF(t, nil, args...), 2, "do not fit")
	simMemory(t, sim, reserve+m.ResidentBytes/2)
	checkOneLineError(t, runGGUF(t, nil, append(args, "--no-mmap")...), 2, "--no-mmap")
	checkOneLineError(t, runGGUF(t, nil, append(args, "--mem-reserve", "lots")...), 2, "--mem-reserve")
}

// TestMemWarnUnguarded: with the guard off (--mem-reserve off) nothing
// is resized or refused, but --moe-pool N, --moe-budget and --mlock that
// take more than the memory available each warn on one stderr line with
// the numbers (the seeds' E141 and E150 panicked an iPad), and --mlock
// with the pager counts only the part it locks, the non-experts.
func TestMemWarnUnguarded(t *testing.T) {
	dir := t.TempDir()
	path, m := memModel(t, dir)
	slot := m.ExpertSlotBytes()
	avail := m.ResidentBytes + 10*slot + 1<<20
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() <= avail || 40*slot <= avail {
		t.Fatalf("the model (%d bytes, slots of %d) is too small for the test", st.Size(), slot)
	}
	sim := filepath.Join(dir, "sim")
	t.Setenv("GGUF_MEM_ROOT", sim)
	simMemory(t, sim, avail)
	args := []string{"run", path, "-p", "t1 t2", "-n", "2", "--temp", "0", "-t", "1", "-c", "64", "--mem-reserve", "off"}
	for _, c := range []struct{ flags, warning string }{
		{"--moe-pool 40", fmt.Sprintf("warning: --moe-pool 40 takes %s with %s available", humanize.IBytes(uint64(40*slot)), humanize.IBytes(uint64(avail)))},
		{"--moe-budget 900M", "warning: --moe-budget 900M is more than the " + humanize.IBytes(uint64(avail)) + " available"},
		{"--mlock", fmt.Sprintf("warning: --mlock of %s of weights with %s available", humanize.IBytes(uint64(st.Size())), humanize.IBytes(uint64(avail)))},
		{"--moe-pool 4", ""},
		{"--moe-pool 4 --mlock", ""},
	} {
		r := mustRun(t, nil, append(args, strings.Fields(c.flags)...)...)
		var warnings []string
		for _, l := range strings.Split(string(r.stderr), "\n") {
			if strings.Contains(l, "warning") {
				warnings = append(warnings, l)
			}
		}
		switch {
		case c.warning == "" && len(warnings) > 0:
			t.Errorf("%s: %q, want no warning", c.flags, warnings)
		case c.warning != "" && (len(warnings) != 1 || !strings.HasSuffix(warnings[0], c.warning)):
			t.Errorf("%s: %q, want one line ending %q", c.flags, warnings, c.warning)
		}
	}
}

// TestMemGuardRun: while run generates, memory falling below the reserve
// shrinks the expert pools (by what is short), and with nothing left to
// shrink the generation stops with a message, before any OOM kill. The
// simulated /proc/meminfo is a FIFO, so each of the guard's reads gets
// the next reading in turn.
func TestMemGuardRun(t *testing.T) {
	dir := t.TempDir()
	path, m := memModel(t, dir)
	sim := filepath.Join(dir, "sim")
	simMemory(t, sim, 4<<30)
	fifo := filepath.Join(sim, "proc", "meminfo")
	os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	const reserve = 64 << 20
	// New, the start's Budget, then one read per token: fine twice,
	// short by a little (one slot goes), by a lot (down to the working
	// set), then short again with nothing left.
	readings := []int64{1 << 30, 1 << 30, reserve - 1024, 2 << 20, 1 << 20}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := 0; ; i++ {
			avail := readings[min(i, len(readings)-1)]
			for {
				f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0)
				if err == nil {
					f.WriteString(meminfoText(avail))
					f.Close()
					// Let the reader see the end and close before the
					// next reading is offered: one written while it still
					// holds the FIFO open would be lost.
					time.Sleep(20 * time.Millisecond)
					break
				}
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}
	}()
	t.Setenv("GGUF_MEM_ROOT", sim)
	r := runGGUF(t, nil, "run", path, "-p", "t1 t2 t3", "-n", "40", "--temp", "0", "-t", "2", "-c", "64",
		"--mem-reserve", "64MiB", "--moe-pool", "8")
	e := string(r.stderr)
	if r.code != 2 || !strings.Contains(e, "expert pools shrunk from 8 to 7 slots per layer") ||
		!strings.Contains(e, "expert pools shrunk from 7 to 2 slots per layer") || !strings.Contains(e, "stopped:") ||
		!strings.Contains(e, "below the 64 MiB reserve") || !strings.Contains(e, "nothing is left to shrink") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, e)
	}
	if m.ExpertSlotBytes() == 0 {
		t.Fatal("no experts")
	}
}
