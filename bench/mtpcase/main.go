// Command mtpcase writes the files of bench/llama-add-mtp.sh: a small
// generated qwen35 or qwen35moe model without its MTP block
// (DIR/base.gguf), the block as a Qwen3.5 checkpoint holds it
// (DIR/mtp.safetensors: mtp.* names, BF16, norms stored minus 1, a MoE
// block's experts one tensor each) and the model with the block as
// convert_hf_to_gguf.py writes it with --outtype TYPE (DIR/want.gguf), all
// from internal/mtpfixture.QwenMTP.
//
//	mtpcase -dir DIR [-type f32|f16|bf16|q8_0] [-arch qwen35|qwen35moe]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/mtpfixture"
)

func main() {
	dir := flag.String("dir", "", "output directory")
	typ := flag.String("type", "q8_0", "the MTP block's weights (convert_hf_to_gguf's --outtype): f32, f16, bf16 or q8_0")
	arch := flag.String("arch", "qwen35", "the model: qwen35 (dense) or qwen35moe")
	flag.Parse()
	t, err := gguf.ParseType(strings.ToUpper(*typ))
	m := fixture.Qwen35MTP(gguf.TypeF32)
	switch {
	case err != nil:
	case *dir == "":
		err = fmt.Errorf("-dir is required")
	case *arch == "qwen35moe":
		m = fixture.Qwen35MoEMTP(gguf.TypeF32)
	case *arch != "qwen35":
		err = fmt.Errorf("-arch %q: want qwen35 or qwen35moe", *arch)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mtpcase:", err)
		os.Exit(2)
	}
	c, err := mtpfixture.QwenMTP(m, t)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mtpcase:", err)
		os.Exit(1)
	}
	for name, b := range map[string][]byte{"base.gguf": c.Base, "mtp.safetensors": c.Checkpoint, "want.gguf": c.Want} {
		if err := os.WriteFile(filepath.Join(*dir, name), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mtpcase:", err)
			os.Exit(1)
		}
	}
}
