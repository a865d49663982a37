package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/vocabselect"
)

func main() {
	reps := flag.Int("r", 5, "passes over the text for the best-of times")
	idsPath := flag.String("o", "", "write the first pass's ids to this file, one per line")
	noSpecial := flag.Bool("no-special", false, "add no BOS/EOS (add_special off)")
	parseSpecial := flag.Bool("parse-special", false, "recognize control tokens written in the text")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if flag.NArg() != 2 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: vocabbench [-r REPS] [-o IDS] [-no-special] [-parse-special] MODEL.gguf TEXT")
		os.Exit(2)
	}
	model, textPath := flag.Arg(0), flag.Arg(1)
	data, err := os.ReadFile(textPath)
	check(err)
	text := string(data)
	addSpecial := !*noSpecial
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer func() {
			pprof.StopCPUProfile()
			check(f.Close())
		}()
	}

	load := func() *vocabselect.Tokenizer {
		tok, err := vocabselect.Load(context.Background(), model)
		check(err)
		return tok
	}
	// encode times one pass: wall clock and process CPU time.
	encode := func(tok *vocabselect.Tokenizer) ([]int32, pass) {
		start, cpu := time.Now(), cpuTime()
		ids := tok.Encode(text, addSpecial, *parseSpecial)
		return ids, pass{time.Since(start), cpuTime() - cpu}
	}

	t0 := time.Now()
	tok := load()
	loadTime := time.Since(t0)
	ids, cold := encode(tok)
	if *idsPath != "" {
		check(writeIDs(*idsPath, ids))
	}
	best := cold
	for range *reps - 1 {
		again, p := encode(tok)
		if len(again) != len(ids) {
			fatalf("Encode gave %d tokens, then %d", len(ids), len(again))
		}
		best = best.min(p)
	}
	var fresh pass
	for i := range *reps {
		t := load()
		t.Encode("a", false, false) // builds the lazy tables
		if _, p := encode(t); i == 0 {
			fresh = p
		} else {
			fresh = fresh.min(p)
		}
	}
	mbs := func(d time.Duration) float64 { return float64(len(data)) / 1e6 / d.Seconds() }
	fmt.Printf("tokens=%d bytes=%d reps=%d load_s=%.6f cold_s=%.6f fresh_s=%.6f best_s=%.6f cold_MBps=%.2f fresh_MBps=%.2f best_MBps=%.2f",
		len(ids), len(data), *reps, loadTime.Seconds(), cold.wall.Seconds(), fresh.wall.Seconds(), best.wall.Seconds(),
		mbs(cold.wall), mbs(fresh.wall), mbs(best.wall))
	fmt.Printf(" cold_cpu_s=%.6f fresh_cpu_s=%.6f best_cpu_s=%.6f cold_cpu_MBps=%.2f fresh_cpu_MBps=%.2f best_cpu_MBps=%.2f\n",
		cold.cpu.Seconds(), fresh.cpu.Seconds(), best.cpu.Seconds(), mbs(cold.cpu), mbs(fresh.cpu), mbs(best.cpu))
}

// pass is the time one Encode took.
type pass struct{ wall, cpu time.Duration }

// min keeps the lower of each time.
func (p pass) min(q pass) pass { return pass{min(p.wall, q.wall), min(p.cpu, q.cpu)} }

// cpuTime returns the CPU time of the process, all threads (the garbage
// collector's included).
func cpuTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func writeIDs(path string, ids []int32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var num []byte
	for _, id := range ids {
		num = strconv.AppendInt(num[:0], int64(id), 10)
		w.Write(append(num, '\n'))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vocabbench: "+format+"\n", args...)
	os.Exit(1)
}
