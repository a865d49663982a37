package nprand

// numpy's SeedSequence constants (bit_generator.pyx): a 4-word uint32 pool
// mixed with multiply-xorshift hashes.
const (
	poolSize = 4
	xshift   = 16
	initA    = 0x43b0d7e5
	multA    = 0x931e8875
	initB    = 0x8b51f9dd
	multB    = 0x58f38ded
	mixMultL = 0xca01f9dd
	mixMultR = 0x4973f715
)

// seedState returns SeedSequence(seed).generate_state(4, uint64): the
// PCG64 initial state (words 0, 1 = high, low) and increment (2, 3).
func seedState(seed uint64) [4]uint64 {
	// An int seed becomes its little-endian uint32 words (at least one).
	entropy := []uint32{uint32(seed)}
	if seed>>32 != 0 {
		entropy = append(entropy, uint32(seed>>32))
	}
	hashConst := uint32(initA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= multA
		v *= hashConst
		return v ^ v>>xshift
	}
	mix := func(x, y uint32) uint32 {
		r := mixMultL*x - mixMultR*y
		return r ^ r>>xshift
	}
	var pool [poolSize]uint32
	for i := range pool {
		var v uint32
		if i < len(entropy) {
			v = entropy[i]
		}
		pool[i] = hashmix(v)
	}
	for src := range pool {
		for dst := range pool {
			if src != dst {
				pool[dst] = mix(pool[dst], hashmix(pool[src]))
			}
		}
	}
	for _, e := range entropy[min(len(entropy), poolSize):] {
		for dst := range pool {
			pool[dst] = mix(pool[dst], hashmix(e))
		}
	}
	// generate_state: 8 uint32 words cycling over the pool, viewed as 4
	// little-endian uint64.
	var words [8]uint32
	h := uint32(initB)
	for i := range words {
		v := pool[i%poolSize] ^ h
		h *= multB
		v *= h
		words[i] = v ^ v>>xshift
	}
	var out [4]uint64
	for i := range out {
		out[i] = uint64(words[2*i]) | uint64(words[2*i+1])<<32
	}
	return out
}
