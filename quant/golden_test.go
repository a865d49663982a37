package quant

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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
	u := func() float32 { return float32(float32(s.next()>>40) * 0x1p-24) }
	pm := func() float32 { return float32(2*u()) - 1 }
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
				w[i] = float32(u*u) + 0.1 // rounded apart: arm64 would fuse them
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

// digestBytes returns y's little-endian bytes with every NaN as the one
// pattern 0x7fc00000. A NaN that dequantization makes (a zero quant times
// an infinite scale) has the sign bit set on x86 and clear on ARM: IEEE
// 754 leaves the sign of such a NaN to the hardware, and ggml's own
// dequantization differs the same way. The digests pin every other bit.
func digestBytes(y []float32) []byte {
	b := bytesLE(y)
	for i, v := range y {
		if v != v {
			binary.LittleEndian.PutUint32(b[4*i:], 0x7fc00000)
		}
	}
	return b
}

// goldenDigests returns two lines per type and entry point: the SHA-256 of
// every row's output (and error) and of its dequantization, over the rows
// of finite values ("T mode") and over those with infinities and NaNs
// (recipe 13: "T mode/nonfinite", see nanSuffix).
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
			finite, nonfinite := sha256.New(), sha256.New()
			ran := false
			for r := 0; r < rows; r++ {
				xr := x[r*goldenRowLen : (r+1)*goldenRowLen]
				h := finite
				if r%14 == 13 && m != "deq" {
					h = nonfinite
				}
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
					h.Write(digestBytes(y))
				}
				ran = true
				if err != nil {
					// q holds an earlier row's bytes
					fmt.Fprintf(h, "error %v", err)
					continue
				}
				h.Write(q)
				if (m == "chunk" || m == "imat0") && CanDequantize(t) {
					if err := Dequantize(t, y, q); err != nil {
						fmt.Fprintf(h, "error %v", err)
					}
					h.Write(digestBytes(y))
				}
			}
			if ran {
				lines = append(lines, fmt.Sprintf("%s %s %x", t, m, finite.Sum(nil)))
				if m != "deq" {
					lines = append(lines, fmt.Sprintf("%s %s/nonfinite %x", t, m, nonfinite.Sum(nil)))
				}
			}
		}
	}
	return lines
}

// nanSuffix returns "" where arithmetic makes x86's NaN (0*Inf has the sign
// bit set: amd64, 386) and "@nan+" where it makes ARM's (sign clear: arm64,
// arm, riscv64). A block with an infinite or NaN weight can get a NaN scale
// whose sign is that NaN's, as in ggml (Q8_1's sum*d, IQ4_NL's and IQ1_M's
// weighted sums), so the non-finite rows have one golden digest per
// convention; every finite row must give the same bytes everywhere.
func nanSuffix() string {
	zero, inf := float32(0), float32(math.Inf(1))
	if math.Float32bits(zero*inf)>>31 == 0 {
		return "@nan+"
	}
	return ""
}

// TestGoldenDigests compares every quantizer's output on the golden inputs
// with testdata/golden.txt: "T mode DIGEST" lines, and for the non-finite
// rows on hardware whose NaNs are ARM's, a "T mode/nonfinite@nan+ DIGEST"
// line where the digest differs from x86's (-update-golden there writes
// only those lines).
func TestGoldenDigests(t *testing.T) {
	const rows = 70 // five rows of every recipe
	got := goldenDigests(rows)
	path := filepath.Join("testdata", "golden.txt")
	data, err := os.ReadFile(path)
	if err != nil && !(*updateGolden && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	want := map[string]string{}
	var lines []string // the file's lines, "KEY DIGEST", in order
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 {
			want[f[0]+" "+f[1]] = f[2]
			lines = append(lines, sc.Text())
		}
	}
	suffix := nanSuffix()
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(updatedGolden(lines, got, suffix)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, line := range got {
		f := strings.Fields(line)
		key := f[0] + " " + f[1]
		w, ok := want[key+suffix]
		if !ok {
			w = want[key]
		}
		if w != f[2] {
			t.Errorf("%s %s: digest %s, golden %s", f[0], f[1], f[2], w)
		}
	}
	if generic := len(lines) - strings.Count(string(data), "@"); generic != len(got) {
		t.Errorf("golden file has %d digests without a NaN convention, the code produces %d", generic, len(got))
	}
}

// updatedGolden returns the golden file's text with got, the current
// digests: where arithmetic makes x86's NaNs (suffix ""), got replaces
// every line but the other conventions' ones, which follow their line;
// elsewhere only lines "KEY@suffix" are written, for the keys whose digest
// differs from the x86 line's.
func updatedGolden(lines, got []string, suffix string) string {
	var b strings.Builder
	if suffix == "" {
		kept := map[string][]string{}
		for _, l := range lines {
			if k := strings.Fields(l)[1]; strings.Contains(k, "@") {
				base := strings.Fields(l)[0] + " " + k[:strings.Index(k, "@")]
				kept[base] = append(kept[base], l)
			}
		}
		for _, l := range got {
			b.WriteString(l + "\n")
			f := strings.Fields(l)
			for _, o := range kept[f[0]+" "+f[1]] {
				b.WriteString(o + "\n")
			}
		}
		return b.String()
	}
	mine := map[string]string{}
	for _, l := range got {
		f := strings.Fields(l)
		mine[f[0]+" "+f[1]] = f[2]
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if strings.HasSuffix(f[1], suffix) {
			continue // rewritten below
		}
		b.WriteString(l + "\n")
		if d, ok := mine[f[0]+" "+f[1]]; ok && !strings.Contains(f[1], "@") && d != f[2] && strings.HasSuffix(f[1], "/nonfinite") {
			fmt.Fprintf(&b, "%s %s%s %s\n", f[0], f[1], suffix, d)
		}
	}
	return b.String()
}
