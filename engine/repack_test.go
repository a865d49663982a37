package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
)

// randQ4_0Rows returns rows Q4_0 rows of nb blocks with random nibbles
// (every 5th row all 15s, the largest products) and scales.
func randQ4_0Rows(rng *rand.Rand, rows, nb int) []byte {
	w := make([]byte, rows*nb*q4_0Bytes)
	for r := 0; r < rows; r++ {
		for b := 0; b < nb; b++ {
			blk := w[(r*nb+b)*q4_0Bytes:]
			binary.LittleEndian.PutUint16(blk, f32ToF16(float32(rng.NormFloat64()*0.01)))
			for i := 2; i < q4_0Bytes; i++ {
				blk[i] = byte(rng.IntN(256))
				if r%5 == 4 {
					blk[i] = 0xff
				}
			}
		}
	}
	return w
}

// randQ8_0Row returns a q8_0 activation row of nb blocks; with extreme set
// its values are all +-127.
func randQ8_0Row(rng *rand.Rand, nb int, extreme bool) []byte {
	a := make([]byte, nb*q8_0Bytes)
	for b := 0; b < nb; b++ {
		blk := a[b*q8_0Bytes:]
		binary.LittleEndian.PutUint16(blk, f32ToF16(float32(rng.Float64()*0.05)))
		for i := 2; i < q8_0Bytes; i++ {
			v := rng.IntN(255) - 127
			if extreme {
				v = 127
				if rng.IntN(2) == 0 {
					v = -127
				}
			}
			blk[i] = byte(int8(v))
		}
	}
	return a
}

// rowPackedQ4_0 computes one row's result of the group kernels from the
// row layout: per block the signed integer dot, then
// acc += float32(isum) * (d_w * d_a), each step rounded to float32.
func rowPackedQ4_0(row, act []byte, nb int) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		w, a := row[b*q4_0Bytes:], act[b*q8_0Bytes:]
		var s int32
		for j := 0; j < 16; j++ {
			s += (int32(w[2+j]&15) - 8) * int32(int8(a[2+j]))
			s += (int32(w[2+j]>>4) - 8) * int32(int8(a[18+j]))
		}
		scale := float32(f16tab[le16(w)] * f16tab[le16(a)])
		acc += float32(float32(s) * scale)
	}
	return acc
}

// TestPackedQ4_0 checks the Q4_0 group layout and every group kernel
// against the row-layout computation, bit for bit, and against the row
// kernel to float rounding.
func TestPackedQ4_0(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 0))
	gemvs := map[string]func(g, act, aux []byte, nb int, out *[packRows]float32){"go": gemvQ4_0Go}
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		if pk := kernels[gguf.TypeQ4_0].pack; pk != nil {
			gemvs[set] = pk.gemv
		}
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	t.Logf("group kernels: %v", slices.Sorted(func(yield func(string) bool) {
		for k := range gemvs {
			if !yield(k) {
				return
			}
		}
	}))
	for _, nb := range []int{1, 2, 3, 32, 88} {
		w := randQ4_0Rows(rng, packRows, nb)
		grp := make([]byte, len(w))
		repackQ4_0(grp, w, nb*q4_0Bytes, nb)
		for _, extreme := range []bool{false, true} {
			a := randQ8_0Row(rng, nb, extreme)
			aux := make([]byte, nb*8)
			prepQ4_0(aux, a, nb)
			for name, gemv := range gemvs {
				var out [packRows]float32
				gemv(grp, a, aux, nb, &out)
				for r := range out {
					row := w[r*nb*q4_0Bytes : (r+1)*nb*q4_0Bytes]
					want := rowPackedQ4_0(row, a, nb)
					if math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%s nb %d extreme %v row %d: %g, row layout gives %g", name, nb, extreme, r, out[r], want)
					}
					ref := refDotQ4_0(32*nb, row, a)
					if d := math.Abs(float64(out[r] - ref)); d > 1e-5*(1+math.Abs(float64(ref))) {
						t.Fatalf("%s nb %d row %d: %g, reference kernel %g", name, nb, r, out[r], ref)
					}
				}
			}
		}
	}
}

// TestPackedModel opens a Q4_0 model with and without the group layout:
// mapped, read into memory (the copy then overwrites the row bytes) and
// locked give the same bits on every kernel set (the group kernels are
// exact), one token at a time as in a batch; without repacking the row
// kernels give the same logits to float rounding.
func TestPackedModel(t *testing.T) {
	path := crossModel(t, crosscheck.Case{Shape: "dense", Type: "Q4_0"})
	ids := crosscheck.PromptIDs
	run := func(o OpenOptions, set string, batch int) ([]float32, *Model) {
		t.Helper()
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		m, err := OpenWith(path, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		s := newState(t, m, Options{Ctx: 64, Threads: 2, Batch: batch})
		return sequenceLogits(t, s, ids, len(ids)), m
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	sets := KernelSets()
	want, m := run(OpenOptions{}, sets[0], len(ids))
	if m.PackedBytes == 0 {
		t.Fatal("no matrix was packed")
	}
	t.Logf("%d bytes packed; sets %v", m.PackedBytes, sets)
	for _, set := range sets {
		for _, o := range []OpenOptions{{}, {NoMmap: true}, {Mlock: true}} {
			for _, batch := range []int{1, len(ids)} {
				got, _ := run(o, set, batch)
				if d, at := maxDiff(got, want); d != 0 {
					t.Errorf("%s %+v batch %d: max |diff| %g at %d from %s mapped", set, o, batch, d, at, sets[0])
				}
			}
		}
	}
	rows, m := run(OpenOptions{NoRepack: true}, sets[0], len(ids))
	if m.PackedBytes != 0 {
		t.Errorf("NoRepack packed %d bytes", m.PackedBytes)
	}
	d, _ := maxDiff(rows, want)
	t.Logf("row kernels against the group kernels: max |diff| %.3g", d)
	if d > 0.25 {
		t.Errorf("row kernels are %g off the group kernels", d)
	}
}
