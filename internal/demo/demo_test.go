package demo

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// TestDemoData: the files embedded for gguf demo are the shared models,
// as demodata/README.md says (their sha256s b0a507e7…2696, 037cb335…c312).
func TestDemoData(t *testing.T) {
	t.Parallel()
	for name, b := range map[string][]byte{"stories260K.bin": demoStoriesBin, "tok512.bin": demoTok512} {
		want, err := os.ReadFile(shared.Path(t, "models", name))
		if err != nil {
			t.Fatal(err)
		}
		got, ref := sha256.Sum256(b), sha256.Sum256(want)
		if got != ref {
			t.Errorf("%s: embedded sha256 %x, ../shared's %x", name, got, ref)
		}
	}
	readme, err := os.ReadFile(filepath.Join("demodata", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range []string{"b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696", "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312"} {
		if !strings.Contains(string(readme), sum) {
			t.Errorf("demodata/README.md lacks %s", sum)
		}
	}
}

// TestDemoFailIsACheckError: a failed check reaches the command as a
// *CheckError (which it turns into exit 1) with the demo's message.
func TestDemoFailIsACheckError(t *testing.T) {
	err := fmt.Errorf("step: %w", demoFail("the story has %d tokens outside the pruned head", 3))
	var ce *CheckError
	if !errors.As(err, &ce) || ce.Error() != "demo: the story has 3 tokens outside the pruned head" {
		t.Fatalf("%v is not the check's error", err)
	}
}
