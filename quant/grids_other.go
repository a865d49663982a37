//go:build !amd64 || purego

package quant

// nearestLanes has no kernel to run here.
func nearestLanes(lt *lattice, nb []uint16, e *[64]float32) (int, bool) { return 0, false }
