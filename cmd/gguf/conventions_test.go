package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/shared"
)

// TestFetchHuggingFaceCliSpelling (issue 23 item 18): fetch OWNER/REPO
// FILE and --local-dir as huggingface-cli download spells them; two
// arguments that are not OWNER/REPO FILE are refused naming the hf:// form.
func TestFetchHuggingFaceCliSpelling(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	want, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	startHub(t, hubtest.Options{}, "org/model", map[string]hubtest.Content{"sub/m.gguf": hubtest.Bytes(want)})
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	mustRun(t, nil, "fetch", "org/model", "sub/m.gguf", "-o", out)
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("fetch OWNER/REPO FILE -o OUT differs from the file")
	}
	local := filepath.Join(dir, "models")
	mustRun(t, nil, "fetch", "org/model", "sub/m.gguf", "--local-dir", local)
	if got, _ := os.ReadFile(filepath.Join(local, "sub", "m.gguf")); !bytes.Equal(got, want) {
		t.Error("--local-dir DIR did not write DIR/FILE")
	}
	mustRun(t, nil, "fetch", "hf://org/model/sub/m.gguf", "--local-dir", filepath.Join(dir, "again"))
	if got, _ := os.ReadFile(filepath.Join(dir, "again", "sub", "m.gguf")); !bytes.Equal(got, want) {
		t.Error("fetch hf://... --local-dir DIR did not write DIR/FILE")
	}
	checkOneLineError(t, runGGUF(t, nil, "fetch", model, out), exitUsage, "hf://OWNER/REPO/FILE")
	checkOneLineError(t, runGGUF(t, nil, "fetch", "org/model", "sub/m.gguf", "-o", out, "--local-dir", local), exitUsage, "not both")
}
