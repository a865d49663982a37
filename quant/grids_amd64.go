//go:build amd64 && !purego

package quant

//go:noescape
func nearestAVX2(nb *uint16, count int, kgrid *uint16, gmask int, dim int, bits int, sv *[8]float32, xval, weight *float32) int

// nearestLanes runs lattice.nearest with the AVX2 kernel: pos is the
// position in nb of the nearest point, -1 if none; ok is false without
// AVX2.
func nearestLanes(lt *lattice, nb []uint16, sv *[8]float32, xval, weight []float32) (pos int, ok bool) {
	if !useAVX2 || len(nb) == 0 {
		return 0, false
	}
	// Grid sizes are powers of two; the mask keeps the gathers of the
	// lanes past the list inside kgrid.
	return nearestAVX2(&nb[0], len(nb), &lt.kgrid[0], len(lt.kgrid)-2, lt.dim, lt.bits, sv, &xval[:lt.dim][0], &weight[:lt.dim][0]), true
}

//go:noescape
func iq1mSplitSumsAVX2(terms *[16][3][8]float32, sums *[iq1mNumSplits][8]float32)

// iq1mSplitSums is iq1mSplitSumsGo with the eight sums of a split in one
// AVX register (each lane adds its terms in the same order).
func iq1mSplitSums(terms *[16][3][8]float32, sums *[iq1mNumSplits][8]float32) {
	if useAVX2 {
		iq1mSplitSumsAVX2(terms, sums)
		return
	}
	iq1mSplitSumsGo(terms, sums)
}

//go:noescape
func iq1mNextBetterAVX2(sums *[iq1mNumSplits][8]float32, from int, bestScore float32) int

// iq1mNextBetter is iq1mNextBetterGo testing the four combinations of a
// split at once (the same products and comparisons per lane).
func iq1mNextBetter(sums *[iq1mNumSplits][8]float32, from int, bestScore float32) int {
	if useAVX2 {
		return iq1mNextBetterAVX2(sums, from, bestScore)
	}
	return iq1mNextBetterGo(sums, from, bestScore)
}
