package memguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write writes files (path: content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const meminfo = "MemTotal:        4000000 kB\nMemFree:          100000 kB\nMemAvailable:    3000000 kB\n"

// TestReadSimulated: MemAvailable alone, a cgroup v2 limit (the tightest
// over the hierarchy, inactive file pages counted free), a cgroup v1
// limit on a hybrid system, v1's "no limit", and a container whose cgroup
// is mounted at the root.
func TestReadSimulated(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		avail int64
		limit int64
	}{
		{"no cgroup", map[string]string{"proc/meminfo": meminfo}, 3000000 << 10, 0},
		{"v2", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/box/app\n",
			"cg/box/memory.max": "1073741824\n", "cg/box/memory.current": "900000000\n", "cg/box/memory.stat": "anon 800000000\ninactive_file 10000000\n",
			"cg/box/app/memory.max": "max\n", "cg/box/app/memory.current": "890000000\n"},
			1073741824 - 900000000 + 10000000, 1073741824},
		{"v1 on a hybrid system", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/tv\n0::/\n",
			"cg/memory/tv/memory.limit_in_bytes": "536870912\n", "cg/memory/tv/memory.usage_in_bytes": "500000000\n",
			"cg/memory/tv/memory.stat":        "cache 100\ntotal_inactive_file 1000000\n",
			"cg/memory/memory.limit_in_bytes": "9223372036854771712\n", "cg/memory/memory.usage_in_bytes": "5000000000\n"},
			536870912 - 500000000 + 1000000, 536870912},
		{"v1 without a limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/\n",
			"cg/memory/memory.limit_in_bytes": "9223372036854771712\n", "cg/memory/memory.usage_in_bytes": "5000000000\n"},
			3000000 << 10, 0},
		{"container at the root", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/docker/abc\n",
			"cg/memory.max": "268435456\n", "cg/memory.current": "200000000\n"},
			268435456 - 200000000, 268435456},
	} {
		dir := t.TempDir()
		write(t, dir, c.files)
		r, err := Read(Roots{Proc: filepath.Join(dir, "proc"), Cgroup: filepath.Join(dir, "cg")})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Available() != c.avail || r.Limit != c.limit {
			t.Fatalf("%s: available %d, limit %d; want %d, %d (%+v)", c.name, r.Available(), r.Limit, c.avail, c.limit, r)
		}
	}
	if _, err := Read(Roots{Proc: t.TempDir(), Cgroup: t.TempDir()}); err == nil {
		t.Fatal("no meminfo read without an error")
	}
}

// TestGuard: the guard reports how far the memory is below its reserve
// as the simulated files change, a nil guard never acts, and ShrinkTo
// frees what is short without going under the floor.
func TestGuard(t *testing.T) {
	dir := t.TempDir()
	roots := Roots{Proc: filepath.Join(dir, "proc"), Cgroup: filepath.Join(dir, "cg")}
	write(t, dir, map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n",
		"cg/memory.max": "1073741824\n", "cg/memory.current": "500000000\n"})
	g := New(roots, 0)
	if g == nil || g.Reserve != 64<<20 {
		t.Fatalf("guard %+v: want the 64 MiB reserve of a 1 GiB limit", g)
	}
	if st := g.Check(); st.Low() {
		t.Fatalf("low with half the limit free: %s", st)
	}
	if b, _ := g.Budget(); b != 1073741824-500000000-64<<20 {
		t.Fatalf("budget %d", b)
	}
	write(t, dir, map[string]string{"cg/memory.current": "1040000000\n"})
	st := g.Check()
	if want := int64(64<<20) - (1073741824 - 1040000000); st.Short != want || !strings.Contains(st.String(), "below the 64 MiB reserve") {
		t.Fatalf("short %d, want %d: %s", st.Short, want, st)
	}
	var none *Guard
	if none.Check().Low() {
		t.Fatal("a nil guard acted")
	}
	if b, _ := none.Budget(); b != -1 {
		t.Fatalf("a nil guard's budget %d", b)
	}
	if New(Roots{Proc: t.TempDir()}, 0) != nil {
		t.Fatal("a guard without /proc/meminfo")
	}
	for _, c := range []struct {
		short, slot int64
		cur, floor  int
		want        int
	}{{1, 100, 10, 2, 9}, {250, 100, 10, 2, 7}, {10000, 100, 10, 2, 2}, {1, 100, 2, 2, 2}} {
		if got := ShrinkTo(c.short, c.slot, c.cur, c.floor); got != c.want {
			t.Fatalf("ShrinkTo(%d, %d, %d, %d) = %d, want %d", c.short, c.slot, c.cur, c.floor, got, c.want)
		}
	}
}
