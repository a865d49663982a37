package vocabselect

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Code point flags, the same bits llama.cpp's unicode_cpt_flags packs: one
// general-category bit per code point, plus whitespace. Every code point
// inside a text has a non-zero value (unassigned ones are flagUndefined), so
// zero means "outside the fragment", which the splitters rely on exactly as
// llama.cpp's flags.as_uint() checks do.
const (
	flagUndefined  uint16 = 0x0001 // Cn and anything past U+10FFFF
	flagNumber     uint16 = 0x0002 // \p{N}
	flagLetter     uint16 = 0x0004 // \p{L}
	flagSeparator  uint16 = 0x0008 // \p{Z}
	flagMark       uint16 = 0x0010 // \p{M}
	flagPunct      uint16 = 0x0020 // \p{P}
	flagSymbol     uint16 = 0x0040 // \p{S}
	flagControl    uint16 = 0x0080 // \p{C} but Cn
	flagWhitespace uint16 = 0x0100

	categoryMask = flagUndefined | flagNumber | flagLetter | flagSeparator | flagMark | flagPunct | flagSymbol | flagControl
)

// maxCodepoint is one past the last code point with a table entry. Values
// past it (which decodeCpt, like llama.cpp's decoder, never gives) are
// flagUndefined like the unassigned ones.
const maxCodepoint = 0x110000

var (
	flagsOnce  sync.Once
	flagsTable []uint16
)

// categoryFlags maps Go's two-letter general categories to llama.cpp's flags
// (scripts/gen-unicode-data.py: Cc, Cf, Co and Cs are "control"; Cn stays
// undefined).
var categoryFlags = map[string]uint16{
	"Lu": flagLetter, "Ll": flagLetter, "Lt": flagLetter, "Lm": flagLetter, "Lo": flagLetter,
	"Mn": flagMark, "Mc": flagMark, "Me": flagMark,
	"Nd": flagNumber, "Nl": flagNumber, "No": flagNumber,
	"Pc": flagPunct, "Pd": flagPunct, "Ps": flagPunct, "Pe": flagPunct, "Pi": flagPunct, "Pf": flagPunct, "Po": flagPunct,
	"Sm": flagSymbol, "Sc": flagSymbol, "Sk": flagSymbol, "So": flagSymbol,
	"Zs": flagSeparator, "Zl": flagSeparator, "Zp": flagSeparator,
	"Cc": flagControl, "Cf": flagControl, "Co": flagControl, "Cs": flagControl,
}

// whitespaceRunes is llama.cpp's whitespace set (Unicode White_Space), which
// is not a general category.
var whitespaceRunes = []rune{
	0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
}

// buildFlags fills the flag table from Go's Unicode tables. A flat table
// costs 2.2 MB once and makes every lookup one load, which the splitters do
// for every code point of every text.
func buildFlags() {
	t := make([]uint16, maxCodepoint)
	for i := range t {
		t[i] = flagUndefined
	}
	for cat, f := range categoryFlags {
		tab := unicode.Categories[cat]
		for _, r := range tab.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c] = f
			}
		}
		for _, r := range tab.R32 {
			for c := r.Lo; c <= r.Hi; c += r.Stride {
				t[c] = f
			}
		}
	}
	for _, r := range unicode151 {
		for c := r.lo; c <= r.hi; c++ {
			if t[c] == flagUndefined {
				t[c] = r.flag
			}
		}
	}
	for _, r := range whitespaceRunes {
		t[r] |= flagWhitespace
	}
	flagsTable = t
}

// unicode151 are the characters Unicode 15.1 added, which llama.cpp's
// tables have and Go's unicode package (Unicode 15.0) lacks: ideographic
// description characters (So) and CJK Unified Ideographs Extension I (Lo).
var unicode151 = []struct {
	lo, hi rune
	flag   uint16
}{
	{0x2FFC, 0x2FFF, flagSymbol},
	{0x31EF, 0x31EF, flagSymbol},
	{0x2EBF0, 0x2EE5D, flagLetter},
}

// cptFlags returns the flags of one code point.
func cptFlags(c rune) uint16 {
	flagsOnce.Do(buildFlags)
	if uint32(c) < maxCodepoint {
		return flagsTable[c]
	}
	return flagUndefined
}

// flagsTab returns the flag table, for loops that look up many code points.
func flagsTab() []uint16 {
	flagsOnce.Do(buildFlags)
	return flagsTable
}

// decodeCpt decodes one code point the way llama.cpp's unicode_cpt_from_utf8
// does: an invalid sequence yields U+FFFD for its first byte alone, and it
// returns the code point and the number of bytes consumed. Overlong forms
// and values past U+10FFFF are invalid (llama.cpp took them until 2025);
// surrogates (ED A0..BF) are still taken.
func decodeCpt(s string, i int) (rune, int) {
	b0 := s[i]
	if b0 < 0x80 {
		return rune(b0), 1
	}
	n := len(s) - i
	switch {
	case b0 < 0xC2: // a continuation byte, or C0/C1: overlong
		return utf8.RuneError, 1
	case b0 < 0xE0:
		if n < 2 || s[i+1]&0xC0 != 0x80 {
			return utf8.RuneError, 1
		}
		return rune(b0&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case b0 < 0xF0:
		if n < 3 || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 || (b0 == 0xE0 && s[i+1] < 0xA0) {
			return utf8.RuneError, 1
		}
		return rune(b0&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case b0 < 0xF5:
		if n < 4 || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 || s[i+3]&0xC0 != 0x80 ||
			(b0 == 0xF0 && s[i+1] < 0x90) || (b0 == 0xF4 && s[i+1] >= 0x90) {
			return utf8.RuneError, 1
		}
		return rune(b0&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
	}
	return utf8.RuneError, 1
}

// appendCpt appends the UTF-8 form llama.cpp's unicode_cpt_to_utf8 gives a
// code point: no check for surrogates, and (where llama.cpp would throw) the
// 4-byte pattern for values past U+10FFFF.
func appendCpt(b []byte, c rune) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
	case c < 0x10000:
		return append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return append(b, 0xF0|byte(c>>18&0x07), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
}

// utf8Len is llama.cpp's unicode_len_utf8: the length a sequence claims from
// its first byte alone (continuation bytes count as 1). SPM and BPE split
// their symbols with it, not with a validating decoder.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// isCSpace is C's isspace in the "C" locale, which llama.cpp uses to strip
// text around tokens with the lstrip/rstrip attributes.
func isCSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// lowerCpt is unicode_tolower: the simple lowercase mapping of UnicodeData,
// which is what Go's unicode.ToLower applies.
func lowerCpt(c rune) rune {
	if c < 0x80 {
		if c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	if c > unicode.MaxRune || !caseBlocks[c>>8] {
		return c
	}
	return unicode.ToLower(c)
}

// caseBlocks marks the blocks of 256 code points where some code point has
// a lowercase mapping (a range of unicode.CaseRanges with a lowercase
// delta): elsewhere (CJK, kana, Hangul, ...) lowerCpt returns at once,
// where unicode.ToLower binary-searched its tables for every character of
// a Chinese text.
var caseBlocks = func() (b [(unicode.MaxRune + 1) >> 8]bool) {
	for _, r := range unicode.CaseRanges {
		if r.Delta[unicode.LowerCase] == 0 {
			continue
		}
		for blk := r.Lo >> 8; blk <= r.Hi>>8; blk++ {
			b[blk] = true
		}
	}
	return b
}()

var (
	nfdOnce sync.Once
	// nfdBMP is the first code point of the decomposition of each code
	// point of the BMP (itself when it has none, 0 when that is past the
	// BMP); nfdRest holds the others that decompose. A flat table makes the
	// lookup, done for every code point of a WordPiece text, one load.
	nfdBMP  []uint16
	nfdRest map[rune]rune
)

// nfdCpt is unicode_cpts_normalize_nfd for one code point: the first code
// point of its canonical decomposition (llama.cpp keeps only that one).
func nfdCpt(c rune) rune {
	if c < 0xC0 {
		return c // nothing below U+00C0 decomposes
	}
	nfdOnce.Do(buildNFD)
	if c < 0x10000 {
		if f := nfdBMP[c]; f != 0 {
			return rune(f)
		}
		return nfdRest[c] // 0: decomposes past the BMP (U+FA6C...)
	}
	if f, ok := nfdRest[c]; ok {
		return f
	}
	return c
}

// buildNFD fills the tables from x/text's NFD data: every code point whose
// decomposition starts with a different one. A block of 128 code points
// none of which decomposes (the check of a whole block is one quick pass)
// is skipped, and Hangul syllables decompose by Unicode's arithmetic: a
// first code point at a time took tens of milliseconds, paid by the first
// WordPiece Encode of a process.
func buildNFD() {
	nfdBMP = make([]uint16, 0x10000)
	for i := range nfdBMP {
		nfdBMP[i] = uint16(i)
	}
	nfdRest = map[rune]rune{}
	const (
		hangulFirst, hangulLast = 0xAC00, 0xD7A3
		leadFirst, perLead      = 0x1100, 21 * 28 // choseong, syllables per choseong
		block                   = 128
	)
	for r := rune(hangulFirst); r <= hangulLast; r++ {
		nfdBMP[r] = uint16(leadFirst + (r-hangulFirst)/perLead)
	}
	var buf [utf8.UTFMax]byte
	blk := make([]byte, 0, block*utf8.UTFMax)
	for lo := rune(0xC0); lo < 0x2FA20; lo += block {
		hi := min(lo+block, 0x2FA20)
		blk = blk[:0]
		for r := lo; r < hi; r++ {
			if (r < 0xD800 || r > 0xDFFF) && (r < hangulFirst || r > hangulLast) {
				blk = utf8.AppendRune(blk, r)
			}
		}
		if norm.NFD.IsNormal(blk) {
			continue
		}
		for r := lo; r < hi; r++ {
			if r >= hangulFirst && r <= hangulLast {
				continue
			}
			enc := buf[:utf8.EncodeRune(buf[:], r)]
			if len(norm.NFD.Properties(enc).Decomposition()) == 0 {
				continue
			}
			first, _ := utf8.DecodeRune(norm.NFD.Bytes(enc))
			switch {
			case first == r:
			case r < 0x10000 && first < 0x10000:
				nfdBMP[r] = uint16(first)
			case r < 0x10000:
				nfdBMP[r] = 0
				nfdRest[r] = first
			default:
				nfdRest[r] = first
			}
		}
	}
}

// gpt2Bytes is the GPT-2 byte-to-unicode table (unicode_byte_to_utf8_map):
// printable Latin-1 bytes map to themselves, the others to U+0100 onwards.
var gpt2Bytes = func() (t [256]string) {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			t[b] = string(rune(b))
		} else {
			t[b] = string(rune(256 + n))
			n++
		}
	}
	return t
}()

// gpt2Unbytes inverts gpt2Bytes for decoding byte-level BPE pieces: the
// byte of each character up to U+0143 that stands for one, else -1. A flat
// table, because every piece of a vocabulary is decoded at load.
var gpt2Unbytes = func() (t [0x144]int16) {
	for i := range t {
		t[i] = -1
	}
	for b, s := range gpt2Bytes {
		r, _ := utf8.DecodeRuneInString(s)
		t[r] = int16(b)
	}
	return t
}()
