package sink

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPartialResume: pieces journaled by one run are kept by the next with
// the same key, unless their bytes changed; another key starts over; Commit
// leaves only the final file.
func TestPartialResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.gguf")
	p, err := OpenPartial(out, "k1")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"aaaa", "bbbb", "cccc"} {
		if _, err := p.WriterAt().WriteAt([]byte(s), int64(4*i)); err != nil {
			t.Fatal(err)
		}
		if err := p.Done(i, int64(4*i), 4); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	// Corrupt piece 1 behind the journal's back.
	f, _ := os.OpenFile(out+IncompleteSuffix, os.O_RDWR, 0)
	f.WriteAt([]byte("X"), 5)
	f.Close()
	p, err = OpenPartial(out, "k1")
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

	p, _ = OpenPartial(out, "k1")
	p.WriterAt().WriteAt([]byte("zzzz"), 0)
	p.Done(0, 0, 4)
	p.Close()
	p, _ = OpenPartial(out, "k2")
	defer p.Abort()
	if n, _ := p.Kept(); n != 0 {
		t.Errorf("another key kept %d pieces", n)
	}
	if st, _ := os.Stat(out + IncompleteSuffix); st.Size() != 0 {
		t.Errorf("another key left %d bytes", st.Size())
	}
}
