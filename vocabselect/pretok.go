package vocabselect

// Pre-tokenizers: llama.cpp's unicode_regex_split, written as code.
//
// A pre-tokenizer is a list of passes; each pass refines the chunks the
// previous one left (a chunk is never merged with its neighbour). The passes
// llama.cpp runs as hand-written code (gpt2, llama3, qwen2, qwen35) are
// transcribed from those functions. The others it runs through std::regex
// over a "collapsed" text, where every code point of 128 and above is
// replaced by one byte for its category (letter, number, ...) or by \v for
// whitespace; they are written here as anchored matchers over the same
// classes, tried at every position as std::regex_iterator does.

// cpText is a text fragment decoded into code points.
type cpText struct {
	cps []rune
	fl  []uint16
	off []int32 // byte offset of each code point in the source; len(cps)+1 entries
	// exact reports that re-encoding the code points gives back the source
	// bytes (false when llama.cpp's decoder replaced some).
	exact bool
}

// decode fills t from s, reusing its buffers.
func (t *cpText) decode(s string) {
	n := len(s)
	if cap(t.cps) < n || cap(t.off) < n+1 {
		// Sized for the whole text at once: growing three slices by
		// appending costs more than the decoding.
		t.cps, t.fl, t.off = make([]rune, n), make([]uint16, n), make([]int32, n+1)
	}
	cps, fl, off := t.cps[:n], t.fl[:n], t.off[:n+1]
	tab := flagsTab()
	ascii := (*[128]uint16)(tab[:128])
	exact := true
	j := 0
	for i := 0; i < n; j++ {
		if s[i] < 0x80 {
			// A run of ASCII, filled by a loop the compiler can see stays
			// in bounds: most text is mostly ASCII.
			e := i + 1
			for e < n && s[e] < 0x80 {
				e++
			}
			run := s[i:e]
			c, f, o := cps[j:j+len(run)], fl[j:j+len(run)], off[j:j+len(run)]
			for k := 0; k < len(run); k++ {
				b := run[k]
				c[k], f[k], o[k] = rune(b), ascii[b&0x7F], int32(i+k)
			}
			i, j = e, j+len(run)-1
			continue
		}
		off[j] = int32(i)
		c, k := decodeCpt(s, i)
		// llama.cpp's decoder replaced an invalid byte; what it takes is
		// the shortest form, re-encoded as it is.
		if k == 1 {
			exact = false
		}
		f := flagUndefined
		if uint32(c) < maxCodepoint {
			f = tab[c]
		}
		cps[j], fl[j] = c, f
		i += k
	}
	off[j] = int32(n)
	t.cps, t.fl, t.off, t.exact = cps[:j], fl[:j], off[:j+1], exact
}

// outOfRange is the code point llama.cpp's splitters see past a chunk's end.
const outOfRange = rune(-1)

// splitPass refines the chunk [a, b) of t, appending the end of every
// sub-chunk to out.
type splitPass func(t *cpText, a, b int, out []int) []int

// chunkView gives a splitter llama.cpp's _get_cpt/_get_flags view of one
// chunk: positions past its end read as outOfRange with no flags.
type chunkView struct {
	cps  []rune
	fl   []uint16
	end  int
	prev int
	out  []int
}

func (v *chunkView) cpt(p int) rune {
	if p < v.end {
		return v.cps[p]
	}
	return outOfRange
}

func (v *chunkView) flags(p int) uint16 {
	if p < v.end {
		return v.fl[p]
	}
	return 0
}

// add ends a word at end and returns its length in code points.
func (v *chunkView) add(end int) int {
	n := end - v.prev
	if n > 0 {
		v.out = append(v.out, end)
	}
	v.prev = end
	return n
}

// spaces ends the word at pos, a run of nws whitespace code points:
// \s+(?!\S) keeps the last one for the next word unless the run ends the
// chunk, \s+ takes a single one; with nws == 0 (no rule matched) the word
// is the one code point at pos. It returns the new position.
func (v *chunkView) spaces(pos, nws int) int {
	switch {
	case nws > 1 && v.cpt(pos+nws) != outOfRange:
		pos += nws - 1
	case nws > 0:
		pos += nws
	default:
		pos++
	}
	v.add(pos)
	return pos
}

// contraction matches 's 't 'm 'd 're 've 'll at pos ('\” at pos is given)
// and returns its length, or 0. With fold, the letters are compared after
// unicode_tolower (the (?i:...) of the llama3-style regexes).
func (v *chunkView) contraction(pos int, fold bool) int {
	if pos+1 >= v.end {
		return 0
	}
	low := func(c rune) rune {
		if fold {
			return lowerCpt(c)
		}
		return c
	}
	c1 := low(v.cpt(pos + 1))
	if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
		return 2
	}
	if pos+2 < v.end {
		c2 := low(v.cpt(pos + 2))
		if (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l') {
			return 3
		}
	}
	return 0
}

// splitGPT2 is unicode_regex_split_custom_gpt2:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(t *cpText, a, b int, out []int) []int {
	v := chunkView{cps: t.cps, fl: t.fl, end: b, prev: a, out: out}
	for pos := a; pos < b; {
		cpt := v.cps[pos]
		f := v.fl[pos]
		if cpt == '\'' {
			if n := v.contraction(pos, false); n > 0 {
				pos += v.add(pos + n)
				continue
			}
		}
		f2 := f
		if cpt == ' ' {
			f2 = v.flags(pos + 1)
		}
		if f2&flagLetter != 0 {
			if cpt == ' ' {
				pos++
			}
			pos = runOf(v.fl[:b], pos+1, flagLetter)
			v.add(pos)
			continue
		}
		if f2&flagNumber != 0 {
			if cpt == ' ' {
				pos++
			}
			for f2&flagNumber != 0 {
				pos++
				f2 = v.flags(pos)
			}
			v.add(pos)
			continue
		}
		if f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
			if cpt == ' ' {
				pos++
			}
			for f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
				pos++
				f2 = v.flags(pos)
			}
			v.add(pos)
			continue
		}
		nws := 0
		for v.flags(pos+nws)&flagWhitespace != 0 {
			nws++
		}
		pos = v.spaces(pos, nws)
	}
	return v.out
}

// runOf returns the end of the run of code points from pos on that have
// one of the flags (fl ends at the chunk's end).
func runOf(fl []uint16, pos int, flags uint16) int {
	for pos < len(fl) && fl[pos]&flags != 0 {
		pos++
	}
	return pos
}

// llama3Style selects the variant of the llama3-family splitter.
type llama3Style int

const (
	styleLlama3 llama3Style = iota // \p{N}{1,3}
	styleQwen2                     // \p{N}
	styleQwen35                    // \p{N}, and [\p{L}\p{M}]+ for words
)

// splitLlama3 is unicode_regex_split_custom_llama3 and its qwen2 and qwen35
// siblings:
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(style llama3Style) splitPass {
	word := flagLetter
	if style == styleQwen35 {
		word |= flagMark
	}
	return func(t *cpText, a, b int, out []int) []int {
		v := chunkView{cps: t.cps, fl: t.fl, end: b, prev: a, out: out}
		for pos := a; pos < b; {
			cpt := v.cps[pos]
			f := v.fl[pos]
			if cpt == '\'' {
				if n := v.contraction(pos, true); n > 0 {
					pos += v.add(pos + n)
					continue
				}
			}
			// [^\r\n\p{L}\p{N}]?\p{L}+ (qwen35: [\p{L}\p{M}]+)
			if !(cpt == '\r' || cpt == '\n' || f&flagNumber != 0) {
				if f&word != 0 || v.flags(pos+1)&word != 0 {
					pos = runOf(v.fl[:b], pos+1, word)
					v.add(pos)
					continue
				}
			}
			if f&flagNumber != 0 {
				if style == styleLlama3 {
					ini := pos
					for v.flags(pos)&flagNumber != 0 {
						pos++
						if pos-ini >= 3 {
							v.add(pos)
							ini = pos
						}
					}
					v.add(pos)
				} else {
					pos++
					v.add(pos)
				}
				continue
			}
			// <space>?[^\s\p{L}\p{N}]+[\r\n]* (qwen35 also excludes \p{M})
			f2 := f
			if cpt == ' ' {
				f2 = v.flags(pos + 1)
			}
			stop := flagWhitespace | flagNumber | word
			if f2&stop == 0 && f != 0 {
				if cpt == ' ' {
					pos++
				}
				for f2&stop == 0 && f2 != 0 {
					pos++
					f2 = v.flags(pos)
				}
				for c := v.cpt(pos); c == '\r' || c == '\n'; c = v.cpt(pos) {
					pos++
				}
				v.add(pos)
				continue
			}
			nws, lastNL := 0, 0
			for v.flags(pos+nws)&flagWhitespace != 0 {
				if c := v.cpt(pos + nws); c == '\r' || c == '\n' {
					lastNL = pos + nws + 1
				}
				nws++
			}
			if lastNL > 0 { // \s*[\r\n]+
				pos = lastNL
				v.add(pos)
				continue
			}
			pos = v.spaces(pos, nws)
		}
		return v.out
	}
}

// Classes of the std::regex passes. In the collapsed text an ASCII code
// point stands for itself and any other one for its category, or \v when it
// is whitespace; the classes below are those of the collapsed regexes.

// isRegexSpace is \s: ASCII whitespace, or any code point the collapse (or
// the wide-regex path's substitution) turned into \v.
func isRegexSpace(c rune, f uint16) bool {
	if c < 0x80 {
		return c == ' ' || (c >= '\t' && c <= '\r')
	}
	return f&flagWhitespace != 0
}

// collapsedIs reports whether a code point of 128 or more collapses to the
// byte of category cat (it must not be whitespace, which collapses to \v).
func collapsedIs(f, cat uint16) bool {
	return f&flagWhitespace == 0 && f&categoryMask == cat
}

func isClassN(c rune, f uint16) bool { // \p{N}
	if c < 0x80 {
		return c >= '0' && c <= '9'
	}
	return collapsedIs(f, flagNumber)
}

func isClassL(c rune, f uint16) bool { // \p{L}
	if c < 0x80 {
		return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
	}
	return collapsedIs(f, flagLetter)
}

// asciiPunct is \p{P} below 128 as llama.cpp's collapse spells it:
// !-#%-*,-/:-;?-@[-]_{}
const asciiPunct = "!\"#%&'()*,-./:;?@[\\]_{}"

func isClassP(c rune, f uint16) bool { // \p{P}
	if c < 0x80 {
		return c >= 0 && indexByte(asciiPunct, byte(c))
	}
	return collapsedIs(f, flagPunct)
}

func indexByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

// classFunc tests one code point with its flags.
type classFunc func(c rune, f uint16) bool

// punctPlus is [\p{P}<extra>]+ where extra is a set of ASCII characters.
func punctPlus(extra string) classFunc {
	return func(c rune, f uint16) bool {
		return isClassP(c, f) || (c >= 0 && c < 0x80 && indexByte(extra, byte(c)))
	}
}

// rangeClass is a bracket expression of code point ranges matched by a
// wide regex (no categories), as pairs lo, hi. The BMP is looked up in a
// bitset built here: DeepSeek's letter class has some 150 ranges, and
// scanning them for every CJK character was most of the tokenizing time.
func rangeClass(r ...rune) classFunc {
	var bmp [0x10000 / 64]uint64
	for i := 0; i < len(r); i += 2 {
		for c := r[i]; c <= r[i+1] && c < 0x10000; c++ {
			bmp[c/64] |= 1 << (c % 64)
		}
	}
	return func(c rune, f uint16) bool {
		if c >= 0x80 && f&flagWhitespace != 0 {
			return false // the wide path replaces these with \v first
		}
		if c < 0x10000 {
			return c >= 0 && bmp[c/64]&(1<<(c%64)) != 0
		}
		for i := 0; i < len(r); i += 2 {
			if c >= r[i] && c <= r[i+1] {
				return true
			}
		}
		return false
	}
}

// matcher tries a regex anchored at p and returns the end of the match, or
// -1. None of the patterns can match the empty string.
type matcher func(t *cpText, p, b int) int

// skipMatcher is a matcher that know, after failing at p, the
// first later position that can match (so a scan stays linear).
type skipMatcher func(t *cpText, p, b int) (end, next int)

// searchPass runs a matcher the way unicode_regex_split_stl iterates
// std::regex matches: each match is a chunk, and so is each gap between.
func searchPass(m matcher) splitPass {
	return searchSkipping(func(t *cpText, p, b int) (int, int) { return m(t, p, b), p + 1 })
}

// searchSkipping is searchPass for a skipMatcher.
func searchSkipping(m skipMatcher) splitPass {
	return func(t *cpText, a, b int, out []int) []int {
		start := a
		for p := a; p < b; {
			e, next := m(t, p, b)
			if e < 0 {
				p = next
				continue
			}
			if p > start {
				out = append(out, p)
			}
			out = append(out, e)
			start, p = e, e
		}
		if start < b {
			out = append(out, b)
		}
		return out
	}
}

// one matches a single code point of class c.
func one(c classFunc) matcher {
	return func(t *cpText, p, b int) int {
		if c(t.cps[p], t.fl[p]) {
			return p + 1
		}
		return -1
	}
}

// run matches c+.
func run(c classFunc) matcher {
	return func(t *cpText, p, b int) int {
		e := p
		for e < b && c(t.cps[e], t.fl[e]) {
			e++
		}
		if e == p {
			return -1
		}
		return e
	}
}

// spaceRun matches \s?c+ (greedy: the optional space is taken when a run
// follows it; no class used with it contains \s).
func spaceRun(c classFunc) matcher {
	r := run(c)
	return func(t *cpText, p, b int) int {
		if isRegexSpace(t.cps[p], t.fl[p]) && p+1 < b {
			if e := r(t, p+1, b); e > 0 {
				return e
			}
		}
		return r(t, p, b)
	}
}

// trailingSpace matches \s+$: whitespace that runs to the end of the chunk.
// When the run stops short of the end, no position inside it can match.
func trailingSpace(t *cpText, p, b int) (int, int) {
	e := p
	for e < b && isRegexSpace(t.cps[e], t.fl[e]) {
		e++
	}
	if e == p || e != b {
		return -1, e + 1
	}
	return e, e
}

// threeDigits matches [0-9][0-9][0-9].
func threeDigits(t *cpText, p, b int) int {
	if p+3 > b {
		return -1
	}
	for i := p; i < p+3; i++ {
		if t.cps[i] < '0' || t.cps[i] > '9' {
			return -1
		}
	}
	return p + 3
}

// isCRLF is [\r\n].
func isCRLF(c rune, _ uint16) bool { return c == '\r' || c == '\n' }

// cjk is [一-龥ࠀ-一가-퟿] of the deepseek pre-tokenizers.
var cjk = rangeClass(0x4E00, 0x9FA5, 0x0800, 0x4E00, 0xAC00, 0xD7FF)

// deepseekLetters is the cased-letter class of deepseek-llm's
// \s?[A-Za-zµÀ-ÖØ-öø-ƺ...]+ (Unicode's Lu, Ll and Lt as DeepSeek listed them).
var deepseekLetters = rangeClass(deepseekLetterRanges...)

// deepseekLetterRanges are the ranges of deepseekLetters, as pairs lo, hi.
var deepseekLetterRanges = []rune{
	0x41, 0x5A, 0x61, 0x7A, 0xB5, 0xB5, 0xC0, 0xD6, 0xD8, 0xF6, 0xF8, 0x1BA, 0x1BC, 0x1BF, 0x1C4, 0x293,
	0x295, 0x2AF, 0x370, 0x373, 0x376, 0x377, 0x37B, 0x37D, 0x37F, 0x37F, 0x386, 0x386, 0x388, 0x38A,
	0x38C, 0x38C, 0x38E, 0x3A1, 0x3A3, 0x3F5, 0x3F7, 0x481, 0x48A, 0x52F, 0x531, 0x556, 0x10A0, 0x10C5,
	0x13A0, 0x13F5, 0x13F8, 0x13FD, 0x1C90, 0x1CBA, 0x1CBD, 0x1CBF, 0x1D00, 0x1D2B, 0x1D6B, 0x1D77,
	0x1D79, 0x1D9A, 0x1E00, 0x1F15, 0x1F18, 0x1F1D, 0x1F20, 0x1F45, 0x1F48, 0x1F4D, 0x1F50, 0x1F57,
	0x1F59, 0x1F59, 0x1F5B, 0x1F5B, 0x1F5D, 0x1F5D, 0x1F5F, 0x1F7D, 0x1F80, 0x1FB4, 0x1FB6, 0x1FBC,
	0x1FBE, 0x1FBE, 0x1FC2, 0x1FC4, 0x1FC6, 0x1FCC, 0x1FD0, 0x1FD3, 0x1FD6, 0x1FDB, 0x1FE0, 0x1FEC,
	0x1FF2, 0x1FF4, 0x1FF6, 0x1FFC, 0x2102, 0x2102, 0x2107, 0x2107, 0x210A, 0x2113, 0x2115, 0x2115,
	0x2119, 0x211D, 0x2124, 0x2124, 0x2126, 0x2126, 0x2128, 0x2128, 0x212A, 0x212D, 0x212F, 0x2134,
	0x2139, 0x2139, 0x213C, 0x213F, 0x2145, 0x2149, 0x214E, 0x214E, 0x2183, 0x2184, 0x2C00, 0x2C7B,
	0x2C7E, 0x2CE4, 0x2CEB, 0x2CEE, 0x2CF2, 0x2CF3, 0xA640, 0xA66D, 0xA680, 0xA69B, 0xA722, 0xA76F,
	0xA771, 0xA787, 0xA78B, 0xA78E, 0xAB70, 0xABBF, 0xFB00, 0xFB06, 0xFB13, 0xFB17, 0xFF21, 0xFF3A,
	0xFF41, 0xFF5A, 0x10400, 0x1044F, 0x104B0, 0x104D3, 0x104D8, 0x104FB, 0x10C80, 0x10CB2, 0x10CC0,
	0x10CF2, 0x118A0, 0x118DF, 0x1E900, 0x1E943,
}

// deepseekPunct is [!-/:-~！-／：-～‘-‟　-。] of deepseek-llm.
var deepseekPunct = rangeClass(0x21, 0x2F, 0x3A, 0x7E, 0xFF01, 0xFF0F, 0xFF1A, 0xFF5E, 0x2018, 0x201F, 0x3000, 0x3002)

// preTokenizer is one of llama.cpp's LLAMA_VOCAB_PRE_TYPE_* pass lists.
type preTokenizer struct {
	name   string
	passes []splitPass
}

var (
	preGPT2      = []splitPass{splitGPT2}
	preLlama3    = []splitPass{splitLlama3(styleLlama3)}
	preQwen2     = []splitPass{splitLlama3(styleQwen2)}
	preQwen35    = []splitPass{splitLlama3(styleQwen35)}
	preStarcoder = []splitPass{searchPass(one(isClassN)), splitGPT2}
	preFalcon    = []splitPass{searchPass(run(punctPlus("$+<=>^~|`"))), splitGPT2, searchPass(threeDigits)}
	preDefault   = []splitPass{searchPass(run(punctPlus("$+<=>^~|"))), splitGPT2, searchPass(run(isClassN)), searchPass(threeDigits)}
	preDSCoder   = []splitPass{searchPass(one(isCRLF)), searchPass(spaceRun(isClassL)), searchPass(spaceRun(isClassP)), searchPass(run(cjk)), searchPass(one(isClassN))}
	preDSLLM     = []splitPass{searchPass(one(isCRLF)), searchPass(spaceRun(deepseekLetters)), searchPass(spaceRun(deepseekPunct)), searchSkipping(trailingSpace), searchPass(run(cjk)), searchPass(run(isClassN))}
)

// split runs the passes over t and returns the end of every word (in code
// points), reusing ends and tmp.
func (p *preTokenizer) split(t *cpText, ends, tmp []int) ([]int, []int) {
	ends = append(ends[:0], len(t.cps))
	if len(t.cps) == 0 {
		return ends[:0], tmp
	}
	for _, pass := range p.passes {
		tmp = tmp[:0]
		a := 0
		for _, b := range ends {
			tmp = pass(t, a, b, tmp)
			a = b
		}
		ends, tmp = tmp, ends
	}
	return ends, tmp
}
