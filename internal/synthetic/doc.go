// Package synthetic regenerates the random-weight llama models of
// refdata/synthetic (syn-dense-256, syn-dense-512-tied, syn-moe-256) from
// the recipe in that folder's README, section 2: numpy's default_rng(seed)
// standard normals (package nprand), scaled in float64 and rounded once to
// float32, written in gguf-py's layout. The F32 files come out byte for
// byte as the README's sha256 sums say, so tests can use llama.cpp's
// logits, greedy ids and perplexities for them - and for files quantized
// from them - without the repository or shared/ storing the models.
//
// It is test support: the models are tens of MB and are written to a
// test's temporary directory.
package synthetic
