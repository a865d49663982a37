// Package vocabselect builds llama.cpp-exact tokenizers from a GGUF's
// tokenizer.ggml.* metadata and uses them to choose which vocabulary rows a
// pruned output head keeps.
//
// Tokenizers: NewTokenizer reads the metadata of any GGUF (a vocab-only
// file is enough) and Load opens a source and reads only its header.
// SentencePiece-style vocabularies ("llama": scores, byte fallback, the
// leading-space rule), byte-level BPE ("gpt2": merges and the pre-tokenizer
// named by tokenizer.ggml.pre) and WordPiece ("bert") are supported.
// Encode follows llama_tokenize token for token: control, user-defined and
// unknown tokens are split out of the text first (tokenizer_st_partition),
// then each text fragment goes through the vocabulary's algorithm.
// TokenToPiece and Decode follow llama_token_to_piece and llama_detokenize.
// The pre-tokenizer regexes are written as code, not run by a regex engine:
// Go's regexp lacks the lookahead they use, and llama.cpp itself runs
// hand-written splitters for the common ones. The Unicode categories come
// from Go's unicode package, mapped to llama.cpp's flags.
//
// Speed: the work is llama.cpp's, done with integers and flat tables.
// Every word a pre-tokenizer (or SentencePiece's cut at spaces and line
// breaks, or WordPiece's at ASCII whitespace) yields goes through a per
// session word cache whose entries live in one arena, with a direct-mapped
// front for short words; BPE and SentencePiece share one merge loop over
// symbol ids, whose pair lookups go to a table in rows by left symbol (a
// hash table for long rows), SentencePiece scores turned into ranks; long
// texts are tokenized in blocks cut where Count cuts, so that the code point
// buffers stay in the CPU caches. BenchmarkTokenize and BenchmarkCount
// measure it on multi-MB corpora, with the caches empty and warm.
//
// Selection: Count streams corpora through a tokenizer in parallel with
// memory independent of corpus size (OpenCorpus reads a corpus argument: a
// file, stdin, or a directory's text files in lexical order, binary files
// skipped; ReadCorpusCounts takes a counts file in its place); Select turns per-corpus counts into a
// ranked id list (specials, then low ids, then each corpus's most frequent
// tokens in turn, padded); Coverage reports which tokens of a text a list
// cannot produce; headprune.ReadIDs reads such a list back. ImportHF turns a Hugging
// Face vocab.json + merges.txt into the tokenizer.ggml.* metadata llama.cpp's
// converter would write, so a head can be chosen before a model is fetched.
package vocabselect
