package sink

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spans4 are n pieces of 4 bytes each, end to end.
func spans4(n int) []Span {
	s := make([]Span, n)
	for i := range s {
		s[i] = Span{Off: int64(4 * i), Len: 4}
	}
	return s
}

// TestPartialResume: pieces journaled by one run are kept by the next with
// the same key, unless their bytes changed; another key starts over; Commit
// leaves only the final file.
func TestPartialResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.gguf")
	p, err := OpenPartial(out, "k1", spans4(3))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"aaaa", "bbbb", "cccc"} {
		if _, err := p.WriterAt().WriteAt([]byte(s), int64(4*i)); err != nil {
			t.Fatal(err)
		}
		if err := p.Done(i); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	// Corrupt piece 1 behind the journal's back.
	f, _ := os.OpenFile(out+IncompleteSuffix, os.O_RDWR, 0)
	f.WriteAt([]byte("X"), 5)
	f.Close()
	p, err = OpenPartial(out, "k1", spans4(3))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Has(0) || p.Has(1) || !p.Has(2) {
		t.Errorf("kept %v %v %v, want piece 1 dropped", p.Has(0), p.Has(1), p.Has(2))
	}
	if n, b := p.Kept(); n != 2 || b != 8 {
		t.Errorf("Kept() = %d, %d", n, b)
	}
	p.WriterAt().WriteAt([]byte("bbbb"), 4)
	if err := p.Commit(12); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, []byte("aaaabbbbcccc")) {
		t.Errorf("committed %q", got)
	}
	for _, n := range []string{out + IncompleteSuffix, out + IncompleteSuffix + ".json"} {
		if _, err := os.Stat(n); err == nil {
			t.Errorf("%s left after Commit", n)
		}
	}

	p, _ = OpenPartial(out, "k1", spans4(3))
	p.WriterAt().WriteAt([]byte("zzzz"), 0)
	p.Done(0)
	p.Close()
	p, _ = OpenPartial(out, "k2", spans4(3))
	defer p.Abort()
	if n, _ := p.Kept(); n != 0 {
		t.Errorf("another key kept %d pieces", n)
	}
	if st, _ := os.Stat(out + IncompleteSuffix); st.Size() != 0 {
		t.Errorf("another key left %d bytes", st.Size())
	}
}

// TestPartialTamperedJournal: a journal's entries are checked against the
// plan's spans and the bytes on disk, not believed: an entry at another
// offset or length, an index out of range or listed twice, a range past
// the end of the file (whose short read hashes like the empty string), and
// the sha256 of zeros over a file extended with zeros (holes, never
// written) are all dropped; the piece really written is kept.
func TestPartialTamperedJournal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.gguf")
	spans := []Span{{0, 4}, {4, 4}, {8, 4096}, {4104, 4096}, {8200, 8}}
	p, err := OpenPartial(out, "k", spans)
	if err != nil {
		t.Fatal(err)
	}
	p.WriterAt().WriteAt([]byte("aaaa"), 0)
	if err := p.Done(0); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// Extend the file with a hole: the zeros there were never written.
	if err := os.Truncate(out+IncompleteSuffix, 8200); err != nil {
		t.Fatal(err)
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	zeros := sum(make([]byte, 4096))
	good := Piece{Index: 0, Off: 0, Len: 4, SHA256: sum([]byte("aaaa"))}
	j := journal{Key: "k", Pieces: []Piece{
		good,
		{Index: 0, Off: 0, Len: 4, SHA256: good.SHA256}, // twice
		{Index: 1, Off: 0, Len: 4, SHA256: good.SHA256}, // not where the plan puts piece 1
		{Index: 1, Off: 4, Len: 0, SHA256: sum(nil)},    // a shorter length
		{Index: 9, Off: 0, Len: 4, SHA256: good.SHA256}, // no such piece
		{Index: 4, Off: 8200, Len: 8, SHA256: sum(nil)}, // past the end: a short read
		{Index: 2, Off: 8, Len: 4096, SHA256: zeros},    // a hole
		{Index: 3, Off: 4104, Len: 4096, SHA256: zeros}, // a hole
	}}
	b, _ := json.Marshal(j)
	if err := os.WriteFile(out+IncompleteSuffix+".json", b, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = OpenPartial(out, "k", spans)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Abort()
	if n, bytes := p.Kept(); n != 1 || bytes != 4 || !p.Has(0) {
		t.Errorf("kept %d pieces, %d bytes (piece 0: %v); want only piece 0's 4 bytes", n, bytes, p.Has(0))
	}
	if err := p.Done(9); err == nil {
		t.Error("Done accepted a piece the plan does not have")
	}
}

// TestPartialLinksAndLock: a symlink at OUT.incomplete or at its journal's
// temporary is not written through (its target keeps its bytes), a second
// run to the same output is refused while the first holds it, and a
// symlinked output is resumed next to its target.
func TestPartialLinksAndLock(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	os.Symlink(victim, out+IncompleteSuffix)
	if _, err := OpenPartial(out, "k", spans4(1)); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink at the partial name: error %v", err)
	}
	os.Remove(out + IncompleteSuffix)
	os.Symlink(victim, out+IncompleteSuffix+".json.tmp")
	p, err := OpenPartial(out, "k", spans4(1))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("written through a link: the victim holds %q", b)
	}
	if _, err := OpenPartial(out, "k", spans4(1)); err == nil || !strings.Contains(err.Error(), "another run is writing") {
		t.Errorf("a second run while the first holds the output: error %v", err)
	}
	p.WriterAt().WriteAt([]byte("data"), 0)
	p.Done(0)
	if err := p.Commit(4); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "data" {
		t.Errorf("committed %q", b)
	}

	link := filepath.Join(dir, "link.gguf")
	os.Symlink("real.gguf", link)
	p, err = OpenPartial(link, "k", spans4(1))
	if err != nil {
		t.Fatal(err)
	}
	p.WriterAt().WriteAt([]byte("real"), 0)
	p.Done(0)
	if err := p.Commit(4); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.gguf")); string(b) != "real" {
		t.Errorf("the link's target holds %q", b)
	}
}
