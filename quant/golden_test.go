package quant

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The ggml reference vectors (refdata) cover 8 rows per type. The golden
// digests below cover many more inputs (ties, tiny and huge scales, sparse
// and constant rows, non-finite values, zero importance weights) and pin the
// bytes of this transcription as it was when it matched every reference
// vector, so that speed work on the search loops cannot drift on inputs the
// references do not reach. Regenerate only for an intended change of output,
// with: go test ./quant -run TestGoldenDigests -update-golden

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt from the current code")

const goldenRowLen = 512

// goldenRow fills x with the values of recipe kind (0..13).
func goldenRow(s *splitMix64, kind int, x []float32) {
	u := func() float32 { return float32(s.next()>>40) * 0x1p-24 }
	pm := func() float32 { return 2*u() - 1 }
	sc := float32(math.Ldexp(1, int(s.next()%41)-20))
	for i := range x {
		var v float32
		switch kind {
		case 0: // uniform at a random scale
			v = pm() * sc
		case 1: // bell-shaped
			v = (pm() + pm() + pm() + pm()) * sc
		case 2: // rare large outliers
			v = pm()
			if s.next()%37 == 0 {
				v *= 200
			}
		case 3: // sparse
			if s.next()%9 == 0 {
				v = pm() * sc
			}
		case 4: // non-negative
			v = u() * sc
		case 5: // few distinct values: rounding ties everywhere
			v = float32(int(s.next()%5)-2) * 0.5
		case 6: // already on the fp16 grid, as in converted models
			v = FP16ToFP32(FP32ToFP16(pm() * 0.05))
		case 7: // around the group epsilons
			v = pm() * 1e-13
		case 8: // subnormal
			v = pm() * 1e-38
		case 9: // constant
			v = 0.25
		case 10: // small integers at a scale
			v = float32(int(s.next()%33)-16) * sc
		case 11: // non-positive
			v = -u() * sc
		case 12: // wide dynamic range within the row
			v = float32(math.Ldexp(float64(pm()), int(s.next()%24)-12))
		case 13: // a few non-finite or near-overflow values
			v = pm() * sc
			if s.next()%61 == 0 {
				v = [4]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 3e38}[s.next()%4]
			}
		}
		x[i] = v
	}
}

// goldenImatrices returns importance vectors: mild, with zeros and a
// wide range, and spanning many binades.
func goldenImatrices(s *splitMix64) [3][]float32 {
	var ws [3][]float32
	for k := range ws {
		w := make([]float32, goldenRowLen)
		for i := range w {
			u := float32(s.next()>>40) * 0x1p-24
			switch k {
			case 0:
				w[i] = u*u + 0.1
			case 1:
				w[i] = u * u * u * 1000
				if s.next()%7 == 0 {
					w[i] = 0
				}
			case 2:
				w[i] = float32(math.Ldexp(float64(u), int(s.next()%30)-15))
			}
		}
		ws[k] = w
	}
	return ws
}

// goldenDigests returns one line per type and entry point: the SHA-256 of
// every row's output (and error) and of its dequantization.
func goldenDigests(rows int) []string {
	s := splitMix64(7)
	x := make([]float32, rows*goldenRowLen)
	for r := 0; r < rows; r++ {
		goldenRow(&s, r%14, x[r*goldenRowLen:(r+1)*goldenRowLen])
	}
	imats := goldenImatrices(&s)
	var lines []string
	for _, t := range allQuantTypes() {
		q := make([]byte, rowBytes(t, goldenRowLen))
		y := make([]float32, goldenRowLen)
		bs := splitMix64(1000 + uint64(t)) // bytes to dequantize, per type
		modes := []string{"chunk", "ref", "imat0", "imat1", "imat2", "deq"}
		for _, m := range modes {
			h := sha256.New()
			ran := false
			for r := 0; r < rows; r++ {
				xr := x[r*goldenRowLen : (r+1)*goldenRowLen]
				var err error
				switch m {
				case "chunk":
					if RequiresImatrix(t) {
						continue
					}
					err = Quantize(t, q, xr, nil)
				case "ref":
					err = QuantizeRef(t, q, xr)
				case "imat0", "imat1", "imat2":
					if !UsesImatrix(t) {
						continue
					}
					err = Quantize(t, q, xr, imats[m[4]-'0'])
				case "deq": // arbitrary bytes, including NaN and infinite scales
					if !CanDequantize(t) {
						continue
					}
					for i := range q {
						q[i] = byte(bs.next())
					}
					err = Dequantize(t, y, q)
					h.Write(bytesLE(y))
				}
				ran = true
				if err != nil {
					fmt.Fprintf(h, "error %v", err)
				}
				h.Write(q)
				if (m == "chunk" || m == "imat0") && err == nil && CanDequantize(t) {
					if err := Dequantize(t, y, q); err != nil {
						fmt.Fprintf(h, "error %v", err)
					}
					h.Write(bytesLE(y))
				}
			}
			if ran {
				lines = append(lines, fmt.Sprintf("%s %s %x", t, m, h.Sum(nil)))
			}
		}
	}
	return lines
}

// TestGoldenDigests compares every quantizer's output on the golden inputs
// with testdata/golden.txt.
func TestGoldenDigests(t *testing.T) {
	const rows = 70 // five rows of every recipe
	got := goldenDigests(rows)
	path := filepath.Join("testdata", "golden.txt")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 {
			want[f[0]+" "+f[1]] = f[2]
		}
	}
	if len(want) != len(got) {
		t.Errorf("golden file has %d digests, the code produces %d", len(want), len(got))
	}
	for _, line := range got {
		f := strings.Fields(line)
		if w := want[f[0]+" "+f[1]]; w != f[2] {
			t.Errorf("%s %s: digest %s, golden %s", f[0], f[1], f[2], w)
		}
	}
}
