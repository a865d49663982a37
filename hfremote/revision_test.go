package hfremote

import "testing"

func TestWithRevision(t *testing.T) {
	for _, c := range []struct{ in, rev, want string }{
		{"hf://o/r/m.gguf", "v1.0", "hf://o/r@v1.0/m.gguf"},
		{"hf://datasets/o/r/d/m.gguf", "refs/pr/3", "hf://datasets/o/r@refs/pr/3/d/m.gguf"},
		{"hf://o/r@v1.0/m.gguf", "v1.0", "hf://o/r@v1.0/m.gguf"},
	} {
		got, err := WithRevision(c.in, c.rev)
		if err != nil || got != c.want {
			t.Errorf("WithRevision(%q, %q) = %q, %v; want %q", c.in, c.rev, got, err, c.want)
		}
		if loc, err := ParseHF(got); err != nil || loc.Revision != c.rev {
			t.Errorf("%q parses as revision %q, %v", got, loc.Revision, err)
		}
	}
	if _, err := WithRevision("hf://o/r@v2/m.gguf", "v1"); err == nil {
		t.Error("two revisions accepted")
	}
	if _, err := WithRevision("https://example.com/m.gguf", "v1"); err == nil {
		t.Error("--revision accepted for a URL")
	}
}
