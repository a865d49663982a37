package vocabselect

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenCorpusDirectory: a directory is its text files, nested ones too,
// in lexical order, one after the other; binary files (a NUL, invalid
// UTF-8) are skipped and not counted in Size; a text whose 8 KiB head cuts
// a character still counts as text.
func TestOpenCorpusDirectory(t *testing.T) {
	dir := t.TempDir()
	cut := strings.Repeat("a", 8191) + "é tail" // é straddles byte 8192
	files := map[string]string{
		"b.txt":     "second\n",
		"a.txt":     "first\n",
		"sub/c.txt": "third\n",
		"d.bin":     "bin\x00ary",
		"e.dat":     "bad \xff utf-8",
		"f.txt":     cut,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cr, err := OpenCorpus(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	got, err := io.ReadAll(cr)
	if err != nil {
		t.Fatal(err)
	}
	want := "first\nsecond\n" + cut + "third\n"
	if string(got) != want {
		t.Fatalf("read %q...", got[:min(len(got), 40)])
	}
	if cr.Size() != int64(len(want)) || CorpusBytes([]string{dir, filepath.Join(dir, "a.txt")}) != int64(len(want)+6) {
		t.Fatalf("Size %d, CorpusBytes %d, want %d", cr.Size(), CorpusBytes([]string{dir}), len(want))
	}
	for name, text := range map[string]bool{"a.txt": true, "f.txt": true, "d.bin": false, "e.dat": false} {
		if ok, err := IsTextFile(filepath.Join(dir, name)); ok != text || err != nil {
			t.Errorf("IsTextFile(%s) = %v, %v", name, ok, err)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "x.bin"), []byte{0}, 0o644)
	if _, err := OpenCorpus(empty, nil); err == nil || !strings.Contains(err.Error(), "no text files") {
		t.Fatalf("a directory without text: %v", err)
	}
	if _, err := OpenCorpus(filepath.Join(dir, "missing"), nil); err == nil {
		t.Fatal("a missing corpus opened")
	}
}

// TestCorpusStdin: "-" reads the reader given, has no size, and makes
// CorpusBytes unknown.
func TestCorpusStdin(t *testing.T) {
	cr, err := OpenCorpus("-", strings.NewReader("from stdin"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(cr)
	if string(got) != "from stdin" || cr.Size() != -1 || CorpusBytes([]string{"-"}) != -1 {
		t.Fatalf("read %q, Size %d, CorpusBytes %d", got, cr.Size(), CorpusBytes([]string{"-"}))
	}
}

// TestReadCorpusCounts: a corpus given as text and as the counts file of
// that text give the same counts; a broken counts file's error names it.
func TestReadCorpusCounts(t *testing.T) {
	tok := loadVocab(t, "gpt-2")
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fromText, err := tok.ReadCorpusCounts(ctx, text, nil, CountOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCounts(&buf, tok, []string{"test"}, fromText); err != nil {
		t.Fatal(err)
	}
	countsFile := filepath.Join(dir, "counts.tsv")
	if err := os.WriteFile(countsFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fromCounts, err := tok.ReadCorpusCounts(ctx, countsFile, nil, CountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fromText.Counts, fromCounts.Counts) || fromText.Tokens != fromCounts.Tokens || fromText.Bytes != fromCounts.Bytes {
		t.Fatalf("counts file gives %d tokens over %d bytes, text %d over %d", fromCounts.Tokens, fromCounts.Bytes, fromText.Tokens, fromText.Bytes)
	}
	broken := filepath.Join(dir, "broken.tsv")
	os.WriteFile(broken, append(buf.Bytes(), "999999999\t1\tx\n"...), 0o644)
	if _, err := tok.ReadCorpusCounts(ctx, broken, nil, CountOptions{}); err == nil || !strings.HasPrefix(err.Error(), broken+": ") {
		t.Fatalf("broken counts file: %v", err)
	}
}
