//go:build !amd64 || purego

package quant

// nearestLanes has no kernel to run here.
func nearestLanes(lt *lattice, nb []uint16, sv *[8]float32, xval, weight []float32) (int, bool) {
	return 0, false
}

func iq1mSplitSums(terms *[16][3][8]float32, sums *[iq1mNumSplits][8]float32) {
	iq1mSplitSumsGo(terms, sums)
}

func iq1mNextBetter(sums *[iq1mNumSplits][8]float32, from int, bestScore float32) int {
	return iq1mNextBetterGo(sums, from, bestScore)
}
