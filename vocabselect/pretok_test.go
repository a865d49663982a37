package vocabselect

import (
	"slices"
	"testing"
)

// splitWords runs a pre-tokenizer and returns its words.
func splitWords(passes []splitPass, s string) []string {
	var t cpText
	t.decode(s)
	p := &preTokenizer{passes: passes}
	ends, _ := p.split(&t, nil, nil)
	var words []string
	a := 0
	for _, b := range ends {
		words = append(words, s[t.off[a]:t.off[b]])
		a = b
	}
	return words
}

// TestPreTokenizers checks each splitter on cases worked out by hand from
// the regexes llama.cpp lists for them (and, for the coded ones, from its
// code where the two could differ).
func TestPreTokenizers(t *testing.T) {
	cases := []struct {
		name   string
		passes []splitPass
		in     string
		want   []string
	}{
		{"gpt2", preGPT2, "Hello world", []string{"Hello", " world"}},
		{"gpt2", preGPT2, "I'm here", []string{"I", "'m", " here"}},
		{"gpt2", preGPT2, "'S", []string{"'", "S"}},
		{"gpt2", preGPT2, "a  b", []string{"a", " ", " b"}},
		{"gpt2", preGPT2, "a   ", []string{"a", "   "}},
		{"gpt2", preGPT2, "x\n\ny", []string{"x", "\n", "\n", "y"}},
		{"gpt2", preGPT2, "123abc 42!!", []string{"123", "abc", " 42", "!!"}},
		{"gpt2", preGPT2, "naïve 世界", []string{"naïve", " 世界"}},
		{"llama3", preLlama3, "'S it's", []string{"'S", " it", "'s"}},
		{"llama3", preLlama3, "12345", []string{"123", "45"}},
		{"llama3", preLlama3, "Hello, world!\n\n", []string{"Hello", ",", " world", "!\n\n"}},
		{"llama3", preLlama3, " ,x", []string{" ,", "x"}},
		{"llama3", preLlama3, "\tword", []string{"\tword"}},
		{"llama3", preLlama3, "a \n b", []string{"a", " \n", " b"}},
		{"llama3", preLlama3, "x   y", []string{"x", "  ", " y"}},
		{"qwen2", preQwen2, "12345", []string{"1", "2", "3", "4", "5"}},
		{"qwen2", preQwen2, "re\u0301sume\u0301", []string{"re", "\u0301sume", "\u0301"}},
		{"qwen35", preQwen35, "re\u0301sume\u0301", []string{"re\u0301sume\u0301"}},
		{"qwen35", preQwen35, "a\u0301\u0301 1", []string{"a\u0301\u0301", " ", "1"}},
		{"starcoder", preStarcoder, "abc123", []string{"abc", "1", "2", "3"}},
		{"falcon", preFalcon, "x+=1234", []string{"x", "+=", "123", "4"}},
		{"default", preDefault, "a...b 2024", []string{"a", "...", "b", " ", "202", "4"}},
		{"deepseek-coder", preDSCoder, "Hello 世界\n123", []string{"Hello", " ", "世界", "\n", "1", "2", "3"}},
		{"deepseek-llm", preDSLLM, "Hello  world  ", []string{"Hello", " ", " world", "  "}},
		// [!-/:-~] of the punctuation pass spans the ASCII letters, so it
		// splits a word that mixes them with other letters.
		{"deepseek-llm", preDSLLM, "Ωmega！？ 你好", []string{"Ω", "mega", "！？", " ", "你好"}},
	}
	for _, c := range cases {
		if got := splitWords(c.passes, c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %q want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestInvalidUTF8 checks llama.cpp's decoding of invalid UTF-8: U+FFFD for
// each byte of an invalid sequence, overlong forms and values past U+10FFFF
// included; surrogates are taken as they are.
func TestInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  []rune
		exact bool
	}{
		{"a\xffb\xc0\x80\xe2\x96", []rune{'a', 0xFFFD, 'b', 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}, false},
		{"\xc1\x81\xe0\x9f\xbf", []rune{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}, false},
		{"\xf0\x8f\xbf\xbf\xf4\x90\x80\x80\xf5\x80", []rune{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}, false},
		{"\xed\xa0\x80\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", []rune{0xD800, 0x80, 0x800, 0x10000, 0x10FFFF}, true},
	} {
		var ct cpText
		ct.decode(c.in)
		if !slices.Equal(ct.cps, c.want) || ct.exact != c.exact {
			t.Errorf("%q: got %U exact=%v, want %U exact=%v", c.in, ct.cps, ct.exact, c.want, c.exact)
		}
	}
	if got := string(appendCpt(nil, 0x1FFFFF)); got != "\xf7\xbf\xbf\xbf" {
		t.Fatalf("appendCpt past U+10FFFF: %q", got)
	}
}

// TestUnicodeFlags spot-checks the flag table against values in llama.cpp's
// unicode-data.cpp.
func TestUnicodeFlags(t *testing.T) {
	for _, c := range []struct {
		r    rune
		want uint16
	}{
		{0x00, flagControl}, {0x09, flagControl | flagWhitespace}, {' ', flagSeparator | flagWhitespace},
		{'$', flagSymbol}, {'_', flagPunct}, {'~', flagSymbol}, {0x7F, flagControl},
		{0xA0, flagSeparator | flagWhitespace}, {0xAA, flagLetter}, {0xAD, flagControl}, {0xB2, flagNumber},
		{0x300, flagMark}, {0x378, flagUndefined}, {0x85, flagControl | flagWhitespace},
		{0x0CF3, flagMark}, {0x3000, flagSeparator | flagWhitespace}, {0x4E00, flagLetter},
		{0x1F600, flagSymbol}, {0xE000, flagControl}, {0x2FFC, flagSymbol}, {0x31EF, flagSymbol},
		{0x2EBF0, flagLetter}, {0x2EE5D, flagLetter}, {0x2EE5E, flagUndefined}, {0x10FFFF, flagUndefined}, {0x110000, flagUndefined},
	} {
		if got := cptFlags(c.r); got != c.want {
			t.Errorf("U+%04X: flags %#x want %#x", c.r, got, c.want)
		}
	}
	if nfdCpt('é') != 'e' || nfdCpt('가') != 0x1100 || nfdCpt(0x2126) != 0x3A9 || nfdCpt('a') != 'a' {
		t.Fatal("NFD first code point")
	}
}

// TestRangeClass checks the bitset of rangeClass against the ranges it is
// built from, for every code point, with DeepSeek's letter class and a
// class reaching past the BMP; whitespace past ASCII is never in a class.
func TestRangeClass(t *testing.T) {
	for _, ranges := range [][]rune{deepseekLetterRanges, {0x41, 0x5A, 0xFFF0, 0x10010, 0x1E900, 0x1E943}} {
		class := rangeClass(ranges...)
		for c := rune(0); c < maxCodepoint; c++ {
			want := false
			for i := 0; i < len(ranges); i += 2 {
				want = want || (c >= ranges[i] && c <= ranges[i+1])
			}
			if got := class(c, cptFlags(c)&^flagWhitespace); got != want {
				t.Fatalf("U+%04X: got %v, want %v", c, got, want)
			}
		}
		if class(0x3000, flagWhitespace|flagSeparator) {
			t.Fatal("U+3000 (whitespace) is in a range class")
		}
	}
}
