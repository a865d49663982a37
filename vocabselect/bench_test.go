package vocabselect

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ggufkit/gguf/internal/shared"
)

// baselineMBs measures a bytes.Count pass over text in this run: the
// reference the tokenizer speeds are reported against.
func baselineMBs(text []byte) float64 {
	const reps = 20
	start := time.Now()
	n := 0
	for range reps {
		n += bytes.Count(text, []byte{'\n'})
	}
	if n < 0 {
		panic("unreachable")
	}
	return float64(reps*len(text)) / 1e6 / time.Since(start).Seconds()
}

// BenchmarkTokenize reports tokenization throughput (MB/s) of whole
// multi-MB corpora for a SentencePiece, two byte-level BPE and a WordPiece
// vocabulary, with the speed of a bytes.Count pass over the same text as
// the baseline ("x-of-bytes.Count": how many times slower tokenizing is).
// The word caches start empty in every iteration.
func BenchmarkTokenize(b *testing.B) {
	cases := []struct{ name, vocab, corpus string }{
		{"spm-llama", "llama-spm", "corpus/en/war-and-peace.txt"},
		{"bpe-gpt2", "gpt-2", "corpus/en/war-and-peace.txt"},
		{"bpe-deepseek-llm-zh", "deepseek-llm", "corpus/zh/hongloumeng-excerpt.txt"},
		{"wpm-bert", "bert-bge", "corpus/en/war-and-peace.txt"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data, err := os.ReadFile(shared.Path(b, c.corpus))
			if err != nil {
				b.Fatal(err)
			}
			text := string(data)
			base := baselineMBs(data)
			tok := loadVocab(b, c.vocab)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				tok.sessions = sync.Pool{} // empty word caches
				tok.Encode(text, false, false)
			}
			mbs := float64(b.N) * float64(len(data)) / 1e6 / b.Elapsed().Seconds()
			b.ReportMetric(base, "bytes.Count-MB/s")
			b.ReportMetric(base/mbs, "x-of-bytes.Count")
		})
	}
}

// BenchmarkCount reports the throughput of Count (chunked, all cores) on
// the same English corpus with the byte-level BPE vocabulary.
func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile(shared.Path(b, "corpus/en/war-and-peace.txt"))
	if err != nil {
		b.Fatal(err)
	}
	base := baselineMBs(data)
	tok := loadVocab(b, "gpt-2")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tok.sessions = sync.Pool{}
		if _, err := tok.Count(context.Background(), bytes.NewReader(data), CountOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	mbs := float64(b.N) * float64(len(data)) / 1e6 / b.Elapsed().Seconds()
	b.ReportMetric(base/mbs, "x-of-bytes.Count")
}
