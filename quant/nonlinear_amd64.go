//go:build amd64 && !purego

package quant

//go:noescape
func mxfp4BlocksAVX2(y *byte, x *float32, nb int) int

// mxfp4Blocks quantizes leading whole MXFP4 blocks with the AVX2 kernel and
// returns how many; it stops before a block whose exponent needs the log2f
// path.
func mxfp4Blocks(y []byte, x []float32) int { return avx2Blocks(y, x, 32, 17, mxfp4BlocksAVX2) }

//go:noescape
func iq4LanesAVX2(x, w *float32, ids *[8]float32, lo, hi *[256]float32, out *[2][8]float32)

// iq4ScaleLanes is iq4Scale's search for ntry 1..7 with one fit per AVX2
// lane: lane 0 the first fit at inverse scale id, lanes 1..2*ntry+1 the
// trials, then ggml's comparisons in order. ok is false without AVX2.
func iq4ScaleLanes(xb, weight []float32, id, max float32, ntry int) (d float32, ok bool) {
	if !useAVX2 || ntry < 1 || ntry > 7 {
		return 0, false
	}
	var ids [16]float32
	ids[0] = id
	for itry := -ntry; itry <= ntry; itry++ {
		ids[1+itry+ntry] = float32(itry+int(kvaluesIQ4NL[0])) / max
	}
	var sums [2][2][8]float32
	x, w := &xb[:32][0], &weight[:32][0]
	iq4LanesAVX2(x, w, (*[8]float32)(ids[:8]), &iq4nlBelow, &iq4nlAbove, &sums[0])
	iq4LanesAVX2(x, w, (*[8]float32)(ids[8:]), &iq4nlBelow, &iq4nlAbove, &sums[1])
	sumqx, sumq2 := sums[0][0][0], sums[0][1][0]
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for k := 1; k <= 2*ntry+1; k++ {
		sumqx, sumq2 := sums[k/8][0][k%8], sums[k/8][1][k%8]
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d, true
}

// iq4nlBelow and iq4nlAbove hold, per clamped floor index f+127 of
// bestIndexIQ4NL, the codebook values on either side of the boundary it
// searches (entries mu-1 and mu), for the AVX2 kernel's gathers.
var iq4nlBelow, iq4nlAbove = func() (lo, hi [256]float32) {
	for j := range 240 {
		mu := iq4nlAtMost[j]
		lo[j], hi[j] = float32(kvaluesIQ4NL[mu-1]), float32(kvaluesIQ4NL[mu])
	}
	return lo, hi
}()
