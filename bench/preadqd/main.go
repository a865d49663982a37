//go:build linux

// Command preadqd measures a disk's read bandwidth against the number of
// concurrent reads, with the reads the expert pager makes: one expert's
// gate, up or down matrix of an experts-last GGUF file, at random, read
// with O_DIRECT (pager.DirectSource, as --moe-direct does) or through the
// page cache.
//
//	preadqd -m MODEL [-qd 1,2,4,8,16] [-mib 256] [-rounds 3] [-modes direct,buffered]
//
// Each round runs every mode and queue depth once, in an order rotated
// from round to round, each over the same random reads (-mib of them),
// the file's cached pages dropped (posix_fadvise DONTNEED) before each
// run. Per run it prints the MB/s the readers got, the device's MB/s
// (the process's block reads: readahead included) and the median read
// latency; then per mode and depth the median MB/s over the rounds and
// its ratio to depth 1 of the same mode, and the load average before and
// after (the machine is shared).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// read is one expert matrix: n bytes at off.
type read struct {
	off int64
	n   int
}

func main() {
	model := flag.String("m", "", "experts-last GGUF file")
	qds := flag.String("qd", "1,2,4,8,16", "concurrent reads to measure, comma-separated")
	mib := flag.Int("mib", 256, "MiB read per run")
	rounds := flag.Int("rounds", 3, "rounds (every mode and depth once each)")
	modes := flag.String("modes", "direct,buffered", "direct and/or buffered")
	seed := flag.Uint64("seed", 1, "seed of the random reads")
	flag.Parse()
	if err := run(*model, *qds, *modes, *mib, *rounds, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "preadqd:", err)
		os.Exit(1)
	}
}

func run(model, qdList, modeList string, mib, rounds int, seed uint64) error {
	if model == "" {
		return fmt.Errorf("give the model with -m")
	}
	var depths []int
	for s := range strings.SplitSeq(qdList, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || d < 1 {
			return fmt.Errorf("-qd %q: want positive integers", qdList)
		}
		depths = append(depths, d)
	}
	modes := strings.Split(modeList, ",")
	for _, m := range modes {
		if m != "direct" && m != "buffered" {
			return fmt.Errorf("-modes: %q is neither direct nor buffered", m)
		}
	}
	reads, err := expertReads(model)
	if err != nil {
		return err
	}
	// the same random reads in every run: -mib of them
	rng := rand.New(rand.NewPCG(seed, 0))
	var plan []read
	var total int64
	maxN := 0
	for total < int64(mib)<<20 {
		r := reads[rng.IntN(len(reads))]
		plan = append(plan, r)
		total += int64(r.n)
		maxN = max(maxN, r.n)
	}
	cached, err := os.Open(model)
	if err != nil {
		return err
	}
	defer cached.Close()
	direct, err := pager.OpenDirect(model)
	if err != nil {
		return err
	}
	defer direct.Close()
	fmt.Printf("%s: %d reads of %d-%d KiB, %d MiB per run; load %s\n", model, len(plan), minN(plan)>>10, maxN>>10, total>>20, loadavg())
	type key struct {
		mode string
		qd   int
	}
	got := map[key][]float64{}
	var order []key
	for _, m := range modes {
		for _, d := range depths {
			order = append(order, key{m, d})
		}
	}
	for round := range rounds {
		for i := range order {
			k := order[(i+round)%len(order)]
			if err := unix.Fadvise(int(cached.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				return fmt.Errorf("dropping the file's cached pages: %w", err)
			}
			var src interface {
				ReadAt([]byte, int64) (int, error)
			} = cached
			if k.mode == "direct" {
				src = direct
			}
			res, err := measure(src, plan, maxN, k.qd)
			if err != nil {
				return err
			}
			mbs := float64(total) / res.took.Seconds() / 1e6
			fmt.Printf("round %d %-8s qd %2d: %7.1f MB/s, device %7.1f MB/s, median read %6.2f ms\n",
				round+1, k.mode, k.qd, mbs, float64(res.deviceBytes)/res.took.Seconds()/1e6, res.median.Seconds()*1e3)
			got[k] = append(got[k], mbs)
		}
	}
	fmt.Printf("after: load %s\n", loadavg())
	for _, m := range modes {
		base := median(got[key{m, depths[0]}])
		for _, d := range depths {
			v := median(got[key{m, d}])
			fmt.Printf("median %-8s qd %2d: %7.1f MB/s, %.2fx qd %d\n", m, d, v, v/base, depths[0])
		}
	}
	return nil
}

// expertReads lists every expert matrix of the file: each expert of each
// expert tensor.
func expertReads(path string) ([]read, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := gguf.NewReader(f, st.Size())
	if err != nil {
		return nil, err
	}
	var reads []read
	for i := range r.Tensors {
		t := &r.Tensors[i]
		if !experts.IsExpert(t.Name) || len(t.Dims) < 3 {
			continue
		}
		n := t.Dims[len(t.Dims)-1]
		each := t.Size() / int64(n)
		for e := range int64(n) {
			reads = append(reads, read{off: r.TensorFileOffset(i) + e*each, n: int(each)})
		}
	}
	if len(reads) == 0 {
		return nil, fmt.Errorf("%s has no stacked expert tensors", path)
	}
	return reads, nil
}

type result struct {
	took        time.Duration
	median      time.Duration
	deviceBytes int64
}

// measure reads plan with qd goroutines, each taking the next read.
func measure(src interface {
	ReadAt([]byte, int64) (int, error)
}, plan []read, maxN, qd int) (result, error) {
	page := os.Getpagesize()
	lat := make([]time.Duration, len(plan))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, qd)
	before := inblock()
	start := time.Now()
	for w := range qd {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := osmem.AlignedBytes(maxN + 2*page)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(plan) {
					return
				}
				r := plan[i]
				buf := raw[alignFor(raw, r.off, page):][:r.n]
				t := time.Now()
				if n, err := src.ReadAt(buf, r.off); n < r.n {
					errs[w] = fmt.Errorf("reading %d bytes at %d: %v", r.n, r.off, err)
					return
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return result{}, err
		}
	}
	slices.Sort(lat)
	return result{took: took, median: lat[len(lat)/2], deviceBytes: (inblock() - before) * 512}, nil
}

// alignFor returns where in raw a read at off must start for the file's
// page boundaries to fall on page boundaries in memory, as direct I/O
// needs (pager.DirectSource reads the page-aligned interior directly).
func alignFor(raw []byte, off int64, page int) int {
	addr := int(uintptr(unsafe.Pointer(&raw[0])))
	return ((int(off%int64(page))-addr%page)%page + page) % page
}

// inblock is the process's block reads so far, in 512-byte units.
func inblock() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Inblock
}

func minN(plan []read) int {
	m := plan[0].n
	for _, r := range plan {
		m = min(m, r.n)
	}
	return m
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
