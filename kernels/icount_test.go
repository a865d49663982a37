package kernels

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// icountRow is one line of testdata/icount-arm64.txt (bench/icount.sh):
// the instructions qemu counted for REPS and 2*REPS calls of one kernel,
// ours and ggml's, and the per-weight figures derived from them.
type icountRow struct {
	kernel               string // a type, or TYPE.LAYOUT[+tables]
	typ                  gguf.Type
	set                  string
	rows                 int64    // weight rows of N multiplied between our two counts
	ours, asm, ggml      [2]int64 // counts at REPS and 2*REPS
	oursW, asmW, ggmlW   string   // per weight, as written (%.4f)
	symbol, ratio, line0 string
}

// icountColumns is the number of fields of a row.
const icountColumns = 14

// readICount parses testdata/icount-arm64.txt, returning its rows and the
// row length N and repetitions REPS (of ggml's kernel) its header states.
func readICount(t *testing.T) (rows []icountRow, n, reps int64) {
	t.Helper()
	path := filepath.Join("testdata", "icount-arm64.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nRe, repsRe := regexp.MustCompile(`\bN=(\d+)`), regexp.MustCompile(`\bREPS=(\d+)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if m := nRe.FindStringSubmatch(line); m != nil && n == 0 {
				n, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if m := repsRe.FindStringSubmatch(line); m != nil && reps == 0 {
				reps, _ = strconv.ParseInt(m[1], 10, 64)
			}
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != icountColumns {
			t.Fatalf("%s: %d fields, want %d: %q", path, len(p), icountColumns, line)
		}
		typName, lay, _ := strings.Cut(p[0], ".")
		typ, err := gguf.ParseType(typName)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if base := strings.TrimSuffix(lay, "+tables"); lay != "" && "."+lay != icountGroups && base != string(layout.Q2LUT) && base != "q1lut" && !isTernaryRow(p[0]) {
			t.Fatalf("%s: kernel %q: layout %q is not one with a kernel", path, p[0], lay)
		}
		r := icountRow{kernel: p[0], typ: typ, set: p[1], oursW: p[7], asmW: p[8], symbol: p[9], ggmlW: p[12], ratio: p[13], line0: line}
		for i, dst := range []*int64{&r.rows, &r.ours[0], &r.ours[1], &r.asm[0], &r.asm[1], &r.ggml[0], &r.ggml[1]} {
			col := []int{2, 3, 4, 5, 6, 10, 11}[i]
			if *dst, err = strconv.ParseInt(p[col], 10, 64); err != nil {
				t.Fatalf("%s: column %d of %q: %v", path, col+1, line, err)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n <= 0 || reps <= 0 || len(rows) == 0 {
		t.Fatalf("%s: no N=, REPS= or rows", path)
	}
	return rows, n, reps
}

// isTernaryRow reports a row of a ternary layout's kernel (TYPE.LAYOUT:
// one row per call).
func isTernaryRow(kernel string) bool {
	_, lay, _ := strings.Cut(kernel, ".")
	_, ok := terLayouts[layout.Kind(lay)]
	return ok
}

// icountGroups suffixes the type of a group kernel's row (repack.go).
const icountGroups = ".groups"

// TestICountTable checks the arithmetic of the committed instruction
// counts: every per-weight figure is the difference of its two counts over
// the weights multiplied in between (ours: its rows column times N, ggml:
// REPS*N), every ratio ours/ggml, each (kernel, set) appears once and is
// compared with ggml's kernel of its type (a q2lut kernel with Q2_K's, a
// ternary layout's with its original type's), and a q2lut or group kernel
// runs whole groups (16 rows, 8). What the counts are is
// bench/icount.sh's to measure; TestICountCoversArm64 (arm64) checks that
// every arm64 kernel has its rows.
func TestICountTable(t *testing.T) {
	rows, n, reps := readICount(t)
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.kernel + "/" + r.set
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		if r.set != "neon" && r.set != "dotprod" {
			t.Errorf("%s: set %q is not an arm64 kernel set", key, r.set)
		}
		if want := "ggml_vec_dot_" + strings.ToLower(r.typ.String()); !strings.HasPrefix(strings.ToLower(r.symbol), want) {
			t.Errorf("%s compared with %s, want %s*", key, r.symbol, want)
		}
		whole := int64(1) // the rows a call multiplies: one, a q2lut group or a packed one
		switch {
		case strings.HasSuffix(r.kernel, icountGroups):
			whole = packRows
		case isTernaryRow(r.kernel):
		case r.kernel != r.typ.String():
			whole = q2lutRows
		}
		if r.rows <= 0 || r.rows%whole != 0 {
			t.Errorf("%s: %d rows multiplied", key, r.rows)
		}
		perWeight := func(c [2]int64, rows int64) (float64, string) {
			w := float64(c[1]-c[0]) / float64(rows*n)
			return w, fmt.Sprintf("%.4f", w)
		}
		ow, oursW := perWeight(r.ours, r.rows)
		_, asmW := perWeight(r.asm, r.rows)
		gw, ggmlW := perWeight(r.ggml, reps)
		if oursW != r.oursW || asmW != r.asmW || ggmlW != r.ggmlW {
			t.Errorf("%s: per weight %s %s %s, the counts give %s %s %s", key, r.oursW, r.asmW, r.ggmlW, oursW, asmW, ggmlW)
		}
		if ow <= 0 || gw <= 0 || r.asm[1]-r.asm[0] > r.ours[1]-r.ours[0] {
			t.Errorf("%s: counts out of order: %s", key, r.line0)
		}
		if want := fmt.Sprintf("%.3f", ow/gw); r.ratio != want {
			t.Errorf("%s: ratio %s, ours/ggml is %s", key, r.ratio, want)
		}
	}
}
