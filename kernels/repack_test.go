package kernels

import (
	"bytes"
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

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
	var acc float32
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
		acc += float32(float32(float32(isum)*float32(f16tab[le16(x)]*da)) - float32(float32(imin)*float32(f16tab[le16(x[2:])]*da)))
	}
	return acc
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
// directly and against the type's portable row kernel, bit for bit (so a
// packed matrix gives the portable kernels' bits wherever a set promises
// them), and against its reference row kernel to float rounding, on
// random blocks with extreme rows and activations.
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
		// each set's kernels with its own prep (the aux values may differ)
		gemvs := map[string]*packKernel{"go": gk}
		for _, set := range KernelSets() {
			if err := SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			if pk := kernels[c.t].pack; pk != nil && set != "portable" {
				gemvs[set] = pk
			}
		}
		gemm4s := map[string]*packKernel{}
		for _, set := range KernelSets() {
			_ = SelectKernels(set)
			if pk := kernels[c.t].pack; pk != nil && pk.gemm4 != nil {
				gemm4s[set] = pk
			}
		}
		pairs := map[string]*packKernel{}
		for _, set := range KernelSets() {
			_ = SelectKernels(set)
			if pk := kernels[c.t].pack; pk != nil && pk.gemv2 != nil {
				pairs[set] = pk
			}
		}
		t.Logf("%s: group kernels %v, four-row %v, two-group %v", c.t, slices.Sorted(maps.Keys(gemvs)), slices.Sorted(maps.Keys(gemm4s)), slices.Sorted(maps.Keys(pairs)))
		rng, rng2 := rand.New(rand.NewPCG(uint64(c.t), 0)), rand.New(rand.NewPCG(uint64(c.t), 1))
		block, _ := c.t.RowSize(int64(c.t.BlockSize()))
		act := kernels[c.t].act
		for _, nb := range []int{1, 2, 3, 11, 32} {
			// two groups, 16 rows: the second from its own source, so that
			// the first group and the activations are the draws the test
			// always made
			w := randBlocks(rng, packRows, nb, int(block), c.fill, c.scales...)
			w = append(w, randBlocks(rng2, packRows, nb, int(block), c.fill, c.scales...)...)
			rb := nb * int(block)
			gb := nb * gk.groupBytes
			grp := make([]byte, 2*gb)
			gk.repack(grp, w, rb, nb)
			gk.repack(grp[gb:], w[packRows*rb:], rb, nb)
			for _, extreme := range []bool{false, true} {
				// four activation rows, apart by strides larger than a row
				a := randAct(rng, act, nb, extreme)
				as := len(a) + 40
				a4 := make([]byte, 3*as+len(a))
				for i := 0; i < 3; i++ {
					copy(a4[i*as:], randAct(rng, act, nb, extreme))
				}
				copy(a4[3*as:], a)
				// aux4 returns the four rows' aux values of pk's prep, and
				// their stride
				aux4 := func(pk *packKernel) ([]byte, int) {
					xs := nb*pk.auxBytes + 24
					x := make([]byte, 3*xs+nb*pk.auxBytes)
					for i := 0; i < 4; i++ {
						pk.prep(x[i*xs:i*xs+nb*pk.auxBytes], a4[i*as:], nb)
					}
					return x, xs
				}
				// want[i][16] are the Go kernel's results of row i for
				// the two groups
				var want [4][2 * packRows]float32
				gx, gxs := aux4(gk)
				for i := range want {
					gk.gemv(grp, a4[i*as:], gx[i*gxs:], nb, (*[packRows]float32)(want[i][:packRows]))
					gk.gemv(grp[gb:], a4[i*as:], gx[i*gxs:], nb, (*[packRows]float32)(want[i][packRows:]))
				}
				for name, pk := range gemm4s {
					x, xs := aux4(pk)
					var out [4 * packRows]float32
					pk.gemm4(grp, a4, x, as, xs, nb, &out)
					for i := 0; i < 4; i++ {
						if !slices.Equal(out[8*i:8*i+8], want[i][:packRows]) {
							t.Fatalf("%s %s four-row nb %d row %d: %v, gemv gives %v", c.t, name, nb, i, out[8*i:8*i+8], want[i][:packRows])
						}
					}
				}
				for name, pk := range pairs {
					x, xs := aux4(pk)
					grp := make([]byte, 2*gb)
					pk.repack2(grp, w, rb, nb)
					for i := 0; i < 4; i++ {
						var out [2 * packRows]float32
						pk.gemv2(grp, a4[i*as:], x[i*xs:], nb, &out)
						if out != want[i] {
							t.Fatalf("%s %s two-group nb %d row %d: %v, gemv gives %v", c.t, name, nb, i, out, want[i])
						}
					}
					if pk.gemm2x4 == nil {
						continue
					}
					var out [8 * packRows]float32
					pk.gemm2x4(grp, a4, x, as, xs, nb, &out)
					for i := 0; i < 4; i++ {
						if !slices.Equal(out[16*i:16*i+16], want[i][:]) {
							t.Fatalf("%s %s two-group four-row nb %d row %d: %v, gemv gives %v", c.t, name, nb, i, out[16*i:16*i+16], want[i])
						}
					}
				}
				for name, pk := range gemvs {
					x, xs := aux4(pk)
					for h := 0; h < 2; h++ {
						var out [packRows]float32
						pk.gemv(grp[h*gb:], a, x[3*xs:], nb, &out)
						for r := range out {
							row := w[(h*packRows+r)*rb : (h*packRows+r+1)*rb]
							if want := c.row(row, a, nb); math.Float32bits(out[r]) != math.Float32bits(want) {
								t.Fatalf("%s %s nb %d extreme %v row %d: %g, row layout gives %g", c.t, name, nb, extreme, r, out[r], want)
							}
							if want := portableKernels[c.t].dot(nb*c.t.BlockSize(), row, a); math.Float32bits(out[r]) != math.Float32bits(want) {
								t.Errorf("%s %s nb %d extreme %v row %d: %g, portable row kernel %g", c.t, name, nb, extreme, r, out[r], want)
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
}

// BenchmarkPacked measures one 256x4096 matrix (in cache) times one
// activation row ("gemv") and four ("x4"), per type with group kernels and
// kernel set: the row kernels ("rows": dot, or dot4 for four rows) against
// the group kernels ("groups": gemv, or gemm4 where the set has it) and
// the two-group ones where the set has them ("pairs": gemv2, gemm2x4). The
// ratio rows/groups is the group layout's gain in the kernels alone. A set
// with wider group kernels than its 256-bit ones (amd64's vnni with
// AVX-512) runs again without them ("vnni256"), the baseline of "pairs".
func BenchmarkPacked(b *testing.B) {
	defer SelectKernels("")
	const n, rows = 4096, 256
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(9, uint64(typ)))
			f := make([]float32, n)
			act := kernels[typ].act
			rb, ab := ActRowBytes(typ, n), ActRowBytes(act, n)
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
				if name, restore := narrowerPack(set); restore != nil {
					benchPacked(b, name, kernels[typ], typ, w, a, n, rows)
					restore()
				}
			}
		})
	}
}

// benchPacked runs BenchmarkPacked's four cases of one type and set.
func benchPacked(b *testing.B, set string, k *kernel, typ gguf.Type, w, a []byte, n, rows int) {
	if k.pack == nil {
		return
	}
	rb, ab := ActRowBytes(typ, n), ActRowBytes(k.act, n)
	m := &Matrix{Type: typ, Cols: n, Rows: rows, RowBytes: rb, data: slices.Clone(w), k: k}
	m.Pack(false)
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
		loopCPU(b, func() {
			for r := 0; r < rows; r++ {
				k.dot(n, w[r*rb:], a)
			}
		})
	})
	if m.pk.pairs {
		// the groups are in pairs: only the pair kernels read them
		benchPairs(b, set, m, a, aux, ab, nb, len(w))
		return
	}
	b.Run(set+"/gemv/groups", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		loopCPU(b, func() {
			for g := 0; g < rows/packRows; g++ {
				pk.gemv(m.pk.data[g*gb:], a, aux, nb, &o)
			}
		})
	})
	if k.dot4 == nil {
		return
	}
	b.Run(set+"/x4/rows", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		loopCPU(b, func() {
			for r := 0; r < rows; r++ {
				k.dot4(n, w[r*rb:], a, ab, &q)
			}
		})
	})
	b.Run(set+"/x4/groups", func(b *testing.B) {
		b.SetBytes(int64(len(w)))
		loopCPU(b, func() {
			for g := 0; g < rows/packRows; g++ {
				if pk.gemm4 != nil {
					pk.gemm4(m.pk.data[g*gb:], a, aux, ab, nb*pk.auxBytes, nb, &o4)
					continue
				}
				for j := 0; j < 4; j++ {
					pk.gemv(m.pk.data[g*gb:], a[j*ab:], aux[j*nb*pk.auxBytes:], nb, &o)
				}
			}
		})
	})
}

// TestPackedMatMul runs MatMul on packed Q4_0, Q8_0, Q4_K and Q6_K
// matrices of an odd number of groups and a tail of rows, with 1 to 6
// activation rows (the four-row and two-group kernels and their
// remainders), on one and two threads and in ranges that cut the pairs of
// the pair layout, with every kernel set: each result must be the
// portable row kernel's (the group kernels' sums) for a
// grouped row and the set's row kernel's for a tail row, bit for bit.
func TestPackedMatMul(t *testing.T) {
	t.Cleanup(func() { _ = SelectKernels("") })
	const cols, rows = 1024, 8*37 + 3
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		rng := rand.New(rand.NewPCG(5, uint64(typ)))
		rb := ActRowBytes(typ, cols)
		w := randRows(t, rng, typ, rows, cols)
		in := make([]float32, 6*cols)
		for i := range in {
			in[i] = float32(rng.NormFloat64())
		}
		for _, set := range KernelSets() {
			if err := SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			m, err := NewMatrix("w", typ, cols, rows, rb, slices.Clone(w))
			if err != nil {
				t.Fatal(err)
			}
			if !m.Packable() {
				continue
			}
			m.Pack(false)
			k := kernels[typ]
			ab := ActRowBytes(k.act, cols)
			act := make([]byte, ab)
			for _, threads := range []int{1, 2} {
				pool := NewPool(threads)
				s := NewProducts(pool, 6, cols, 0)
				for nb := 1; nb <= 6; nb++ {
					out := make([]float32, nb*rows)
					s.MatMul(m, in, out, nb)
					// the same product cut into ranges of whole groups that
					// split the pairs of the pair layout
					cut := make([]float32, nb*rows)
					s.mt.out = cut
					for _, r := range [][2]int{{0, 8}, {8, 24}, {24, 40}, {40, rows}} {
						s.mt.Run(r[0], r[1], 0)
					}
					if !slices.Equal(cut, out) {
						t.Fatalf("%s %s threads %d nb %d: ranges cut inside pairs give other results", typ, set, threads, nb)
					}
					for j := 0; j < nb; j++ {
						if err := quantizeAct(k.act, act, in[j*cols:(j+1)*cols]); err != nil {
							t.Fatal(err)
						}
						for r := 0; r < rows; r++ {
							dot := k.dot
							if r < rows/packRows*packRows {
								dot = portableKernels[typ].dot
							}
							if want := dot(cols, w[r*rb:(r+1)*rb], act); math.Float32bits(out[j*rows+r]) != math.Float32bits(want) {
								t.Fatalf("%s %s threads %d nb %d: row %d of activation %d is %g, want %g", typ, set, threads, nb, r, j, out[j*rows+r], want)
							}
						}
					}
				}
				pool.Close()
			}
		}
	}
}

// benchPairs runs BenchmarkPacked's pair kernels of a matrix packed in
// pairs ("pairs": gemv2 for one activation row, gemm2x4 for four).
func benchPairs(b *testing.B, set string, m *Matrix, a, aux []byte, ab, nb, size int) {
	pk, gb, rows := m.pk.k, m.pk.groupBytes, m.Rows
	var o2 [2 * packRows]float32
	b.Run(set+"/gemv/pairs", func(b *testing.B) {
		b.SetBytes(int64(size))
		loopCPU(b, func() {
			for g := 0; g+2 <= rows/packRows; g += 2 {
				pk.gemv2(m.pk.data[g*gb:], a, aux, nb, &o2)
			}
		})
	})
	var o8 [8 * packRows]float32
	b.Run(set+"/x4/pairs", func(b *testing.B) {
		b.SetBytes(int64(size))
		loopCPU(b, func() {
			for g := 0; g+2 <= rows/packRows; g += 2 {
				pk.gemm2x4(m.pk.data[g*gb:], a, aux, ab, nb*pk.auxBytes, nb, &o8)
			}
		})
	})
}

// TestPackSlot: a matrix packed in place in a slot with room for its
// layout (PackSlot, last group first) holds the bytes Pack writes, gives
// MatMul's results of Pack's matrix bit for bit, and, packed again after
// new rows were read into the same bytes, those of the new rows; for 3
// groups (a pair and an odd last one), 4 and 1, with every kernel set. A
// type with no group kernel or rows that are not whole groups have no
// slot layout.
func TestPackSlot(t *testing.T) {
	t.Cleanup(func() { _ = SelectKernels("") })
	const cols = 512
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		rng := rand.New(rand.NewPCG(9, uint64(typ)))
		rb := ActRowBytes(typ, cols)
		for _, rows := range []int{24, 32, 8} {
			for _, set := range KernelSets() {
				if err := SelectKernels(set); err != nil {
					t.Fatal(err)
				}
				m, err := NewMatrix("w", typ, cols, rows, rb, nil)
				if err != nil {
					t.Fatal(err)
				}
				n := m.SlotPackBytes()
				if !Packs(typ) {
					if n != 0 {
						t.Errorf("%s %s packs nothing, yet its slot layout is %d bytes", typ, set, n)
					}
					continue
				}
				if odd, _ := NewMatrix("w", typ, cols, rows+3, rb, nil); odd.SlotPackBytes() != 0 {
					t.Errorf("%s %s: %d rows have a slot layout", typ, set, rows+3)
				}
				slot := make([]byte, n)
				var scratch []byte
				for range 2 { // a slot read twice
					w := randRows(t, rng, typ, rows, cols)
					want, _ := NewMatrix("w", typ, cols, rows, rb, slices.Clone(w))
					want.Pack(false)
					copy(slot, w)
					m.SetData(slot)
					scratch = m.PackSlot(scratch)
					if !bytes.Equal(m.PackedData(), want.PackedData()) {
						t.Fatalf("%s %s %d rows: the slot's layout differs from Pack's", typ, set, rows)
					}
					in := make([]float32, 5*cols)
					for i := range in {
						in[i] = float32(rng.NormFloat64())
					}
					s := NewProducts(NewPool(1), 5, cols, 0)
					got, exp := make([]float32, 5*rows), make([]float32, 5*rows)
					s.MatMul(m, in, got, 5)
					s.MatMul(want, in, exp, 5)
					if !slices.Equal(got, exp) {
						t.Fatalf("%s %s %d rows: the slot's products differ from Pack's", typ, set, rows)
					}
				}
			}
		}
	}
}

// randRows returns rows rows of cols normal random values quantized to
// typ, the way activations are (quantizeAct).
func randRows(t testing.TB, rng *rand.Rand, typ gguf.Type, rows, cols int) []byte {
	t.Helper()
	rb := ActRowBytes(typ, cols)
	w := make([]byte, rows*rb)
	f := make([]float32, cols)
	for r := 0; r < rows; r++ {
		for i := range f {
			f[i] = float32(rng.NormFloat64())
		}
		if err := quantizeAct(typ, w[r*rb:(r+1)*rb], f); err != nil {
			t.Fatal(err)
		}
	}
	return w
}
