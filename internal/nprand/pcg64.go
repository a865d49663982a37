package nprand

import "math/bits"

// PCG64's 128-bit LCG multiplier (PCG_DEFAULT_MULTIPLIER_128).
const (
	mulHi = 2549297995355413924
	mulLo = 4865540595714422341
)

// Generator is numpy's Generator(PCG64(seed)): a 128-bit linear
// congruential state with the XSL-RR output function.
type Generator struct {
	hi, lo       uint64 // state
	incHi, incLo uint64 // odd increment
}

// New returns the generator numpy.random.default_rng(seed) makes.
func New(seed uint64) *Generator {
	s := seedState(seed)
	g := &Generator{}
	// pcg_setseq_128_srandom_r: inc = initseq<<1 | 1, state = 0, step,
	// state += initstate, step. seed words are (high, low) pairs.
	g.incHi = s[2]<<1 | s[3]>>63
	g.incLo = s[3]<<1 | 1
	g.step()
	var c uint64
	g.lo, c = bits.Add64(g.lo, s[1], 0)
	g.hi, _ = bits.Add64(g.hi, s[0], c)
	g.step()
	return g
}

// step advances the state: state = state*mul + inc (mod 2^128).
func (g *Generator) step() {
	hi, lo := bits.Mul64(g.lo, mulLo)
	hi += g.hi*mulLo + g.lo*mulHi
	var c uint64
	g.lo, c = bits.Add64(lo, g.incLo, 0)
	g.hi, _ = bits.Add64(hi, g.incHi, c)
}

// Uint64 returns the next 64 random bits (numpy's next_uint64: step, then
// output the new state).
func (g *Generator) Uint64() uint64 {
	g.step()
	return bits.RotateLeft64(g.hi^g.lo, -int(g.hi>>58))
}

// Float64 returns a uniform value in [0, 1) with 53 random bits, as
// numpy's next_double does.
func (g *Generator) Float64() float64 {
	return float64(g.Uint64()>>11) * (1.0 / 9007199254740992.0)
}
