package llama2c

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/internal/testfiles"
)

// convertStories converts stories260K.bin + tok512.bin into a temp file.
func convertStories(t *testing.T) string {
	t.Helper()
	f, size := testfiles.Open(t, shared.Path(t, "models", "stories260K.bin"))
	ck, err := Open(f, size)
	if err != nil {
		t.Fatal(err)
	}
	tf, tsize := testfiles.Open(t, shared.Path(t, "models", "tok512.bin"))
	tok, err := ReadTokenizer(tf, tsize, ck.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "stories260K.gguf")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Convert(w, ck, tok); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readGGUF(t *testing.T, path string) *gguf.Reader {
	f, size := testfiles.Open(t, path)
	r, err := gguf.NewReader(f, size)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestConvertMatchesLlamaCpp compares the converted file with the one
// llama.cpp's convert-llama2c-to-ggml wrote from the same checkpoint:
// every tensor (name, shape, type, order, bytes) and the vocabulary must be
// identical; the context length is the checkpoint's 512 instead of 128.
func TestConvertMatchesLlamaCpp(t *testing.T) {
	got := readGGUF(t, convertStories(t))
	want := readGGUF(t, shared.Path(t, "models", "stories260K-f32.gguf"))
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("%d tensors, llama.cpp wrote %d", len(got.Tensors), len(want.Tensors))
	}
	for i := range want.Tensors {
		g, w := got.Tensors[i], want.Tensors[i]
		if g.Name != w.Name || g.Shape() != w.Shape() || g.Type != w.Type {
			t.Fatalf("tensor %d: %s %s %s, llama.cpp %s %s %s", i, g.Name, g.Shape(), g.Type, w.Name, w.Shape(), w.Type)
		}
		gb, _ := io.ReadAll(got.TensorData(i))
		wb, _ := io.ReadAll(want.TensorData(i))
		if !bytes.Equal(gb, wb) {
			t.Errorf("tensor %s: bytes differ", g.Name)
		}
	}
	for _, kv := range want.Metadata.KVs() {
		g, ok := got.Metadata.Get(kv.Key)
		switch kv.Key {
		case "llama.context_length":
			if v, _ := g.Uint(); v != 512 {
				t.Errorf("context_length %d, want the checkpoint's 512", v)
			}
		case "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id":
			if ok {
				t.Errorf("%s written", kv.Key)
			}
		default:
			if !ok || !g.Equal(kv.Value) {
				t.Errorf("metadata %s: %s, llama.cpp %s", kv.Key, g.Format(4), kv.Value.Format(4))
			}
		}
	}
	if got.Metadata.Len() != want.Metadata.Len()-2 {
		t.Errorf("%d keys, llama.cpp %d (minus its 2 bogus ids)", got.Metadata.Len(), want.Metadata.Len())
	}
}

// TestConvertedModelTellsTheStory runs the converted model greedily at its
// own (correct) context length and checks llama2.c's token ids, all 341
// generated tokens and the BOS that ends the story.
func TestConvertedModelTellsTheStory(t *testing.T) {
	m, err := engine.Open(convertStories(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Config.ContextLength != 512 {
		t.Fatalf("context length %d", m.Config.ContextLength)
	}
	s, err := engine.NewState(m, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []int32
	for _, line := range strings.Split(string(readRef(t, "refdata", "llama2c", "greedy_once_upon_a_time_n0.token-ids.txt")), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] == "POS" {
			if f[1] == "0" {
				in, _ := strconv.Atoi(f[3])
				ids = append(ids, int32(in))
			}
			next, _ := strconv.Atoi(f[5])
			ids = append(ids, int32(next))
		}
	}
	if len(ids) != 347 {
		t.Fatalf("read %d ids from llama2.c's trace", len(ids))
	}
	prompt := ids[:5]
	sm := engine.NewSampler(engine.SamplerOptions{Temp: 0}, m.Config.Vocab)
	var gen []int32
	st, err := engine.Generate(s, sm, prompt, 342, func(id int32) bool { return id == 2 }, func(id int32) error {
		gen = append(gen, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range gen {
		if id != ids[5+i] {
			t.Fatalf("token %d: %d, llama2.c %d", i, id, ids[5+i])
		}
	}
	if len(gen) != 342 || gen[341] != 1 || st.Stop != engine.StopLimit {
		t.Fatalf("generated %d tokens (stop %q), want llama2.c's 341 then BOS", len(gen), st.Stop)
	}
}

func readRef(t *testing.T, rel ...string) []byte {
	b, err := os.ReadFile(shared.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadCheckpoints checks that truncated or inconsistent inputs fail
// with an error, not a panic.
func TestBadCheckpoints(t *testing.T) {
	good := readRef(t, "models", "stories260K.bin")
	for name, b := range map[string][]byte{
		"empty":     nil,
		"header":    good[:20],
		"truncated": good[:len(good)-4],
		"zero dim":  append(make([]byte, 4), good[4:]...),
	} {
		if _, err := Open(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	tok := readRef(t, "models", "tok512.bin")
	for name, c := range map[string]struct {
		b []byte
		n int
	}{
		"truncated":   {tok[:len(tok)-3], 512},
		"wrong count": {tok, 500},
		"huge length": {append(append([]byte{}, tok[:8]...), 0xff, 0xff, 0xff, 0x7f), 512},
	} {
		if _, err := ReadTokenizer(bytes.NewReader(c.b), int64(len(c.b)), c.n); err == nil {
			t.Errorf("tokenizer %s: no error", name)
		}
	}
}
