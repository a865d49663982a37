package vocabselect

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// readAllTokens drains a TokenReader.
func readAllTokens(t *testing.T, tr *TokenReader) []int32 {
	t.Helper()
	defer tr.Close()
	var all []int32
	for {
		ids, err := tr.Next()
		if err == io.EOF {
			return all
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
	}
}

// TestTokenReaderMatchesEncode: streaming a multi-MB text gives exactly
// Encode's tokens (BOS/EOS included), and texts that end exactly at a chunk
// boundary or are empty get their BOS/EOS once.
func TestTokenReaderMatchesEncode(t *testing.T) {
	cases := []struct{ vocab, corpus string }{
		{"llama-spm", "corpus/en/war-and-peace.txt"},
		{"gpt-2", "corpus/fr/les-miserables-tome4-fr.txt"},
		{"bert-bge", "corpus/de/german-classics-7-books.txt"},
	}
	for _, c := range cases {
		tok := loadVocab(t, c.vocab)
		data, err := os.ReadFile(shared.Path(t, c.corpus))
		if err != nil {
			t.Fatal(err)
		}
		for _, addSpecial := range []bool{false, true} {
			want := tok.Encode(string(data), addSpecial, true)
			tr := tok.NewTokenReader(bytes.NewReader(data), addSpecial, true)
			got := readAllTokens(t, tr)
			if !slices.Equal(got, want) {
				t.Errorf("%s special=%v: %d streamed tokens differ from Encode's %d", c.vocab, addSpecial, len(got), len(want))
			}
			if tr.Bytes() != int64(len(data)) || tr.Tokens() != int64(len(want)) {
				t.Errorf("%s: Bytes %d Tokens %d, want %d %d", c.vocab, tr.Bytes(), tr.Tokens(), len(data), len(want))
			}
		}
	}
	tok := loadVocab(t, "bert-bge") // WordPiece: always adds [CLS] and [SEP]
	for _, text := range []string{"", strings.Repeat("word\n", DefaultChunkSize/5) + "x"[:DefaultChunkSize%5]} {
		want := tok.Encode(text, true, false)
		got := readAllTokens(t, tok.NewTokenReader(strings.NewReader(text), true, false))
		if !slices.Equal(got, want) {
			t.Errorf("%d bytes: got %d tokens %v..., want %d", len(text), len(got), got[:min(3, len(got))], len(want))
		}
	}
}
