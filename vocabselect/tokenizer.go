package vocabselect

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/source"
)

// Metadata keys of the tokenizer, as llama.cpp's llama-arch.cpp names them.
const (
	KeyModel        = "tokenizer.ggml.model"
	KeyPre          = "tokenizer.ggml.pre"
	KeyTokens       = gguf.KeyTokens
	KeyScores       = "tokenizer.ggml.scores"
	KeyTokenType    = gguf.KeyTokenType
	KeyMerges       = "tokenizer.ggml.merges"
	KeyBOS          = "tokenizer.ggml.bos_token_id"
	KeyEOS          = "tokenizer.ggml.eos_token_id"
	KeyEOT          = "tokenizer.ggml.eot_token_id"
	KeyEOM          = "tokenizer.ggml.eom_token_id"
	KeyUNK          = "tokenizer.ggml.unknown_token_id"
	KeySEP          = "tokenizer.ggml.seperator_token_id" // sic: llama.cpp's spelling
	KeyPAD          = "tokenizer.ggml.padding_token_id"
	KeyMask         = "tokenizer.ggml.mask_token_id"
	KeyAddBOS       = "tokenizer.ggml.add_bos_token"
	KeyAddEOS       = "tokenizer.ggml.add_eos_token"
	KeyAddSEP       = "tokenizer.ggml.add_sep_token"
	KeyAddPrefix    = "tokenizer.ggml.add_space_prefix"
	KeyChatTemplate = "tokenizer.chat_template"
)

// Token types stored in tokenizer.ggml.token_type (llama_token_type).
const (
	TypeUndefined   int32 = 0
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// Token attributes (llama_token_attr): what the loader derives from the
// types, the auto-detection of special tokens and the per-model rules.
const (
	attrUnknown     uint16 = 1 << 0
	attrUnused      uint16 = 1 << 1
	attrNormal      uint16 = 1 << 2
	attrControl     uint16 = 1 << 3
	attrUserDefined uint16 = 1 << 4
	attrByte        uint16 = 1 << 5
	attrLstrip      uint16 = 1 << 7
	attrRstrip      uint16 = 1 << 8
)

// typeAttrs maps token types to the attribute llama.cpp starts them with.
var typeAttrs = map[int32]uint16{
	TypeUnknown: attrUnknown, TypeUnused: attrUnused, TypeNormal: attrNormal,
	TypeControl: attrControl, TypeUserDefined: attrUserDefined, TypeByte: attrByte,
}

type vocabKind int

const (
	kindSPM vocabKind = iota // tokenizer.ggml.model "llama"
	kindBPE                  // "gpt2"
	kindWPM                  // "bert"
)

// Tokenizer is a vocabulary and the algorithm llama.cpp runs on it. It is
// safe for concurrent use.
type Tokenizer struct {
	kind   vocabKind
	model  string // tokenizer.ggml.model
	pre    string // tokenizer.ggml.pre as given
	preTok *preTokenizer

	tokens []string
	scores []float32
	attrs  []uint16
	toID   map[string]int32
	maxLen int

	bos, eos, eot, eom, unk, sep, pad, mask int32
	fim                                     [6]int32 // pre, suf, mid, pad, rep, sep
	eog                                     map[int32]bool

	addBOS, addEOS, addSEP bool
	addSpacePrefix         bool
	ignoreMerges           bool
	cleanSpaces            bool
	lowercase, stripAccent bool

	special []int32  // control, user-defined and unknown tokens, longest first
	pieces  [][]byte // llama_token_to_piece(id, special=true) for every id

	byteTok [256]int32 // SPM byte fallback: <0xXX>, else the one-byte token, else -1
	bpe     *bpeModel
	spmOnce sync.Once
	spm     *spmModel // built by spmModel on first use
	block   int       // blockSize, or 0 to tokenize fragments whole
	wpmLens []uint64  // WordPiece: token lengths by first three bytes, see wpmLongest
	// wpmSpaceLens: lengths of the "▁"-initial tokens by the three bytes after it
	wpmSpaceLens []uint64
	// wpmShort: by first byte, bits 1 and 2 for the tokens of one and two
	// bytes; by the byte after "▁", bits 4 and 5 for the tokens of "▁" and
	// one or two bytes. wpmSpace: the token "▁", or -1.
	wpmShort [256]uint8
	wpmSpace int32

	sessions sync.Pool
}

// Load opens spec (a path, "-" or any source source.Open accepts), reads only
// its header and builds the tokenizer from its metadata.
func Load(ctx context.Context, spec string) (*Tokenizer, error) {
	src, err := source.Open(ctx, spec, source.Options{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	t, err := NewTokenizer(src.File().Metadata)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return t, nil
}

// bpePre describes one tokenizer.ggml.pre value: its passes and the flags
// llama.cpp's loader sets with it.
type bpePre struct {
	passes               []splitPass
	cleanSpaces          bool
	ignoreMerges, addBOS bool
	addSEP, noBOS        bool
}

// bpePres maps the tokenizer.ggml.pre values whose regexes are implemented to
// llama.cpp's settings for them (llama_vocab::impl::load).
var bpePres = func() map[string]bpePre {
	m := map[string]bpePre{}
	set := func(p bpePre, names ...string) {
		for _, n := range names {
			m[n] = p
		}
	}
	set(bpePre{passes: preDefault, cleanSpaces: true}, "default")
	set(bpePre{passes: preLlama3, cleanSpaces: true, ignoreMerges: true, addBOS: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")
	set(bpePre{passes: preLlama3, cleanSpaces: true}, "dbrx", "smaug-bpe")
	set(bpePre{passes: preLlama3, cleanSpaces: true, noBOS: true}, "glm4", "chatglm-bpe")
	set(bpePre{passes: preDSLLM}, "deepseek-llm")
	set(bpePre{passes: preDSCoder}, "deepseek-coder")
	set(bpePre{passes: preFalcon, cleanSpaces: true}, "falcon")
	set(bpePre{passes: preGPT2, cleanSpaces: true}, "mpt", "olmo", "jais",
		"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "exaone4")
	set(bpePre{passes: preGPT2, cleanSpaces: true, addSEP: true}, "jina-v1-en", "jina-v2-code", "roberta-bpe")
	set(bpePre{passes: preGPT2}, "trillion", "granite-docling")
	set(bpePre{passes: preStarcoder, cleanSpaces: true}, "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2")
	set(bpePre{passes: preStarcoder}, "command-r", "smollm")
	set(bpePre{passes: preQwen2}, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2")
	set(bpePre{passes: preQwen2, cleanSpaces: true}, "megrez", "stablelm2")
	set(bpePre{passes: preQwen35}, "qwen35")
	return m
}()

// SupportedPre returns the tokenizer.ggml.pre values a BPE vocabulary may
// name, sorted.
func SupportedPre() []string {
	names := make([]string, 0, len(bpePres))
	for n := range bpePres {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewTokenizer builds the tokenizer described by a GGUF's tokenizer.ggml.*
// metadata, following llama_vocab::impl::load: defaults per model type,
// the pre-tokenizer, special ids, the auto-detected end-of-generation and
// fill-in-the-middle tokens, and the special-token cache.
func NewTokenizer(md *gguf.Metadata) (*Tokenizer, error) {
	t := &Tokenizer{model: md.String(KeyModel), pre: md.String(KeyPre), block: blockSize}
	nul := int32(-1)
	t.eot, t.eom, t.sep, t.pad, t.mask = nul, nul, nul, nul, nul
	t.fim = [6]int32{nul, nul, nul, nul, nul, nul}
	switch t.model {
	case "llama":
		t.kind = kindSPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix, t.addBOS = true, true
	case "bert":
		t.kind = kindWPM
		t.bos, t.eos, t.unk, t.sep, t.pad, t.mask = 101, nul, 100, 102, 0, 103
		t.addBOS, t.addSEP, t.cleanSpaces = true, true, true
	case "gpt2":
		t.kind = kindBPE
		t.bos, t.eos, t.unk = 11, 11, nul
		pre := t.pre
		if pre == "" {
			pre = "default"
		}
		p, ok := bpePres[pre]
		if !ok {
			return nil, fmt.Errorf("unsupported pre-tokenizer %q (supported: %s)", t.pre, strings.Join(SupportedPre(), ", "))
		}
		t.preTok = &preTokenizer{name: pre, passes: p.passes}
		t.cleanSpaces, t.ignoreMerges, t.addBOS, t.addSEP = p.cleanSpaces, p.ignoreMerges, p.addBOS, p.addSEP
		if p.noBOS {
			t.bos = nul
		}
	case "":
		return nil, fmt.Errorf("no tokenizer: %s is missing", KeyModel)
	default:
		return nil, fmt.Errorf("unsupported tokenizer model %q (supported: llama, gpt2, bert)", t.model)
	}
	if v, ok := md.Get(KeyAddPrefix); ok {
		if b, ok := v.Bool(); ok {
			t.addSpacePrefix = b
		}
	}

	if err := t.loadTokens(md); err != nil {
		return nil, err
	}
	if t.kind == kindBPE {
		bm, err := newBPEModel(md, t)
		if err != nil {
			return nil, err
		}
		t.bpe = bm
	}
	if t.kind == kindWPM {
		t.buildWPMLens()
	}
	if err := t.loadSpecialIDs(md); err != nil {
		return nil, err
	}
	t.detectSpecials()
	t.buildCaches()
	t.applyModelAttrs(md)
	return t, nil
}

// loadTokens reads tokens, scores and types.
func (t *Tokenizer) loadTokens(md *gguf.Metadata) error {
	v, ok := md.Get(KeyTokens)
	if !ok {
		return fmt.Errorf("cannot find tokenizer vocab: %s is missing", KeyTokens)
	}
	toks, ok := v.Strings()
	if !ok {
		return fmt.Errorf("%s is a %s, want an array of strings", KeyTokens, v.TypeString())
	}
	n := len(toks)
	if n == 0 {
		return fmt.Errorf("%s is empty", KeyTokens)
	}
	if n > 1<<30 {
		return fmt.Errorf("%s has %d tokens, more than a tokenizer can index", KeyTokens, n)
	}
	t.scores = make([]float32, n)
	if sv, ok := md.Get(KeyScores); ok {
		switch {
		case sv.ElemType() == gguf.TypeFloat32 && sv.IsArray():
			s, _ := sv.Float32s()
			if len(s) < n {
				return fmt.Errorf("%s has %d entries for %d tokens", KeyScores, len(s), n)
			}
			copy(t.scores, s)
		case sv.ElemType() == gguf.TypeInt32 && sv.IsArray():
			s, _ := sv.Int32s()
			if len(s) < n {
				return fmt.Errorf("%s has %d entries for %d tokens", KeyScores, len(s), n)
			}
			for i := range t.scores {
				t.scores[i] = float32(s[i])
			}
		default:
			return fmt.Errorf("%s is a %s, want an array of f32 or i32", KeyScores, sv.TypeString())
		}
	}
	var types []int32
	if tv, ok := md.Get(KeyTokenType); ok {
		s, ok := tv.Int32s()
		if !ok {
			return fmt.Errorf("%s is a %s, want an array of i32", KeyTokenType, tv.TypeString())
		}
		if len(s) < n {
			return fmt.Errorf("%s has %d entries for %d tokens", KeyTokenType, len(s), n)
		}
		types = s
	}
	t.tokens = make([]string, n)
	t.attrs = make([]uint16, n)
	t.toID = make(map[string]int32, n)
	for i, w := range toks {
		if w == "" {
			w = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if j, dup := t.toID[w]; dup {
			return fmt.Errorf("duplicate token in vocabulary: %q has ids %d and %d", w, j, i)
		}
		t.toID[w] = int32(i)
		t.tokens[i] = w
		t.maxLen = max(t.maxLen, len(w))
		t.attrs[i] = attrNormal
		if types != nil {
			t.attrs[i] = typeAttrs[types[i]] // an undefined type has no attribute
		}
	}
	return nil
}

// specialKeys lists the keys of special ids in llama.cpp's order (later
// entries of the deprecated fim names override earlier ones, as there).
func (t *Tokenizer) specialKeys() []struct {
	key string
	id  *int32
} {
	return []struct {
		key string
		id  *int32
	}{
		{KeyBOS, &t.bos}, {KeyEOS, &t.eos}, {KeyEOT, &t.eot}, {KeyEOM, &t.eom},
		{KeyUNK, &t.unk}, {KeySEP, &t.sep}, {KeyPAD, &t.pad}, {KeyMask, &t.mask},
		{"tokenizer.ggml.fim_pre_token_id", &t.fim[0]}, {"tokenizer.ggml.fim_suf_token_id", &t.fim[1]},
		{"tokenizer.ggml.fim_mid_token_id", &t.fim[2]}, {"tokenizer.ggml.fim_pad_token_id", &t.fim[3]},
		{"tokenizer.ggml.fim_rep_token_id", &t.fim[4]}, {"tokenizer.ggml.fim_sep_token_id", &t.fim[5]},
		{"tokenizer.ggml.prefix_token_id", &t.fim[0]}, {"tokenizer.ggml.suffix_token_id", &t.fim[1]},
		{"tokenizer.ggml.middle_token_id", &t.fim[2]},
	}
}

// loadSpecialIDs reads special ids and the add_* flags. An id past the
// vocabulary keeps the default, and a default past it is disabled, as in
// llama.cpp.
func (t *Tokenizer) loadSpecialIDs(md *gguf.Metadata) error {
	n := int64(len(t.tokens))
	for _, s := range t.specialKeys() {
		if int64(*s.id) >= n {
			*s.id = -1
		}
		v, ok := md.Get(s.key)
		if !ok {
			continue
		}
		id, ok := v.Int()
		if !ok {
			return fmt.Errorf("%s is a %s, want an integer", s.key, v.TypeString())
		}
		if id >= 0 && id < n {
			*s.id = int32(id)
		}
	}
	for _, f := range []struct {
		key string
		b   *bool
	}{{KeyAddBOS, &t.addBOS}, {KeyAddEOS, &t.addEOS}, {KeyAddSEP, &t.addSEP}} {
		if v, ok := md.Get(f.key); ok {
			b, ok := v.Bool()
			if !ok {
				return fmt.Errorf("%s is a %s, want a bool", f.key, v.TypeString())
			}
			*f.b = b
		}
	}
	for _, c := range []struct {
		on   bool
		id   int32
		what string
	}{{t.addBOS, t.bos, "add_bos_token is true, but bos_token_id is not set"},
		{t.addEOS, t.eos, "add_eos_token is true, but eos_token_id is not set"},
		{t.addSEP, t.sep, "add_sep_token is true, but seperator_token_id is not set"}} {
		if c.on && c.id < 0 {
			return fmt.Errorf("%s", c.what)
		}
	}
	t.lowercase = true
	if v, ok := md.Get("tokenizer.ggml.normalizer.lowercase"); ok {
		if b, ok := v.Bool(); ok {
			t.lowercase = b
		}
	}
	t.stripAccent = t.lowercase
	if v, ok := md.Get("tokenizer.ggml.normalizer.strip_accents"); ok {
		if b, ok := v.Bool(); ok {
			t.stripAccent = b
		}
	}
	return nil
}

// Token texts llama.cpp recognizes as special by name (its auto-detection
// for files whose converter did not set the ids).
var (
	eotNames   = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomNames   = []string{"<|eom_id|>"}
	fimNames   = [6][]string{{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}, {"<|file_sep|>"}}
	eogNames   = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}
	renderedAs = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// detectSpecials finds EOT, EOM and FIM tokens by name when the file did not
// set them, marks them control, builds the end-of-generation set and applies
// llama.cpp's per-vocabulary fixes. llama.cpp walks an unordered_map here, so
// when several names match it takes whichever its hash order meets first;
// libstdc++ meets recently inserted (higher) ids first, so the highest id
// whose text is one of the names is the one picked.
func (t *Tokenizer) detectSpecials() {
	markControl := func(id int32) { t.attrs[id] |= attrControl }
	find := func(id *int32, names []string) {
		if *id >= 0 {
			return
		}
		for _, w := range names {
			if i, ok := t.toID[w]; ok && i > *id {
				*id = i
			}
		}
		if *id >= 0 {
			markControl(*id)
		}
	}
	find(&t.eot, eotNames)
	find(&t.eom, eomNames)
	for k := range t.fim {
		find(&t.fim[k], fimNames[k])
	}
	for i, w := range t.tokens {
		if t.attrs[i]&attrControl != 0 && strings.Contains(w, "unused") {
			t.attrs[i] |= attrUnused
		}
	}
	t.eog = map[int32]bool{}
	for _, id := range t.fim[3:] {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	for _, w := range eogNames {
		if i, ok := t.toID[w]; ok {
			t.eog[i] = true
			markControl(i)
		}
	}
	for _, w := range renderedAs {
		if i, ok := t.toID[w]; ok {
			t.attrs[i] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	// o200k_harmony and solar-open: "<|end|>" ends a message, not generation.
	if end, ok := t.toID["<|end|>"]; ok && t.eog[end] {
		has := func(w string) bool { id, ok := t.toID[w]; return ok && t.eog[id] }
		if (has("<|return|>") && (has("<|call|>") || has("<|calls|>"))) || (has("<|calls|>") && has("<|flush|>")) {
			delete(t.eog, end)
			t.attrs[end] = attrUserDefined
		}
	}
	// gemma4 and paddleocr: "</s>" is not an end of generation there.
	if s, ok := t.toID["</s>"]; ok && t.eog[s] {
		if tr, ok := t.toID["<|tool_response>"]; ok && t.eog[tr] {
			delete(t.eog, s)
			t.attrs[s] = attrNormal
		}
	}
}

// buildCaches builds the special-token cache (longest text first) and the
// piece of every token.
func (t *Tokenizer) buildCaches() {
	for i := range t.tokens {
		if t.attrs[i]&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(i))
		}
	}
	// llama.cpp uses std::sort (not stable) by length; equal lengths are
	// ordered by id here so that the order is at least deterministic.
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(t.tokens[t.special[a]]) > len(t.tokens[t.special[b]])
	})
	for b := 0; b < 256; b++ {
		t.byteTok[b] = -1
		if t.kind == kindSPM {
			if id, ok := t.toID[fmt.Sprintf("<0x%02X>", b)]; ok {
				t.byteTok[b] = id
			} else if id, ok := t.toID[string([]byte{byte(b)})]; ok {
				t.byteTok[b] = id
			}
		}
	}
	t.pieces = make([][]byte, len(t.tokens))
	for i := range t.tokens {
		t.pieces[i] = t.piece(int32(i))
	}
}

// spmModel returns the SentencePiece merge tables, building them once.
func (t *Tokenizer) spmModel() *spmModel {
	t.spmOnce.Do(func() { t.spm = newSPMModel(t) })
	return t.spm
}

// applyModelAttrs sets the lstrip/rstrip attributes llama.cpp gives some
// models by name, after the caches (as there: they only change matching).
func (t *Tokenizer) applyModelAttrs(md *gguf.Metadata) {
	name := strings.ToLower(md.String(gguf.KeyName))
	arch := md.String(gguf.KeyArchitecture)
	set := func(w string, attr uint16, on bool) {
		id, ok := t.toID[w]
		if !ok {
			return
		}
		if on {
			t.attrs[id] |= attr
		} else {
			t.attrs[id] &^= attr
		}
	}
	switch {
	case containsAny(t.pre, "jina-v2-de", "jina-v2-es", "jina-v2-code") || containsAny(arch, "nomic-bert-moe", "jina-bert-v3"):
		set("<mask>", attrLstrip, true)
	case containsAny(name, "phi-3", "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= attrRstrip
		}
		set("</s>", attrRstrip, true)
		for _, w := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(w, attrRstrip, false)
		}
	case containsAny(name, "modern-bert"):
		set("[MASK]", attrLstrip, true)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// NumTokens returns the vocabulary size.
func (t *Tokenizer) NumTokens() int { return len(t.tokens) }

// Model returns tokenizer.ggml.model ("llama", "gpt2" or "bert").
func (t *Tokenizer) Model() string { return t.model }

// Pre returns tokenizer.ggml.pre as the file gives it ("" when absent).
func (t *Tokenizer) Pre() string { return t.pre }

// BOS returns the beginning-of-sequence id, or -1.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence id, or -1.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn id, or -1.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.tokens) }

// IsEOG reports whether id ends generation (EOS, EOT, EOM and the tokens
// llama.cpp recognizes by name).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// IsControl reports whether id is a control token.
func (t *Tokenizer) IsControl(id int32) bool {
	return t.valid(id) && t.attrs[id]&attrControl != 0
}

// Piece returns the raw vocabulary string of id ("" when out of range).
func (t *Tokenizer) Piece(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.tokens[id]
}

// Specials returns, ascending, the ids a pruned head must keep: control,
// user-defined and unknown tokens (except control tokens llama.cpp marks
// unused, such as "<unused12>"), the named special ids and the
// end-of-generation set.
func (t *Tokenizer) Specials() []int32 {
	seen := map[int32]bool{}
	for i, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 && a&attrUnused == 0 {
			seen[int32(i)] = true
		}
	}
	named := append([]int32{t.bos, t.eos, t.eot, t.eom, t.unk, t.sep, t.pad, t.mask}, t.fim[:]...)
	for _, id := range named {
		if t.valid(id) {
			seen[id] = true
		}
	}
	for id := range t.eog {
		seen[id] = true
	}
	return sortedIDs(seen)
}

// sortedIDs returns the members of a set in ascending order.
func sortedIDs(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}
