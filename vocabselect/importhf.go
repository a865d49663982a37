package vocabselect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// ImportHF reads a Hugging Face byte-level BPE tokenizer directory
// (vocab.json and merges.txt, and where present config.json,
// tokenizer_config.json and added_tokens.json) and returns the metadata of a
// vocab-only GGUF with the tokenizer.ggml.* keys llama.cpp's converter
// (convert_hf_to_gguf.py, get_vocab_base and gguf.SpecialVocab) writes for
// it: token types from the added tokens, [PADn] rows up to config.json's
// vocab_size, merges in file order, special ids and the add_* flags. pre is
// the tokenizer.ggml.pre value ("qwen2", "llama-bpe", ...); it must be one
// NewTokenizer supports.
func ImportHF(dir, pre string) (*gguf.Metadata, error) {
	md, _, err := ImportHFFiles(HFDir(dir), pre)
	return md, err
}

// HFFiles names the files of a Hugging Face tokenizer; an empty optional
// path means the file is absent.
type HFFiles struct {
	// Dir names the tokenizer (general.name is its base name).
	Dir string
	// Vocab and Merges are required.
	Vocab, Merges string
	// Config (config.json: vocab_size, BOS/EOS/PAD ids), TokenizerConfig
	// (tokenizer_config.json: added tokens, special tokens, add_bos/add_eos,
	// chat template) and AddedTokens (added_tokens.json) are optional.
	Config, TokenizerConfig, AddedTokens string
}

// HFDir returns the files of a tokenizer directory under their usual
// names, the optional ones only where they exist.
func HFDir(dir string) HFFiles {
	opt := func(name string) string {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	return HFFiles{Dir: dir, Vocab: filepath.Join(dir, "vocab.json"), Merges: filepath.Join(dir, "merges.txt"),
		Config: opt("config.json"), TokenizerConfig: opt("tokenizer_config.json"), AddedTokens: opt("added_tokens.json")}
}

// ImportHFFiles is ImportHF over files named one by one. The warnings say
// which optional file is absent and what the vocabulary then lacks (the
// converter would drop the same, and the head's specials with it).
func ImportHFFiles(f HFFiles, pre string) (*gguf.Metadata, []string, error) {
	md, err := importHF(f, pre)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	for _, o := range []struct{ path, name, lacks string }{
		{f.Config, "config.json", "vocab_size (no padding rows) and its BOS/EOS/PAD ids"},
		{f.TokenizerConfig, "tokenizer_config.json", "the added and special tokens it declares, BOS/EOS, add_bos/add_eos and the chat template"},
		{f.AddedTokens, "added_tokens.json", "the added tokens it lists"},
	} {
		if o.path == "" {
			warnings = append(warnings, fmt.Sprintf("no %s: the vocabulary lacks %s", o.name, o.lacks))
		}
	}
	return md, warnings, nil
}

func importHF(f HFFiles, pre string) (*gguf.Metadata, error) {
	dir := f.Dir
	if _, ok := bpePres[pre]; !ok {
		return nil, fmt.Errorf("unsupported pre-tokenizer %q (supported: %s)", pre, strings.Join(SupportedPre(), ", "))
	}
	vocab := map[string]int{}
	if err := readJSON(f.Vocab, &vocab); err != nil {
		return nil, err
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("%s: empty vocabulary", f.Vocab)
	}
	var cfg struct {
		VocabSize *int   `json:"vocab_size"`
		ModelType string `json:"model_type"`
		BOS       *int   `json:"bos_token_id"`
		EOS       *int   `json:"eos_token_id"`
		PAD       *int   `json:"pad_token_id"`
	}
	if err := readJSON(f.Config, &cfg); err != nil {
		return nil, err
	}
	var tc struct {
		Added map[string]struct {
			Content    string `json:"content"`
			Special    bool   `json:"special"`
			Normalized bool   `json:"normalized"`
		} `json:"added_tokens_decoder"`
		AddBOS       *bool           `json:"add_bos_token"`
		AddEOS       *bool           `json:"add_eos_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		UNK          json.RawMessage `json:"unk_token"`
		SEP          json.RawMessage `json:"sep_token"`
		PAD          json.RawMessage `json:"pad_token"`
	}
	if err := readJSON(f.TokenizerConfig, &tc); err != nil {
		return nil, err
	}
	addedJSON := map[string]int{}
	if err := readJSON(f.AddedTokens, &addedJSON); err != nil {
		return nil, err
	}

	// The added tokens, and whether each is special (control).
	added := map[int]string{}
	special := map[int]bool{}
	for k, a := range tc.Added {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("tokenizer_config.json: added_tokens_decoder key %q is not an id", k)
		}
		added[id], special[id] = a.Content, a.Special
	}
	for w, id := range addedJSON {
		if _, ok := added[id]; !ok && id >= 0 {
			added[id] = w
		}
	}
	byID := map[int]string{}
	maxID := -1
	for w, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocab.json: %q has negative id %d", w, id)
		}
		if prev, dup := byID[id]; dup {
			return nil, fmt.Errorf("vocab.json: id %d used by %q and %q", id, prev, w)
		}
		byID[id] = w
		maxID = max(maxID, id)
	}
	for id, w := range added {
		byID[id] = w
		maxID = max(maxID, id)
	}
	n := maxID + 1
	if cfg.VocabSize != nil {
		if *cfg.VocabSize <= maxID {
			return nil, fmt.Errorf("config.json: vocab_size %d but the tokenizer has id %d", *cfg.VocabSize, maxID)
		}
		n = *cfg.VocabSize
	}
	if n > 1<<24 {
		return nil, fmt.Errorf("vocabulary of %d tokens is implausibly large", n)
	}
	tokens := make([]string, n)
	types := make([]int32, n)
	for i := range n {
		w, ok := byID[i]
		switch {
		case !ok:
			tokens[i], types[i] = fmt.Sprintf("[PAD%d]", i), TypeUnused
		case added[i] != "" && added[i] == w:
			if special[i] || looksSpecial(w) {
				types[i] = TypeControl
			} else {
				w = strings.ReplaceAll(w, "\u2581", " ")
				types[i] = TypeUserDefined
			}
			tokens[i] = w
		default:
			tokens[i], types[i] = w, TypeNormal
		}
	}
	merges, err := readMerges(f.Merges)
	if err != nil {
		return nil, err
	}

	arch := cfg.ModelType
	if arch == "" {
		arch = map[string]string{"qwen2": "qwen2", "qwen35": "qwen35", "llama-bpe": "llama"}[pre]
	}
	if arch == "" {
		arch = "llama"
	}
	md := &gguf.Metadata{}
	md.Set(gguf.KeyArchitecture, gguf.String(arch))
	md.Set(gguf.KeyName, gguf.String(filepath.Base(filepath.Clean(dir))))
	md.Set(KeyModel, gguf.String("gpt2"))
	md.Set(KeyPre, gguf.String(pre))
	md.Set(KeyTokens, gguf.MustArray(tokens))
	md.Set(KeyTokenType, gguf.MustArray(types))
	md.Set(KeyMerges, gguf.MustArray(merges))

	// Special ids: tokenizer_config.json first, config.json for the rest,
	// as gguf.SpecialVocab does.
	toID := make(map[string]int, n)
	for i, w := range tokens {
		toID[w] = i
	}
	for _, s := range []struct {
		key  string
		text json.RawMessage
		id   *int
	}{{KeyBOS, tc.BOS, cfg.BOS}, {KeyEOS, tc.EOS, cfg.EOS}, {KeyUNK, tc.UNK, nil}, {KeySEP, tc.SEP, nil}, {KeyPAD, tc.PAD, cfg.PAD}} {
		id := -1
		if w := tokenText(s.text); w != "" {
			if i, ok := toID[w]; ok {
				id = i
			}
		}
		if id < 0 && s.id != nil && *s.id >= 0 && *s.id < n {
			id = *s.id
		}
		if id >= 0 {
			md.Set(s.key, gguf.Uint32(uint32(id)))
		}
	}
	if tc.AddBOS != nil {
		md.Set(KeyAddBOS, gguf.Bool(*tc.AddBOS))
	}
	if tc.AddEOS != nil {
		md.Set(KeyAddEOS, gguf.Bool(*tc.AddEOS))
	}
	var tmpl string
	if json.Unmarshal(tc.ChatTemplate, &tmpl) == nil && tmpl != "" {
		md.Set(KeyChatTemplate, gguf.String(tmpl))
	}
	if _, err := NewTokenizer(md); err != nil {
		return nil, fmt.Errorf("%s: the imported vocabulary does not load: %w", dir, err)
	}
	return md, nil
}

// looksSpecial is the converter's does_token_look_special: added tokens some
// models forget to mark special.
func looksSpecial(w string) bool {
	switch w {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return (strings.HasPrefix(w, "<|") && strings.HasSuffix(w, "|>")) ||
		(strings.HasPrefix(w, "<｜") && strings.HasSuffix(w, "｜>")) ||
		(strings.HasPrefix(w, "<unused") && strings.HasSuffix(w, ">"))
}

// tokenText reads a tokenizer_config.json special token: a string, an
// object with "content", or null.
func tokenText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// readJSON decodes a JSON file; an empty path (an absent optional file)
// leaves v alone.
func readJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readMerges reads merges.txt as gguf.SpecialVocab does: an optional first
// "#version" line, then one "left right" pair a line; malformed lines are
// skipped.
func readMerges(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var merges []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if first && strings.HasPrefix(line, "#") {
			first = false
			continue
		}
		first = false
		parts := strings.Fields(line)
		if len(parts) != 2 {
			continue
		}
		merges = append(merges, parts[0]+" "+parts[1])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(merges) == 0 {
		return nil, fmt.Errorf("%s: no merges", path)
	}
	return merges, nil
}
