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

// TestPackedModel opens a Q4_0, a Q4_K and a Q6_K model with and without the group
// layout on every kernel set. Where a set packs the type, mapped, locked
// and (for a layout the size of the rows) read into memory, one token at a
// time as in a batch, give the same bits on every such set (the group
// kernels are exact); a layout larger than the rows is not made for a file
// read into memory, which then runs as with NoRepack. Without repacking the
// row kernels give the same logits to float rounding.
func TestPackedModel(t *testing.T) {
	ids := crosscheck.PromptIDs
	t.Cleanup(func() { _ = SelectKernels("") })
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		path := crossModel(t, crosscheck.Case{Shape: "dense", Type: typ.String()})
		run := func(o OpenOptions, set string, batch int) ([]float32, int64) {
			t.Helper()
			if err := SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			m, err := OpenWith(path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			s := newState(t, m, Options{Ctx: 64, Threads: 2, Batch: batch})
			return sequenceLogits(t, s, ids, len(ids)), m.PackedBytes
		}
		var want []float32
		for _, set := range KernelSets() {
			got, packed := run(OpenOptions{}, set, len(ids))
			rows, none := run(OpenOptions{NoRepack: true}, set, len(ids))
			if none != 0 {
				t.Errorf("%s %s: NoRepack packed %d bytes", typ, set, none)
			}
			if _ = SelectKernels(set); kernels[typ].pack == nil {
				if packed != 0 || !slices.Equal(got, rows) {
					t.Errorf("%s %s packs nothing, yet packed %d bytes or changed the logits", typ, set, packed)
				}
				continue
			}
			if packed == 0 {
				t.Fatalf("%s %s: no matrix was packed", typ, set)
			}
			if want == nil {
				want = got
				d, _ := maxDiff(rows, want)
				t.Logf("%s: %d bytes packed (%s); row kernels against the group kernels: max |diff| %.3g", typ, packed, set, d)
				if d > 0.25 {
					t.Errorf("%s: row kernels are %g off the group kernels", typ, d)
				}
			}
			same := typ != gguf.TypeQ4_K // Q4_K's layout is 32 bytes a super-block larger
			for _, c := range []struct {
				o     OpenOptions
				batch int
			}{{OpenOptions{}, len(ids)}, {OpenOptions{}, 1}, {OpenOptions{Mlock: true}, len(ids)}, {OpenOptions{NoMmap: true}, len(ids)}} {
				got, packed := run(c.o, set, c.batch)
				switch {
				case c.o.NoMmap && !same:
					if packed != 0 || !slices.Equal(got, rows) {
						t.Errorf("%s %s NoMmap: packed %d bytes of a larger layout, or changed the logits", typ, set, packed)
					}
				default:
					if d, at := maxDiff(got, want); d != 0 {
						t.Errorf("%s %s %+v batch %d: max |diff| %g at %d", typ, set, c.o, c.batch, d, at)
					}
				}
			}
		}
		if want == nil && typ == gguf.TypeQ4_0 {
			t.Errorf("%s: no kernel set packs it (every set should)", typ)
		} else if want == nil {
			t.Logf("%s: no kernel set of this build packs it", typ)
		}
	}
}

// q8KBlock makes a q8_K activation block of the 256 values v with scale d
// (its bsums computed from them).
func q8KBlock(d float32, v []int8) []byte {
	y := make([]byte, q8_KBytes)
	binary.LittleEndian.PutUint32(y, math.Float32bits(d))
	for i, x := range v {
		y[4+i] = byte(x)
	}
	for j := 0; j < 16; j++ {
		var s int16
		for _, x := range v[16*j : 16*j+16] {
			s += int16(x)
		}
		binary.LittleEndian.PutUint16(y[260+2*j:], uint16(s))
	}
	return y
}

// rowPackedQ4_K computes one row's result of the Q4_K group kernels from
// the row layout (repack.go's sums).
func rowPackedQ4_K(row, act []byte, nb int) float32 {
	var acc, accm float32
	for b := 0; b < nb; b++ {
		x, y := row[b*q4_KBytes:], act[b*q8_KBytes:]
		sc, mn := kScales(x[4:16])
		var isum, imin int32
		for g := 0; g < 8; g++ {
			var dot, bs int32
			for i := 0; i < 32; i++ {
				q := x[16+32*(g/2)+i]
				if g%2 == 1 {
					q >>= 4
				}
				dot += int32(q&15) * int32(int8(y[4+32*g+i]))
				bs += int32(int8(y[4+32*g+i]))
			}
			isum += int32(sc[g]) * dot
			imin += int32(mn[g]) * bs
		}
		da := math.Float32frombits(le32(y))
		acc += float32(float32(isum) * float32(f16tab[le16(x)]*da))
		accm += float32(float32(imin) * float32(f16tab[le16(x[2:])]*da))
	}
	return acc - accm
}

// TestPackedQ4_K checks the Q4_K group layout and kernels as
// TestPackedQ4_0 does, on random blocks (every 5th row all nibbles and
// scales at their maximum, with activations of +-127).
func TestPackedQ4_K(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	gemvs := map[string]func(g, act, aux []byte, nb int, out *[packRows]float32){"go": gemvQ4_KGo}
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		if pk := kernels[gguf.TypeQ4_K].pack; pk != nil {
			gemvs[set] = pk.gemv
		}
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	t.Logf("%d group kernels", len(gemvs))
	for _, nb := range []int{1, 2, 11} {
		w := make([]byte, packRows*nb*q4_KBytes)
		for r := 0; r < packRows; r++ {
			for b := 0; b < nb; b++ {
				blk := w[(r*nb+b)*q4_KBytes : (r*nb+b+1)*q4_KBytes]
				for i := range blk {
					blk[i] = byte(rng.IntN(256))
					if r%5 == 4 {
						blk[i] = 0xff
					}
				}
				binary.LittleEndian.PutUint16(blk, f32ToF16(float32(rng.Float64()*0.01)))
				binary.LittleEndian.PutUint16(blk[2:], f32ToF16(float32(rng.Float64()*0.01)))
			}
		}
		grp := make([]byte, nb*q4KGroupBytes)
		repackQ4_K(grp, w, nb*q4_KBytes, nb)
		for _, extreme := range []bool{false, true} {
			var a []byte
			for b := 0; b < nb; b++ {
				v := make([]int8, 256)
				for i := range v {
					v[i] = int8(rng.IntN(255) - 127)
					if extreme {
						v[i] = int8(127 - 254*rng.IntN(2))
					}
				}
				a = append(a, q8KBlock(float32(rng.Float64()*0.05), v)...)
			}
			aux := make([]byte, nb*32)
			prepQ4_K(aux, a, nb)
			for name, gemv := range gemvs {
				var out [packRows]float32
				gemv(grp, a, aux, nb, &out)
				for r := range out {
					row := w[r*nb*q4_KBytes : (r+1)*nb*q4_KBytes]
					want := rowPackedQ4_K(row, a, nb)
					if math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%s nb %d extreme %v row %d: %g, row layout gives %g", name, nb, extreme, r, out[r], want)
					}
					ref := refDotQ4_K(256*nb, row, a)
					if d := math.Abs(float64(out[r] - ref)); d > 1e-4*(1+math.Abs(float64(ref))) {
						t.Fatalf("%s nb %d row %d: %g, reference kernel %g", name, nb, r, out[r], ref)
					}
				}
			}
		}
	}
}

// rowPackedQ6_K computes one row's result of the Q6_K group kernels from
// the row layout (repack.go's sums).
func rowPackedQ6_K(row, act []byte, nb int) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		x, y := row[b*q6_KBytes:], act[b*q8_KBytes:]
		var v [256]int8
		q6Unpack(x, &v)
		var isum int32
		for g := 0; g < 16; g++ {
			var dot int32
			for i := 16 * g; i < 16*g+16; i++ {
				dot += int32(v[i]) * int32(int8(y[4+i]))
			}
			isum += int32(int8(x[192+g])) * dot
		}
		acc += float32(float32(isum) * float32(f16tab[le16(x[208:])]*math.Float32frombits(le32(y))))
	}
	return acc
}

// TestPackedQ6_K checks the Q6_K group layout and kernels as
// TestPackedQ4_0 does (every 5th row all values 63 and scales -128).
func TestPackedQ6_K(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 0))
	gemvs := map[string]func(g, act, aux []byte, nb int, out *[packRows]float32){"go": gemvQ6_KGo}
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		if pk := kernels[gguf.TypeQ6_K].pack; pk != nil {
			gemvs[set] = pk.gemv
		}
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	t.Logf("%d group kernels", len(gemvs))
	for _, nb := range []int{1, 2, 11} {
		w := make([]byte, packRows*nb*q6_KBytes)
		for r := 0; r < packRows; r++ {
			for b := 0; b < nb; b++ {
				blk := w[(r*nb+b)*q6_KBytes : (r*nb+b+1)*q6_KBytes]
				for i := range blk {
					blk[i] = byte(rng.IntN(256))
					if r%5 == 4 {
						blk[i] = 0xff
						if i >= 192 {
							blk[i] = 0x80
						}
					}
				}
				binary.LittleEndian.PutUint16(blk[208:], f32ToF16(float32(rng.Float64()*0.01)))
			}
		}
		grp := make([]byte, nb*q6KGroupBytes)
		repackQ6_K(grp, w, nb*q6_KBytes, nb)
		for _, extreme := range []bool{false, true} {
			var a []byte
			for b := 0; b < nb; b++ {
				v := make([]int8, 256)
				for i := range v {
					v[i] = int8(rng.IntN(255) - 127)
					if extreme {
						v[i] = int8(127 - 254*rng.IntN(2))
					}
				}
				a = append(a, q8KBlock(float32(rng.Float64()*0.05), v)...)
			}
			aux := make([]byte, nb*q6KAuxBytes)
			prepQ6_K(aux, a, nb)
			for name, gemv := range gemvs {
				var out [packRows]float32
				gemv(grp, a, aux, nb, &out)
				for r := range out {
					row := w[r*nb*q6_KBytes : (r+1)*nb*q6_KBytes]
					want := rowPackedQ6_K(row, a, nb)
					if math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%s nb %d extreme %v row %d: %g, row layout gives %g", name, nb, extreme, r, out[r], want)
					}
					ref := refDotQ6_K(256*nb, row, a)
					if d := math.Abs(float64(out[r] - ref)); d > 1e-4*(1+math.Abs(float64(ref))) {
						t.Fatalf("%s nb %d row %d: %g, reference kernel %g", name, nb, r, out[r], ref)
					}
				}
			}
		}
	}
}
