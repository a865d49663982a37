package nprand

import (
	"math"
	"math/big"
)

// The table walk needs exp and log rounded the way the C library that
// built numpy's tables rounded them. Go's math.Exp and math.Log are
// within one ulp but not correctly rounded, and 254 dependent steps turn
// those ulps into different tables (measured: 4e-14 relative at the top
// level). glibc's exp and log are correctly rounded for practically every
// argument, so these compute the exact value in 256-bit arithmetic and
// round it once.

const prec = 256

// crExp returns exp(x) correctly rounded.
func crExp(x float64) float64 {
	f, _ := bigExp(new(big.Float).SetPrec(prec).SetFloat64(x)).Float64()
	return f
}

// crLog returns log(y) correctly rounded, y > 0.
func crLog(y float64) float64 {
	by := new(big.Float).SetPrec(prec).SetFloat64(y)
	// Halley's iteration z += 2 (y - e^z) / (y + e^z) from the float64
	// estimate; each step triples the correct bits.
	z := new(big.Float).SetPrec(prec).SetFloat64(math.Log(y))
	for range 4 {
		e := bigExp(z)
		num := new(big.Float).SetPrec(prec).Sub(by, e)
		den := new(big.Float).SetPrec(prec).Add(by, e)
		num.Quo(num, den)
		z.Add(z, num.Mul(num, big.NewFloat(2)))
	}
	f, _ := z.Float64()
	return f
}

// bigExp computes e^x as (e^(x/2^20))^(2^20), the small power by its
// Taylor series.
func bigExp(x *big.Float) *big.Float {
	const halvings = 20
	r := new(big.Float).SetPrec(prec).SetMantExp(x, -halvings)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 60; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum
}
