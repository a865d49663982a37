package pager

import "unsafe"

// unsafeBytes views the first n bytes of w.
func unsafeBytes(w []uint64, n int) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}
