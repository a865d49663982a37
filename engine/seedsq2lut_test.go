package engine

import (
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// TestSeedsQ2LUTRefused: a file the seeds' tools/gguf_q2lut.py wrote
// (ipad.expert_layout = "q2lut", experts under their Q2_K names) is
// refused at load with the way to convert it, never run as Q2_K.
func TestSeedsQ2LUTRefused(t *testing.T) {
	path := mutated(t, "moe", func(md *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo {
		md.Set("ipad.expert_layout", gguf.String("q2lut"))
		return infos
	})
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "ipad.expert_layout") || !strings.Contains(err.Error(), "gguf layout ORIGINAL.gguf --experts q2lut") {
		t.Fatalf("Open: %v", err)
	}
}
