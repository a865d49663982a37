package engine

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
)

// portableDigests are the SHA-256 of logits computed with the portable Go
// kernels, recorded on amd64: the bailingmoe3 crosscheck files' over
// crosscheck.PromptIDs (one batch), and stories260K's Q8_0 file's (its
// ffn_down is F16) over its prompt and the first 200 tokens of its greedy
// text, one token at a time.
var portableDigests = map[string]string{
	"bailingmoe3-F32":    "b2a6865104e5607e3eb13a2a45cbb6116d1047b23a0f01a08750f9567b75fff6",
	"bailingmoe3-Q8_0":   "93a594e834f5928ddee4a163b8a9f45da52bca25b632e95b6f112606145f651b",
	"bailingmoe3-Q4_K_M": "1335475faec20f1e0ae34ecae16176363c5f52fa17b9d416e7c4297de76267cc",
	"stories260K-Q8_0":   "4998ad8b88fb164e315fa87dae94f9a66813e399040427f2befcd09210ad3d0e",
}

// TestPortableBitsEverywhere checks that the portable kernels, and every
// set that promises their sums (all but amd64's avx2 and vnni, which
// follow ggml's x86 order), give amd64's portable logits bit for bit on
// this architecture, the matrices in the group layout where a set packs
// them: bailingmoe3's recurrent KDA state turns any last-bit difference
// into different text (under qemu-aarch64 an FMLA F32 dot and Go's fused
// multiply-adds put its Q8_0 logits 2.2 off at position 5), and so do
// 200 greedy tokens of stories260K (a 16-lane NEON F16 dot chose another
// token 177 than amd64 and llama.cpp).
func TestPortableBitsEverywhere(t *testing.T) {
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	sets := slices.DeleteFunc(kernels.KernelSets(), func(s string) bool { return s == "avx2" || s == "vnni" })
	for _, tag := range slices.Sorted(maps.Keys(portableDigests)) {
		for _, set := range sets {
			if err := kernels.SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%x", sha256.Sum256(kernels.BytesOf(portableLogits(t, tag))))
			if want := portableDigests[tag]; got != want {
				t.Errorf("%s with the %s kernels: logits digest %s, amd64's portable %s", tag, set, got, want)
			}
		}
	}
}

// portableLogits computes the logits TestPortableBitsEverywhere digests
// for tag with the installed kernels.
func portableLogits(t *testing.T, tag string) []float32 {
	if tag == "stories260K-Q8_0" {
		m := openModel(t, shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf"))
		prompt, ids := greedyIDs(t, "refdata", "llama-cpp", "logits-Q8_0-kvf32-nofa-greedy-ids.txt")
		s := newState(t, m, Options{Ctx: 512})
		var out []float32
		keep := func(_ int, l []float32) { out = append(out, l...) }
		if err := s.Eval(prompt, len(prompt)-1, keep); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids[:200] {
			if err := s.Eval([]int32{id}, 0, keep); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	typ, _ := strings.CutPrefix(tag, "bailingmoe3-")
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: typ}))
	ids := crosscheck.PromptIDs
	s := newState(t, m, Options{Ctx: 512, Threads: 2, Batch: len(ids)})
	return sequenceLogits(t, s, ids, len(ids))
}
