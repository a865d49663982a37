package quant

import (
	"math"
	"math/bits"
	"sync"
)

// lattice is one IQ codebook prepared for quantization as ggml's
// iq2xs_init_impl/iq3xs_init_impl prepare it: the grid points with
// coordinates 2*level+1, a map from a packed level vector to its grid index,
// and for every vector off the grid the list of nearest grid points.
type lattice struct {
	dim, bits int
	pos       []int8 // len(levels)*dim coordinates, 2*level+1
	// eoff holds, per coordinate of pos, 8*i + level: the index of its
	// term in the per-search error tables of the neighbour searches.
	eoff []uint8
	kmap []int32 // packed levels -> grid index, or -(offset+1) into neighbours
	// neighbours holds, per off-grid vector, a count followed by that many
	// grid indices sorted by (squared distance, index), then 8 zeros so that
	// a kernel may read a whole group of 8 past the last list.
	neighbours []uint16
	// kgrid is the packed level vector of every grid point (ggml's kgrid
	// table), padded so that a 4-byte gather at any index stays inside.
	kgrid []uint16
}

// newLattice builds the search structures for a kgrid table. nwant is how
// many distinct distances count as "near" (ggml: 2 for IQ2_XXS/IQ2_XS and
// the 256-point IQ3 grid, 1 for IQ2_S, 3 for IQ1 and the 512-point IQ3
// grid). Only vectors whose levels are all <= maxLevel get neighbour lists:
// the quantizers clamp levels to that range before looking up, so ggml's
// lists for the other vectors are never read.
func newLattice(kgrid []uint16, dim, nbits, nwant, maxLevel int) *lattice {
	n := len(kgrid)
	lt := &lattice{dim: dim, bits: nbits, pos: make([]int8, n*dim), eoff: make([]uint8, n*dim),
		kgrid: append(append([]uint16(nil), kgrid...), 0)}
	mask := 1<<nbits - 1
	mapSize := 0
	for k, g := range kgrid {
		for i := 0; i < dim; i++ {
			l := int(g) >> (nbits * i) & mask
			lt.pos[k*dim+i] = int8(2*l + 1)
			lt.eoff[k*dim+i] = uint8(8*i + l)
		}
		mapSize = max(mapSize, int(g)+1)
	}
	if nbits == 3 {
		mapSize = 1 << (3 * dim) // ggml's kmap_size 4096
	} else {
		mapSize = 43692 // ggml's kmap_size: largest packed vector of 2s, plus 2
	}
	lt.kmap = make([]int32, mapSize)
	for i := range lt.kmap {
		lt.kmap[i] = -1
	}
	for k, g := range kgrid {
		lt.kmap[g] = int32(k)
	}
	dist := make([]int32, n)
	var pos [8]int32
	for u := 0; u < mapSize; u++ {
		if lt.kmap[u] >= 0 {
			continue
		}
		inRange := true
		for i := 0; i < dim; i++ {
			l := u >> (nbits * i) & mask
			if l > maxLevel {
				inRange = false
			}
			pos[i] = int32(2*l + 1)
		}
		if !inRange {
			continue
		}
		for j := 0; j < n; j++ {
			var d2 int32
			for i := 0; i < dim; i++ {
				d := int32(lt.pos[j*dim+i]) - pos[i]
				d2 += d * d
			}
			dist[j] = d2
		}
		// The nwant smallest distinct distances, ascending.
		var thr [3]int32
		nthr := 0
		for _, d := range dist {
			k := 0
			for k < nthr && thr[k] < d {
				k++
			}
			if k < nthr && thr[k] == d {
				continue
			}
			if k < nwant {
				copy(thr[k+1:nwant], thr[k:nwant-1])
				thr[k] = d
				nthr = min(nthr+1, nwant)
			}
		}
		lt.kmap[u] = -int32(len(lt.neighbours) + 1)
		start := len(lt.neighbours)
		lt.neighbours = append(lt.neighbours, 0)
		for _, t := range thr[:nthr] {
			for j, d := range dist {
				if d == t {
					lt.neighbours = append(lt.neighbours, uint16(j))
				}
			}
		}
		lt.neighbours[start] = uint16(len(lt.neighbours) - start - 1)
	}
	lt.neighbours = append(lt.neighbours, make([]uint16, 8)...)
	return lt
}

// neighboursOf returns the neighbour list of an off-grid packed vector u
// (kmap[u] < 0), or nil if none was built.
func (lt *lattice) neighboursOf(u int) []uint16 {
	off := int(-lt.kmap[u] - 1)
	if off < 0 || off >= len(lt.neighbours) {
		return nil
	}
	cnt := int(lt.neighbours[off])
	return lt.neighbours[off+1 : off+1+cnt]
}

// point returns the coordinates of grid point k.
func (lt *lattice) point(k int) []int8 { return lt.pos[k*lt.dim : (k+1)*lt.dim] }

// nearest returns the entry of nb (grid indices) at the smallest weighted
// distance from xval, the first one on ties, or -1 when no distance is
// below MaxFloat32 (NaN input). sv[l] is the value of level l at the
// search's scale; the distance is ggml's sum over coordinates, in order, of
// weight*diff*diff with diff = sv[level] - xval. With AVX2 a kernel does
// the search eight points at a time. Otherwise long lists (at least twice
// the level count) first tabulate that term per coordinate and level, so
// that each neighbour costs one addition per coordinate; shorter ones run
// ggml's loop directly.
func (lt *lattice) nearest(nb []uint16, sv *[8]float32, xval, weight []float32) int {
	dim, nlev := lt.dim, 1<<lt.bits
	xval, weight = xval[:dim], weight[:dim]
	if pos, ok := nearestLanes(lt, nb, sv, xval, weight); ok {
		if pos < 0 {
			return -1
		}
		return int(nb[pos])
	}
	if len(nb) < 2*nlev {
		best := float32(math.MaxFloat32)
		gridIndex := -1
		for _, j := range nb {
			var d2 float32
			for i, p := range lt.point(int(j)) {
				diff := sv[(p-1)>>1&7] - xval[i]
				d2 += float32(weight[i] * diff * diff)
			}
			if d2 < best {
				best, gridIndex = d2, int(j)
			}
		}
		return gridIndex
	}
	var e [64]float32
	for i := range dim {
		for l := range nlev {
			diff := sv[l] - xval[i]
			e[8*i+l] = float32(weight[i] * diff * diff)
		}
	}
	best := float32(math.MaxFloat32)
	gridIndex := -1
	if dim == 8 {
		// The eight offsets of a point in one load, unrolled.
		for _, j := range nb {
			o := le.Uint64(lt.eoff[int(j)*8:])
			var d2 float32
			d2 += e[o&63]
			d2 += e[o>>8&63]
			d2 += e[o>>16&63]
			d2 += e[o>>24&63]
			d2 += e[o>>32&63]
			d2 += e[o>>40&63]
			d2 += e[o>>48&63]
			d2 += e[o>>56&63]
			if d2 < best {
				best, gridIndex = d2, int(j)
			}
		}
		return gridIndex
	}
	for _, j := range nb {
		var d2 float32
		for _, o := range lt.eoff[int(j)*dim : int(j)*dim+dim] {
			d2 += e[o&63]
		}
		if d2 < best {
			best, gridIndex = d2, int(j)
		}
	}
	return gridIndex
}

// Lazily built lattices: building the IQ1 one costs a few hundred
// milliseconds, so only callers that quantize to these types pay for it.
var (
	latIQ2XXS = lazyLattice(kgrid2bit256[:], 8, 2, 2, 2)
	latIQ2XS  = lazyLattice(kgrid2bit512[:], 8, 2, 2, 2)
	latIQ2S   = lazyLattice(kgrid2bit1024[:], 8, 2, 1, 2)
	latIQ1    = lazyLattice(kgrid1bit2048[:], 8, 2, 3, 2)
	latIQ3XXS = lazyLattice(kgrid3bit256[:], 4, 3, 2, 7)
	latIQ3S   = lazyLattice(kgrid3bit512[:], 4, 3, 3, 7)
)

func lazyLattice(kgrid []uint16, dim, nbits, nwant, maxLevel int) func() *lattice {
	return sync.OnceValue(func() *lattice { return newLattice(kgrid, dim, nbits, nwant, maxLevel) })
}

// Dequantization grids as ggml-common.h spells them: each level mapped to
// the byte ggml stores (iq2xxs_grid etc.), one uint64 (8 bytes) or uint32 (4
// bytes) per grid point, little-endian like the C tables.
var (
	iq2Levels    = [4]uint8{0x08, 0x19, 0x2b, 0} // level 3 does not occur in the IQ2 grids
	iq3xxsLevels = [8]uint8{0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3e}
	iq3sLevels   = [8]uint8{0x01, 0x03, 0x05, 0x07, 0x09, 0x0b, 0x0d, 0x0f}
	iq1Levels    = [4]uint8{0xff, 0x00, 0x01, 0} // int8 -1, 0, +1

	iq2xxsGrid = grid8(kgrid2bit256[:], iq2Levels[:])
	iq2xsGrid  = grid8(kgrid2bit512[:], iq2Levels[:])
	iq2sGrid   = grid8(kgrid2bit1024[:], iq2Levels[:])
	iq1sGrid   = grid8(kgrid1bit2048[:], iq1Levels[:])
	iq3xxsGrid = grid4(kgrid3bit256[:], iq3xxsLevels[:])
	iq3sGrid   = grid4(kgrid3bit512[:], iq3sLevels[:])
)

func grid8(kgrid []uint16, levels []uint8) [][8]uint8 {
	g := make([][8]uint8, len(kgrid))
	for k, v := range kgrid {
		for i := 0; i < 8; i++ {
			g[k][i] = levels[v>>(2*i)&3]
		}
	}
	return g
}

func grid4(kgrid []uint16, levels []uint8) [][4]uint8 {
	g := make([][4]uint8, len(kgrid))
	for k, v := range kgrid {
		for i := 0; i < 4; i++ {
			g[k][i] = levels[v>>(3*i)&7]
		}
	}
	return g
}

// ksignsIQ2XS is ggml's ksigns_iq2xs: 7 sign bits plus an eighth that makes
// the number of negative values even.
var ksignsIQ2XS = func() (t [128]uint8) {
	for i := range t {
		t[i] = uint8(i) | uint8(bits.OnesCount8(uint8(i))&1)<<7
	}
	return t
}()
