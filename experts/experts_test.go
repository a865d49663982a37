package experts

import (
	"bytes"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

func TestIsExpert(t *testing.T) {
	for name, want := range map[string]bool{
		"blk.0.ffn_gate_exps.weight":    true,
		"blk.0.ffn_up_exps.weight":      true,
		"blk.11.ffn_down_exps.weight":   true,
		"blk.3.ffn_gate_up_exps.weight": true,
		"blk.3.ffn_down_exps.bias":      true,
		"blk.3.ffn_down_exps.scale":     true,
		"blk.0.ffn_gate_inp.weight":     false, // the router
		"blk.0.ffn_up_shexp.weight":     false, // a shared expert is always used
		"blk.0.ffn_up.weight":           false,
		"token_embd.weight":             false,
		"blk.0.exps_note.weight":        false,
	} {
		if IsExpert(name) != want {
			t.Errorf("IsExpert(%q) = %v", name, !want)
		}
	}
}

// TestDescribeDense: a model without experts has no expert layout.
func TestDescribeDense(t *testing.T) {
	data := fixture.Dense().Build()
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if Describe(r.File) != nil {
		t.Error("a dense model has an expert layout")
	}
}
