package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
)

// TestBailingMoE3BatchEqualsSteps evaluates 128 tokens of the crosscheck
// text on the bailingmoe3 files as one batch, in batches of 7, and one
// token at a time. The KDA recurrence runs token by token inside a batch,
// so only the matrix products can tell batches apart: Q8_0's integer
// kernels give the same bits for a row whether it goes alone or four at a
// time (tolerance 0); F32's four-row product sums in another order than
// the one-row one, so F32 is allowed 5e-5 (measured 1.3e-5 over all 128
// positions, logits up to ~8).
func TestBailingMoE3BatchEqualsSteps(t *testing.T) {
	ids := crosscheck.TextIDs(200)[:128]
	for _, typ := range []string{"F32", "Q8_0"} {
		tol := 0.0
		if typ == "F32" {
			tol = 5e-5
		}
		t.Run(typ, func(t *testing.T) {
			m := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: typ}))
			want := sequenceLogits(t, newState(t, m, Options{Ctx: 128, Threads: 2, Batch: 128}), ids, len(ids))
			for _, b := range []int{7, 1} {
				got := sequenceLogits(t, newState(t, m, Options{Ctx: 128, Threads: 2, Batch: b}), ids, len(ids))
				d, at := maxDiff(got, want)
				if d > tol {
					t.Errorf("batches of %d: logits differ from one batch by %g at position %d", b, d, at/m.Config.Vocab)
				}
				t.Logf("batches of %d: max |diff| %.3g against one batch", b, d)
			}
		})
	}
}

// TestBailingMoE3Reset checks that Reset clears the recurrent state (the
// same tokens after Reset give a fresh state's logits bit for bit, where
// without clearing the KDA state would carry the first run over), that
// Rewind to a shorter prefix starts over (Pos 0) instead of keeping a
// state that summarizes the dropped positions, and the state's size.
func TestBailingMoE3Reset(t *testing.T) {
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: "F32"}))
	ids := crosscheck.TextIDs(40)
	o := Options{Ctx: 64, Batch: 16}
	fresh := sequenceLogits(t, newState(t, m, o), ids, len(ids))
	s := newState(t, m, o)
	sequenceLogits(t, s, ids, len(ids))
	s.Reset()
	if d, at := maxDiff(sequenceLogits(t, s, ids, len(ids)), fresh); d != 0 {
		t.Fatalf("after Reset: logits differ by %g at %d", d, at)
	}
	s.Rewind(10)
	if s.Pos() != 0 {
		t.Fatalf("Rewind(10) of a recurrent state: Pos %d, want 0 (start over)", s.Pos())
	}
	other := slices.Concat(ids[:10], []int32{60, 61, 62})
	want := sequenceLogits(t, newState(t, m, o), other, len(other))
	if d, at := maxDiff(sequenceLogits(t, s, other, len(other)), want); d != 0 {
		t.Fatalf("after Rewind: logits differ by %g at %d", d, at)
	}
	// 2 MLA layers x ctx x (kv_lora_rank 128 + 16 RoPE dims), 2 KDA layers x
	// (3 convolutions x 128 channels x 3 inputs + 4 heads x 32 x 32)
	const ctx = 64
	if got, want := m.KVCacheBytes(ctx), int64(4*(2*ctx*144+2*(3*128*3+4*32*32))); got != want {
		t.Fatalf("KVCacheBytes(%d) = %d, want %d", ctx, got, want)
	}
}

// TestBailingMoE3KeysAsLlamaCpp opens bailingmoe3 files whose keys
// libllama 0.7.0 loads and runs with the logits of the unmodified file,
// bit for bit (measured with bench/llama-logits.c): value_length of any
// value or absent (the MLA cache holds keys only, nothing is sized by
// it), one expert group (no group limit), kda.safe_gate true. Each must
// give the unmodified file's logits bit for bit here too. (Files whose
// keys libllama refuses are TestFamilyBadFiles'; key widths that all
// differ from each other are the bailingmoe3c crosscheck shape's.)
func TestBailingMoE3KeysAsLlamaCpp(t *testing.T) {
	del := gguf.Value{}
	ref := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: "F32"}))
	ids := crosscheck.PromptIDs
	want := sequenceLogits(t, newState(t, ref, Options{Ctx: 64}), ids, len(ids))
	for _, c := range []struct {
		name string
		edit func(*gguf.Metadata, []gguf.TensorInfo) []gguf.TensorInfo
	}{
		{"value_length 7", setKey("bailingmoe3.attention.value_length", gguf.Uint32(7))},
		{"no value_length", setKey("bailingmoe3.attention.value_length", del)},
		{"one expert group", func(md *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo {
			md.Set("bailingmoe3.expert_group_count", gguf.Uint32(1))
			md.Set("bailingmoe3.expert_group_used_count", gguf.Uint32(0))
			return infos
		}},
		{"safe gate", setKey("bailingmoe3.kda.safe_gate", gguf.Bool(true))},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := openModel(t, mutated(t, "bailingmoe3", c.edit))
			got := sequenceLogits(t, newState(t, m, Options{Ctx: 64}), ids, len(ids))
			if d, at := maxDiff(got, want); d != 0 {
				t.Fatalf("logits differ from the unmodified file's by %g at %d", d, at)
			}
		})
	}
}

// TestBailingMoE3NextN checks that a bailingmoe3 file with a NextN/MTP
// block (an MLA layer with nextn.* tensors after the 4 layers) loads with
// that block skipped and gives the same logits as without it.
func TestBailingMoE3NextN(t *testing.T) {
	sh := crosscheck.Shapes["bailingmoe3"]
	sh.Model.NextN = 1
	path := filepath.Join(t.TempDir(), "nextn.gguf")
	if err := os.WriteFile(path, crosscheck.F32(sh), 0o644); err != nil {
		t.Fatal(err)
	}
	m := openModel(t, path)
	ref := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: "F32"}))
	if len(m.Layers) != 4 || m.Config.NextN != 1 || len(m.Config.Recurrent) != 4 {
		t.Fatalf("%d layers, nextn %d, recurrent %v", len(m.Layers), m.Config.NextN, m.Config.Recurrent)
	}
	ids := crosscheck.PromptIDs
	got := sequenceLogits(t, newState(t, m, Options{Ctx: 64}), ids, len(ids))
	want := sequenceLogits(t, newState(t, ref, Options{Ctx: 64}), ids, len(ids))
	if d, at := maxDiff(got, want); d != 0 {
		t.Fatalf("logits differ by %g at %d", d, at)
	}
}

// TestBailingMoE3LongPrompt compares 512 positions of bailingmoe3-F32
// with llama.cpp's (bench/llama-logits-long.sh: BOS and 511 words of the
// crosscheck text as one batch; every 32nd position kept): the error does
// not grow with the position, the KDA state's decays forgetting what the
// rounding leaves in it. Measured over all 512 positions: at most 8.1e-6
// in positions 0-7, 9.5e-6 in 8-127, 2.05e-5 in 128-255 (the worst,
// position 158), 1.8e-5 in 256-383, 1.3e-5 in 384-511; argmax 512/512.
// The tolerance is the crosscheck's 1e-4.
func TestBailingMoE3LongPrompt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "llamacpp", "bailingmoe3-F32-long.f32"))
	if err != nil {
		t.Fatal(err)
	}
	want := kernels.F32s(raw)
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: "F32"}))
	V := m.Config.Vocab
	if len(want) != 16*V {
		t.Fatalf("reference has %d floats, want %d", len(want), 16*V)
	}
	ids := crosscheck.TextIDs(511)
	s := newState(t, m, Options{Ctx: 512, Threads: 2, Batch: 512})
	worst := 0.0
	err = s.Eval(ids, 0, func(i int, l []float32) {
		if i%32 != 31 {
			return
		}
		k := i / 32
		d, at := maxDiff(l, want[k*V:(k+1)*V])
		worst = max(worst, d)
		if d > 1e-4 {
			t.Errorf("position %d: max |diff| %.3g at id %d", i, d, at)
		}
		if a, b := argmax(l), argmax(want[k*V:(k+1)*V]); a != b {
			t.Errorf("position %d: argmax %d, llama.cpp %d", i, a, b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("max |diff| %.3g over positions 31, 63, ..., 511", worst)
}

// TestBailingMoE3HeadCountArray loads a bailingmoe3 file whose head_count
// is an array over layers, as llama.cpp accepts it (get_key_or_arr): the
// mixers use the first layer's count (llama.cpp's n_head()), so a uniform
// array gives the scalar file's logits, and an array starting at 0 fails.
func TestBailingMoE3HeadCountArray(t *testing.T) {
	ref := openModel(t, crossModel(t, crosscheck.Case{Shape: "bailingmoe3", Type: "F32"}))
	m := openModel(t, mutated(t, "bailingmoe3", setKey("bailingmoe3.attention.head_count", gguf.MustArray([]uint32{4, 4, 4, 4}))))
	ids := crosscheck.PromptIDs
	got := sequenceLogits(t, newState(t, m, Options{Ctx: 64}), ids, len(ids))
	want := sequenceLogits(t, newState(t, ref, Options{Ctx: 64}), ids, len(ids))
	if d, at := maxDiff(got, want); d != 0 {
		t.Fatalf("logits differ by %g at %d", d, at)
	}
	_, err := Open(mutated(t, "bailingmoe3", setKey("bailingmoe3.attention.head_count", gguf.MustArray([]uint32{0, 4, 0, 4}))))
	if err == nil || !strings.Contains(err.Error(), "head_count") {
		t.Fatalf("head_count [0 4 0 4]: error %v", err)
	}
}
