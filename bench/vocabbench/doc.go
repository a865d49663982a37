// Command vocabbench times vocabselect's tokenizer on a whole text file, the
// counterpart of bench/llama-tokenize-bench.c for llama.cpp: it loads a
// GGUF's vocabulary, reads the file and times Encode alone (add_special on,
// parse_special off unless -parse-special), over the same text REPS times.
//
// It prints one line in the C harness's format, with the times of three
// kinds of pass:
//
//	cold:  the first Encode after loading, in a fresh process: lazily built
//	       tables and empty word caches, what a one-shot run pays;
//	fresh: the best of REPS first passes over the text, each on a newly
//	       loaded tokenizer whose lazily built tables (SentencePiece merges,
//	       Unicode tables) a one-letter Encode made first: empty word
//	       caches, as BenchmarkTokenize's "cold";
//	best:  the best of REPS passes on one tokenizer, its word caches warm,
//	       what a long-lived tokenizer does.
//
// Each time is given by the wall clock and by the CPU time of the process
// (cold_cpu_s...): on a machine shared with other work the CPU time stays
// steady where the wall clock swings with the load.
//
// -o writes the ids of the first pass, one per line; -cpuprofile a CPU
// profile of the whole run.
//
// Usage: vocabbench [-r REPS] [-o IDS] [-no-special] [-parse-special] [-cpuprofile FILE] MODEL.gguf TEXT
package main
