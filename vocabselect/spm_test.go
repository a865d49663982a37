package vocabselect

import (
	"math"
	"slices"
	"testing"
)

// TestSPMRanks checks the ranks merges are ordered by: highest score first,
// equal scores (-0 and +0 too) sharing a rank, -Inf after every number and
// each NaN after that, on its own.
func TestSPMRanks(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	scores := []float32{-1, 0, 2.5, nan, -inf, negZero, -1, inf, nan, -1e-30}
	want := []int32{4, 2, 1, 6, 5, 2, 4, 0, 7, 3}
	if got := spmRanks(scores); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
