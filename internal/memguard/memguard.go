// Package memguard reads how much memory a process may still take before
// the kernel's OOM killer (or Android's low-memory killer) ends it, and
// keeps a reserve of it: the seeds' tv-guard.sh, in the process.
//
// On Linux the figure is the smaller of /proc/meminfo's MemAvailable and,
// when the process is in a memory cgroup with a limit (v2 memory.max, v1
// memory.limit_in_bytes, the tightest over the hierarchy), that limit less
// the cgroup's usage. Under a cgroup the page cache is charged to it, so
// the usage counts the mapped weights and the file pages read; only the
// inactive file pages (which the kernel drops first) count as free again.
// The roots (/proc, /sys/fs/cgroup) are parameters, so tests simulate a
// device with files in a directory. Elsewhere there is no reading and the
// guard never acts.
package memguard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// Roots are where the kernel's files are read from.
type Roots struct {
	Proc, Cgroup string
}

// System is the running kernel's roots.
var System = Roots{Proc: "/proc", Cgroup: "/sys/fs/cgroup"}

// Reading is the memory as read once.
type Reading struct {
	// MemTotal and MemAvailable are /proc/meminfo's, in bytes.
	MemTotal, MemAvailable int64
	// Limit is the tightest memory limit of the process's cgroups (0:
	// none), Usage that cgroup's usage (page cache included) and
	// Reclaimable its inactive file pages; Cgroup is its directory.
	Limit, Usage, Reclaimable int64
	Cgroup                    string
}

// Available is what the process may still take: MemAvailable, or less
// under a cgroup limit.
func (r Reading) Available() int64 {
	a := max(r.MemAvailable, 0)
	if r.Limit > 0 {
		a = min(a, max(0, r.Limit-r.Usage+r.Reclaimable))
	}
	return a
}

// Total is the memory the process could have at most: MemTotal, or the
// cgroup limit when lower.
func (r Reading) Total() int64 {
	if r.Limit > 0 {
		return min(r.MemTotal, r.Limit)
	}
	return r.MemTotal
}

// String says what was read, for messages: "512 MiB available (cgroup
// limit 1.0 GiB, 480 MiB used)".
func (r Reading) String() string {
	s := humanize.IBytes(uint64(r.Available())) + " available"
	if r.Limit > 0 {
		s += fmt.Sprintf(" (cgroup limit %s, %s used)", humanize.IBytes(uint64(r.Limit)), humanize.IBytes(uint64(r.Usage-r.Reclaimable)))
	} else {
		s += fmt.Sprintf(" (of %s)", humanize.IBytes(uint64(r.MemTotal)))
	}
	return s
}

// DefaultReserve is the reserve kept when none is given: a sixteenth of
// the memory, at least 64 MiB (what a TV box's system needs to stay
// responsive) and at most 256 MiB.
func DefaultReserve(r Reading) int64 {
	return min(max(r.Total()/16, 64<<20), 256<<20)
}

// Read reads the memory under roots. It fails where there is no
// /proc/meminfo (not Linux); a cgroup that cannot be read counts as no
// limit.
func Read(roots Roots) (Reading, error) {
	var r Reading
	mi, err := readKeyed(filepath.Join(roots.Proc, "meminfo"), ":")
	if err != nil {
		return r, err
	}
	var ok [2]bool
	r.MemTotal, ok[0] = mi["MemTotal"]
	r.MemAvailable, ok[1] = mi["MemAvailable"]
	if !ok[0] || !ok[1] {
		return r, errors.New(filepath.Join(roots.Proc, "meminfo") + ": no MemTotal or MemAvailable")
	}
	// meminfo counts kB.
	r.MemTotal *= 1024
	r.MemAvailable *= 1024
	readCgroup(roots, &r)
	return r, nil
}

// readCgroup finds the process's memory cgroup (v1 when a v1 memory
// controller holds it, else v2) and the tightest limit from it up to the
// root.
func readCgroup(roots Roots, r *Reading) {
	b, err := os.ReadFile(filepath.Join(roots.Proc, "self", "cgroup"))
	if err != nil {
		return
	}
	var v1, v2 string
	v2set := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, v2set = f[2], true
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1 = f[2]
			}
		}
	}
	var root, limitFile, usageFile, inactive string
	var leaf string
	switch {
	case v1 != "" && isDir(filepath.Join(roots.Cgroup, "memory")):
		root = filepath.Join(roots.Cgroup, "memory")
		leaf, limitFile, usageFile, inactive = v1, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
	case v2set:
		root = roots.Cgroup
		leaf, limitFile, usageFile, inactive = v2, "memory.max", "memory.current", "inactive_file"
	default:
		return
	}
	dir := filepath.Join(root, filepath.FromSlash(leaf))
	if !isDir(dir) {
		// A container that shows the host's path but mounts its own
		// cgroup at the root.
		dir = root
	}
	for {
		if lim, ok := readLimit(filepath.Join(dir, limitFile)); ok {
			use, err := readInt(filepath.Join(dir, usageFile))
			if err == nil {
				st, _ := readKeyed(filepath.Join(dir, "memory.stat"), " ")
				rec := st[inactive]
				if r.Limit == 0 || lim-use+rec < r.Limit-r.Usage+r.Reclaimable {
					r.Limit, r.Usage, r.Reclaimable, r.Cgroup = lim, use, rec, dir
				}
			}
		}
		if dir == root || len(dir) <= len(root) {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// noLimit is above any real limit: cgroup v1 reports "none" as the
// largest page-aligned int64.
const noLimit = 1 << 62

// readLimit reads a cgroup limit file; "max" and v1's huge value are no
// limit.
func readLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0, false
	}
	return n, true
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
}

// readKeyed reads "key<sep> value [unit]" lines (meminfo, memory.stat).
func readKeyed(path, sep string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
			m[strings.TrimSpace(k)] = n
		}
	}
	return m, sc.Err()
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
