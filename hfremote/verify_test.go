package hfremote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// TestVerifyingReaderFrom: a prefix the caller holds enters the check
// without being fetched again; a wrong prefix is a mismatch.
func TestVerifyingReaderFrom(t *testing.T) {
	s := startHub(t, hubtest.Options{})
	c := hubtest.PatternContent(4, 2<<20+77)
	commit(t, s, "org/repo", "main", map[string]hubtest.Content{"m.gguf": c, "small.txt": hubtest.Bytes([]byte("not in LFS"))})
	o := testOptions(s, nil)
	f := open(t, "hf://org/repo/m.gguf", o)
	if algo, sum := f.Checksum(); algo != "sha256" || sum != sha256Hex(t, c) {
		t.Fatalf("Checksum = %s %s", algo, sum)
	}
	if algo, _ := open(t, "hf://org/repo/small.txt", o).Checksum(); algo != "git-sha1" {
		t.Fatalf("a file in git: Checksum algo %q", algo)
	}
	prefix := want(t, c, 0, 1<<20)
	before := f.Stats().Bytes
	got := readAll(t, f.VerifyingReaderFrom(context.Background(), prefix, RangeOptions{}))
	if !bytes.Equal(got, want(t, c, 1<<20, c.Size-1<<20)) {
		t.Fatal("bytes after the prefix differ")
	}
	if n := f.Stats().Bytes - before; n != c.Size-1<<20 {
		t.Errorf("fetched %d bytes, want only the %d after the prefix", n, c.Size-1<<20)
	}
	prefix[100] ^= 1
	r := f.VerifyingReaderFrom(context.Background(), prefix, RangeOptions{})
	defer r.Close()
	if _, err := io.Copy(io.Discard, r); !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("a corrupt prefix: %v", err)
	}
}
