package nprand

import "math"

// The ziggurat's tail start r and 1/r (numpy's ziggurat_nor_r and
// ziggurat_nor_inv_r), and the area v of each of its 256 levels.
const (
	zigR    = 3.6541528853610087963519472518
	zigInvR = 0.27366123732975827203338247596
	zigV    = 0.0049286732339746519
)

// The ziggurat tables (numpy's ki_double, wi_double, fi_double), computed
// the way numpy's generator script computed them: float64 arithmetic on the
// level edges x, walked down from r, then reversed.
var ki, wi, fi = zigTables()

// skewedEdge is the one level edge where the C library that made numpy's
// published tables (ziggurat_constants.h, unchanged since numpy 1.17) did
// not round exp correctly: exp(-x[38]^2/2) came out one ulp above the
// exact value's rounding. fi[38] holds that value and every deeper edge
// (levels 1-37) inherits it through the walk, so wi of those levels
// differs from a correctly rounded walk by ~1e-13 relative, enough to move
// a float32 rounding now and then. (numpy 1.24.2 re-running the script on
// this machine gets the correctly rounded walk, not the tables numpy
// ships.) TestTables checks ours against the shipped values.
const skewedEdge = 38

func zigTables() (k [256]uint64, w, f [256]float64) {
	var x [256]float64 // x[0] = 0 (top level) ... x[255] = r
	x[255] = zigR
	f[255] = crExp(-0.5 * zigR * zigR)
	for i := 254; i >= 0; i-- {
		if i > 0 {
			x[i] = math.Sqrt(-2 * crLog(f[i+1]+zigV/x[i+1]))
		}
		f[i] = crExp(-0.5 * x[i] * x[i])
		if i == skewedEdge {
			f[i] = math.Nextafter(f[i], 2)
		}
	}
	const scale = 1 << 52
	k[0] = uint64(math.RoundToEven(zigR * f[255] / zigV * scale))
	for i := 1; i < 256; i++ {
		k[i] = uint64(math.RoundToEven(x[i-1] / x[i] * scale))
	}
	w[0] = zigV / f[255] / scale
	for i := 1; i < 256; i++ {
		w[i] = x[i] / scale
	}
	return
}

// StandardNormal returns a standard normal value exactly as numpy's
// random_standard_normal does: one 64-bit draw gives the level (8 bits),
// the sign (1 bit) and a 52-bit magnitude, accepted at once inside the
// level's rectangle; otherwise the tail or wedge is sampled.
func (g *Generator) StandardNormal() float64 {
	for {
		r := g.Uint64()
		idx := r & 0xff
		r >>= 8
		sign := r & 1
		rabs := (r >> 1) & 0x000fffffffffffff
		x := float64(rabs) * wi[idx]
		if sign == 1 {
			x = -x
		}
		if rabs < ki[idx] {
			return x
		}
		if idx == 0 {
			for {
				// log1p(-u): numpy switched to 1 - U to avoid log(0).
				xx := float64(-zigInvR * math.Log1p(-g.Float64()))
				yy := -math.Log1p(-g.Float64())
				if yy+yy > xx*xx {
					if (rabs>>8)&1 == 1 {
						return -(zigR + xx)
					}
					return zigR + xx
				}
			}
		}
		if float64((fi[idx-1]-fi[idx])*g.Float64())+fi[idx] < math.Exp(-0.5*x*x) {
			return x
		}
	}
}

// FillStandardNormal fills dst with StandardNormal values in order, as
// numpy's standard_normal(size) fills its array in C order.
func (g *Generator) FillStandardNormal(dst []float64) {
	for i := range dst {
		dst[i] = g.StandardNormal()
	}
}
