package engine

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/kernels"
)

// portableDigests are the SHA-256 of the bailingmoe3 crosscheck files'
// logits over crosscheck.PromptIDs (one batch) with the portable Go
// kernels, recorded on amd64.
var portableDigests = map[string]string{
	"bailingmoe3-F32":    "b2a6865104e5607e3eb13a2a45cbb6116d1047b23a0f01a08750f9567b75fff6",
	"bailingmoe3-Q8_0":   "93a594e834f5928ddee4a163b8a9f45da52bca25b632e95b6f112606145f651b",
	"bailingmoe3-Q4_K_M": "1335475faec20f1e0ae34ecae16176363c5f52fa17b9d416e7c4297de76267cc",
}

// TestPortableBitsEverywhere checks that the portable kernels, and every
// set that promises their sums (all but amd64's avx2 and vnni, which
// follow ggml's x86 order), give amd64's portable logits bit for bit on
// this architecture: bailingmoe3's recurrent KDA state turns any last-bit
// difference into different text (under qemu-aarch64 an FMLA F32 dot and
// Go's fused multiply-adds put its Q8_0 logits 2.2 off at position 5).
// The files are opened without the group layout: Q4_K's group kernels sum
// in another order than its row kernels (TestPackedModel).
func TestPortableBitsEverywhere(t *testing.T) {
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	sets := slices.DeleteFunc(kernels.KernelSets(), func(s string) bool { return s == "avx2" || s == "vnni" })
	for _, typ := range []string{"F32", "Q8_0", "Q4_K_M"} {
		c := crosscheck.Case{Shape: "bailingmoe3", Type: typ}
		path := crossModel(t, c)
		for _, set := range sets {
			if err := kernels.SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			m, err := OpenWith(path, OpenOptions{NoRepack: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			ids := crosscheck.PromptIDs
			s := newState(t, m, Options{Ctx: 512, Threads: 2, Batch: len(ids)})
			got := fmt.Sprintf("%x", sha256.Sum256(kernels.BytesOf(sequenceLogits(t, s, ids, len(ids)))))
			if want := portableDigests[c.Tag()]; got != want {
				t.Errorf("%s with the %s kernels: logits digest %s, amd64's portable %s", c.Tag(), set, got, want)
			}
		}
	}
}
