package engine

import (
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
)

// randBlocks returns rows rows of nb random blocks of bytes bytes each, the
// block's f16 scales at scales set small; every 5th row is all fill bytes
// (chosen for the largest products), but for the scales.
func randBlocks(rng *rand.Rand, rows, nb, bytes int, fill byte, scales ...int) []byte {
	w := make([]byte, rows*nb*bytes)
	for r := 0; r < rows; r++ {
		for b := 0; b < nb; b++ {
			blk := w[(r*nb+b)*bytes : (r*nb+b+1)*bytes]
			for i := range blk {
				blk[i] = byte(rng.IntN(256))
				if r%5 == 4 {
					blk[i] = fill
				}
			}
			for _, o := range scales {
				binary.LittleEndian.PutUint16(blk[o:], f32ToF16(float32(rng.Float64()*0.01)))
			}
		}
	}
	return w
}

// randAct returns an activation row of nb blocks of type t (q8_0 or q8_K);
// with extreme set its values are all +-127.
func randAct(rng *rand.Rand, t gguf.Type, nb int, extreme bool) []byte {
	n := nb * t.BlockSize()
	v := make([]int8, n)
	for i := range v {
		v[i] = int8(rng.IntN(255) - 127)
		if extreme {
			v[i] = int8(127 - 254*rng.IntN(2))
		}
	}
	var a []byte
	if t == gguf.TypeQ8_K {
		for b := 0; b < nb; b++ {
			a = append(a, q8KBlock(float32(rng.Float64()*0.05), v[256*b:256*(b+1)])...)
		}
		return a
	}
	for b := 0; b < nb; b++ {
		blk := make([]byte, q8_0Bytes)
		binary.LittleEndian.PutUint16(blk, f32ToF16(float32(rng.Float64()*0.05)))
		for i, x := range v[32*b : 32*(b+1)] {
			blk[2+i] = byte(x)
		}
		a = append(a, blk...)
	}
	return a
}

// rowPacked32 computes one row's result of the Q4_0 or Q8_0 group kernels
// from the row layout: per block the signed integer dot of the weights
// (value j of block w by value) with the activations, then
// acc += float32(isum) * (d_w * d_a), each step rounded to float32.
func rowPacked32(row, act []byte, nb, blockBytes int, value func(w []byte, j int) int32) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		w, a := row[b*blockBytes:], act[b*q8_0Bytes:]
		var s int32
		for j := 0; j < 32; j++ {
			s += value(w, j) * int32(int8(a[2+j]))
		}
		acc += float32(float32(s) * float32(f16tab[le16(w)]*f16tab[le16(a)]))
	}
	return acc
}

func rowPackedQ4_0(row, act []byte, nb int) float32 {
	return rowPacked32(row, act, nb, q4_0Bytes, func(w []byte, j int) int32 { return int32(w[2+j%16]>>(4*(j/16))&15) - 8 })
}

func rowPackedQ8_0(row, act []byte, nb int) float32 {
	return rowPacked32(row, act, nb, q8_0Bytes, func(w []byte, j int) int32 { return int32(int8(w[2+j])) })
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

// TestPackedKernels checks each type's group layout and every group kernel
// (the Go one and each kernel set's) against the row layout computed
// directly, bit for bit, and against the type's reference row kernel to
// float rounding, on random blocks with extreme rows and activations.
func TestPackedKernels(t *testing.T) {
	cases := []struct {
		t      gguf.Type
		fill   byte  // of the extreme rows: 15s, -128s, 15s and 63s
		scales []int // offsets of the f16 scales in a block
		row    func(row, act []byte, nb int) float32
	}{
		{gguf.TypeQ4_0, 0xff, []int{0}, rowPackedQ4_0},
		{gguf.TypeQ8_0, 0x80, []int{0}, rowPackedQ8_0},
		{gguf.TypeQ4_K, 0xff, []int{0, 2}, rowPackedQ4_K},
		{gguf.TypeQ6_K, 0xff, []int{208}, rowPackedQ6_K},
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	for _, c := range cases {
		gk := packKernels[c.t]
		gemvs := map[string]func(g, act, aux []byte, nb int, out *[packRows]float32){"go": gk.gemv}
		for _, set := range KernelSets() {
			if err := SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			if pk := kernels[c.t].pack; pk != nil && set != "portable" {
				gemvs[set] = pk.gemv
			}
		}
		gemm4s := map[string]func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32){}
		for _, set := range KernelSets() {
			_ = SelectKernels(set)
			if pk := kernels[c.t].pack; pk != nil && pk.gemm4 != nil {
				gemm4s[set] = pk.gemm4
			}
		}
		t.Logf("%s: group kernels %v, four-row %v", c.t, slices.Sorted(maps.Keys(gemvs)), slices.Sorted(maps.Keys(gemm4s)))
		rng := rand.New(rand.NewPCG(uint64(c.t), 0))
		block, _ := c.t.RowSize(int64(c.t.BlockSize()))
		act := kernels[c.t].act
		for _, nb := range []int{1, 2, 3, 11, 32} {
			w := randBlocks(rng, packRows, nb, int(block), c.fill, c.scales...)
			rb := nb * int(block)
			grp := make([]byte, nb*gk.groupBytes)
			gk.repack(grp, w, rb, nb)
			for _, extreme := range []bool{false, true} {
				a := randAct(rng, act, nb, extreme)
				aux := make([]byte, nb*gk.auxBytes)
				gk.prep(aux, a, nb)
				// four activation rows, the last this one, apart by
				// strides larger than a row
				as, xs := len(a)+40, len(aux)+24
				a4, aux4 := make([]byte, 3*as+len(a)), make([]byte, 3*xs+len(aux))
				for i := 0; i < 3; i++ {
					copy(a4[i*as:], randAct(rng, act, nb, extreme))
					gk.prep(aux4[i*xs:i*xs+len(aux)], a4[i*as:], nb)
				}
				copy(a4[3*as:], a)
				copy(aux4[3*xs:], aux)
				for name, gemm4 := range gemm4s {
					var out [4 * packRows]float32
					gemm4(grp, a4, aux4, as, xs, nb, &out)
					for i := 0; i < 4; i++ {
						var want [packRows]float32
						gk.gemv(grp, a4[i*as:], aux4[i*xs:], nb, &want)
						if !slices.Equal(out[8*i:8*i+8], want[:]) {
							t.Fatalf("%s %s four-row nb %d row %d: %v, gemv gives %v", c.t, name, nb, i, out[8*i:8*i+8], want)
						}
					}
				}
				for name, gemv := range gemvs {
					var out [packRows]float32
					gemv(grp, a, aux, nb, &out)
					for r := range out {
						row := w[r*rb : (r+1)*rb]
						if want := c.row(row, a, nb); math.Float32bits(out[r]) != math.Float32bits(want) {
							t.Fatalf("%s %s nb %d extreme %v row %d: %g, row layout gives %g", c.t, name, nb, extreme, r, out[r], want)
						}
						ref := kernels[c.t].ref(nb*c.t.BlockSize(), row, a)
						if d := math.Abs(float64(out[r] - ref)); d > 1e-4*(1+math.Abs(float64(ref))) {
							t.Fatalf("%s %s nb %d row %d: %g, reference kernel %g", c.t, name, nb, r, out[r], ref)
						}
					}
				}
			}
		}
	}
}

// packedLogits opens the model at path with o under kernel set set and
// returns the logits of crosscheck.PromptIDs evaluated batch tokens at a
// time, with the bytes the model repacked.
func packedLogits(t *testing.T, path string, o OpenOptions, set string, batch int) ([]float32, int64) {
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
	ids := crosscheck.PromptIDs
	return sequenceLogits(t, s, ids, len(ids)), m.PackedBytes
}

// TestPackedModel opens a Q4_0, a Q8_0, a Q4_K and a Q6_K model with and without the group
// layout on every kernel set. Where a set packs the type, mapped, locked
// and (for a layout the size of the rows) read into memory, one token at a
// time as in a batch, give the same bits on every such set (the group
// kernels are exact); a layout larger than the rows is not made for a file
// read into memory, which then runs as with NoRepack. Without repacking the
// row kernels give the same logits to float rounding.
func TestPackedModel(t *testing.T) {
	ids := crosscheck.PromptIDs
	t.Cleanup(func() { _ = SelectKernels("") })
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		path := crossModel(t, crosscheck.Case{Shape: "dense", Type: typ.String()})
		run := func(o OpenOptions, set string, batch int) ([]float32, int64) {
			t.Helper()
			return packedLogits(t, path, o, set, batch)
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

// BenchmarkPacked measures one 256x4096 matrix (in cache) times one
// activation row ("gemv") and four ("x4"), per type with group kernels and
// kernel set: the row kernels ("rows": dot, or dot4 for four rows) against
// the group kernels ("groups": gemv, or gemm4 where the set has it). The
// ratio rows/groups is the group layout's gain in the kernels alone.
func BenchmarkPacked(b *testing.B) {
	defer SelectKernels("")
	const n, rows = 4096, 256
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(9, uint64(typ)))
			f := make([]float32, n)
			act := kernels[typ].act
			rb, ab := actRowBytes(typ, n), actRowBytes(act, n)
			w, a := make([]byte, rows*rb), make([]byte, 4*ab)
			for r := 0; r < rows+4; r++ {
				for i := range f {
					f[i] = float32(rng.NormFloat64())
				}
				var err error
				if r < rows {
					err = quantizeAct(typ, w[r*rb:(r+1)*rb], f)
				} else {
					err = quantizeAct(act, a[(r-rows)*ab:(r-rows+1)*ab], f)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			for _, set := range KernelSets() {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				benchPacked(b, set, kernels[typ], typ, w, a, n, rows)
			}
		})
	}
}

// benchPacked runs BenchmarkPacked's four cases of one type and set.
func benchPacked(b *testing.B, set string, k *kernel, typ gguf.Type, w, a []byte, n, rows int) {
	if k.pack == nil {
		return
	}
	rb, ab := actRowBytes(typ, n), actRowBytes(k.act, n)
	m := &Matrix{Type: typ, Cols: n, Rows: rows, RowBytes: rb, data: slices.Clone(w), k: k}
	m.pack(false)
	pk, nb, gb := k.pack, n/typ.BlockSize(), m.pk.groupBytes
	aux := make([]byte, 4*nb*pk.auxBytes)
	for j := 0; j < 4; j++ {
		pk.prep(aux[j*nb*pk.auxBytes:], a[j*ab:], nb)
	}
	var o [packRows]float32
	var o4 [4 * packRows]float32
	var q [4]float32
	b.Run(set+"/gemv/rows", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		for b.Loop() {
			for r := 0; r < rows; r++ {
				k.dot(n, w[r*rb:], a)
			}
		}
	})
	b.Run(set+"/gemv/groups", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		for b.Loop() {
			for g := 0; g < rows/packRows; g++ {
				pk.gemv(m.pk.data[g*gb:], a, aux, nb, &o)
			}
		}
	})
	if k.dot4 == nil {
		return
	}
	b.Run(set+"/x4/rows", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		for b.Loop() {
			for r := 0; r < rows; r++ {
				k.dot4(n, w[r*rb:], a, ab, &q)
			}
		}
	})
	b.Run(set+"/x4/groups", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		for b.Loop() {
			for g := 0; g < rows/packRows; g++ {
				if pk.gemm4 != nil {
					pk.gemm4(m.pk.data[g*gb:], a, aux, ab, nb*pk.auxBytes, nb, &o4)
					continue
				}
				for j := 0; j < 4; j++ {
					pk.gemv(m.pk.data[g*gb:], a[j*ab:], aux[j*nb*pk.auxBytes:], nb, &o)
				}
			}
		}
	})
}
