// Package nprand reproduces numpy's default random generator bit for bit:
// numpy.random.default_rng(seed) (the PCG64 bit generator seeded through
// SeedSequence) and its standard_normal (numpy's 256-level ziggurat for
// doubles).
//
// It exists so tests can regenerate reference models that were written with
// numpy (refdata/synthetic/README.txt, section 2) instead of storing them:
// the same seed gives the same float64 stream as numpy 1.17 and later.
package nprand
