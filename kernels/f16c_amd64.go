//go:build amd64 && !purego

package kernels

//go:noescape
func dotF16Lanes(w, a *byte, n int, out *[4]float32)

// dotF16Asm is dotF16 with F16C conversions: the same four accumulators,
// products and order, so the same bits, several times faster than its
// table lookups. It carries the f16 KV cache's scores and value sums
// (engine/kvcache.go) as well as F16 weights.
func dotF16Asm(n int, w, a []byte) float32 {
	w, a = w[:2*n], a[:2*n]
	var s [4]float32
	m := n &^ 3
	if m > 0 {
		dotF16Lanes(&w[0], &a[0], m, &s)
	}
	for i := 2 * m; i < 2*n; i += 2 {
		s[0] += float32(f16tab[le16(w[i:])] * f16tab[le16(a[i:])])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}
