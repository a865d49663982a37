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

// report adds the metrics every benchmark here reports after its loop:
// the baseline's speed, the tokenizer's slowdown against it (wall clock)
// and the tokenizer's bytes per CPU second (cpu0: cpuTime before the loop).
func report(b *testing.B, size int, base float64, cpu0 time.Duration) {
	total := float64(b.N) * float64(size) / 1e6
	mbs := total / b.Elapsed().Seconds()
	b.ReportMetric(base, "bytes.Count-MB/s")
	b.ReportMetric(base/mbs, "x-of-bytes.Count")
	if cpu := cpuTime() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "cpu-MB/s")
	}
}

// benchVocab loads a vocabulary for a benchmark: a vocab GGUF by name, or
// "hf:<pre>" for a Hugging Face tokenizer in shared/ through ImportHF.
func benchVocab(b *testing.B, name string) *Tokenizer {
	switch name {
	case "hf:qwen2", "hf:llama-bpe":
		dir := qwen2Dir(b)
		if name == "hf:llama-bpe" {
			dir = llama3Dir(b)
		}
		md, err := ImportHF(dir, name[3:])
		if err != nil {
			b.Fatal(err)
		}
		tok, err := NewTokenizer(md)
		if err != nil {
			b.Fatal(err)
		}
		return tok
	}
	return loadVocab(b, name)
}

// BenchmarkTokenize reports tokenization throughput (MB/s) of whole
// multi-MB corpora, English and Chinese or Russian, for a SentencePiece
// vocabulary, byte-level BPE ones (GPT-2, Llama 3 and Qwen2 through
// import-hf, DeepSeek LLM) and a WordPiece one. The speed of a bytes.Count
// pass over the same text is the baseline ("x-of-bytes.Count": how many
// times slower tokenizing is). "cold" empties the word caches before every
// pass, as a one-shot llama-tokenize run starts; "warm" keeps them, as a
// long-lived tokenizer does.
func BenchmarkTokenize(b *testing.B) {
	const (
		en = "corpus/en/war-and-peace.txt"
		ru = "corpus/ru/anna-karenina-excerpt.txt"
		zh = "corpus/zh/hongloumeng-excerpt.txt"
	)
	cases := []struct{ name, vocab, corpus string }{
		{"spm-llama/en", "llama-spm", en},
		{"spm-llama/ru", "llama-spm", ru},
		{"spm-llama/zh", "llama-spm", zh},
		{"bpe-gpt2/en", "gpt-2", en},
		{"bpe-gpt2/ru", "gpt-2", ru},
		{"bpe-llama3/en", "hf:llama-bpe", en},
		{"bpe-llama3/zh", "hf:llama-bpe", zh},
		{"bpe-qwen2/en", "hf:qwen2", en},
		{"bpe-qwen2/zh", "hf:qwen2", zh},
		{"bpe-deepseek-llm/zh", "deepseek-llm", zh},
		{"wpm-bert/en", "bert-bge", en},
		{"wpm-bert/ru", "bert-bge", ru},
	}
	toks := map[string]*Tokenizer{}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data, err := os.ReadFile(shared.Path(b, c.corpus))
			if err != nil {
				b.Fatal(err)
			}
			text := string(data)
			tok := toks[c.vocab]
			if tok == nil {
				tok = benchVocab(b, c.vocab)
				toks[c.vocab] = tok
			}
			for _, warm := range []bool{false, true} {
				name := "cold"
				if warm {
					name = "warm"
				}
				b.Run(name, func(b *testing.B) {
					base := baselineMBs(data)
					// One pass first builds the lazily made tables (flags,
					// SentencePiece merges, NFD), which loading a tokenizer
					// would otherwise pay for in the first timed pass.
					tok.Encode(text, false, false)
					b.SetBytes(int64(len(data)))
					cpu0 := cpuTime()
					for b.Loop() {
						if !warm {
							tok.sessions = sync.Pool{} // empty word caches
						}
						tok.Encode(text, false, false)
					}
					report(b, len(data), base, cpu0)
				})
			}
		})
	}
}

// BenchmarkCount reports the throughput of Count (chunked, all cores) on
// the same English corpus with the byte-level BPE vocabulary, caches
// emptied before every pass. Its cpu-MB/s counts the CPU time of all
// workers: the wall-clock MB/s over it is how well Count uses the cores.
func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile(shared.Path(b, "corpus/en/war-and-peace.txt"))
	if err != nil {
		b.Fatal(err)
	}
	base := baselineMBs(data)
	tok := loadVocab(b, "gpt-2")
	b.SetBytes(int64(len(data)))
	cpu0 := cpuTime()
	for b.Loop() {
		tok.sessions = sync.Pool{}
		if _, err := tok.Count(context.Background(), bytes.NewReader(data), CountOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	report(b, len(data), base, cpu0)
}

// BenchmarkFirstEncode times the first Encode of a freshly loaded tokenizer
// on a whole corpus, as a one-shot llama-tokenize run (and
// bench/llama-tokenize.sh's "cold" column) pays it: the lazily built tables
// and the empty word caches are part of the pass. Loading is not timed.
func BenchmarkFirstEncode(b *testing.B) {
	cases := []struct{ name, vocab, corpus string }{
		{"spm-llama/zh", "llama-spm", "corpus/zh/hongloumeng-excerpt.txt"},
		{"spm-llama/zh-un", "llama-spm", "corpus/zh/un-v1.0-dev+test.zh.txt"},
		{"spm-baichuan/ja", "baichuan", "corpus/ja/aozora-soseki-kenji-4-works.txt"},
		{"spm-phi3/zh", "phi-3", "corpus/zh/hongloumeng-excerpt.txt"},
		{"wpm-bert/zh-un", "bert-bge", "corpus/zh/un-v1.0-dev+test.zh.txt"},
		{"bpe-gpt2/en", "gpt-2", "corpus/en/war-and-peace.txt"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data, err := os.ReadFile(shared.Path(b, c.corpus))
			if err != nil {
				b.Fatal(err)
			}
			text := string(data)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				b.StopTimer()
				tok := loadVocab(b, c.vocab)
				b.StartTimer()
				tok.Encode(text, true, false)
			}
		})
	}
}
