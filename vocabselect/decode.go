package vocabselect

import (
	"fmt"
	"strconv"
	"strings"
)

// piece is llama_token_to_piece(id, special=true), computed once per token
// at load as llama.cpp caches it.
func (t *Tokenizer) piece(id int32) []byte {
	text := t.tokens[id]
	attr := t.attrs[id]
	switch {
	case attr&(attrUnknown|attrControl|attrUserDefined) != 0:
		return []byte(text)
	case attr&attrNormal != 0:
		if t.kind == kindBPE {
			return decodeByteLevel(text)
		}
		return []byte(strings.ReplaceAll(text, "\u2581", " "))
	case attr&attrByte != 0:
		return []byte{hexByte(text)}
	}
	return nil
}

// hexByte reads the byte of a "<0xXX>" token as llama.cpp's token_to_byte
// does (strtol of the two characters after "<0x").
func hexByte(text string) byte {
	if len(text) < 5 {
		return 0
	}
	v, err := strconv.ParseUint(text[3:5], 16, 8)
	if err != nil {
		// strtol stops at the first non-hex digit.
		v, _ = strconv.ParseUint(text[3:4], 16, 8)
	}
	return byte(v)
}

// decodeByteLevel maps a byte-level BPE token back to bytes (llama_decode_text).
// A character outside the GPT-2 byte table is spelled out as llama.cpp does.
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		c, n := decodeCpt(text, i)
		i += n
		if c >= 0 && int(c) < len(gpt2Unbytes) && gpt2Unbytes[c] >= 0 {
			out = append(out, byte(gpt2Unbytes[c]))
			continue
		}
		enc := appendCpt(nil, c)
		out = append(out, "[UNK_BYTE_0x"...)
		for _, b := range enc {
			out = fmt.Appendf(out, "%02x", b)
		}
		out = append(out, text...)
		out = append(out, ']')
	}
	return out
}

// TokenToPiece returns the bytes id stands for (llama_token_to_piece with no
// lstrip): "▁" becomes a space in SentencePiece and WordPiece vocabularies,
// <0xXX> byte tokens their byte, byte-level BPE tokens their bytes. Control
// and unknown tokens give their text only with special, else nothing.
func (t *Tokenizer) TokenToPiece(id int32, special bool) []byte {
	if !t.valid(id) {
		return nil
	}
	if !special && t.attrs[id]&(attrUnknown|attrControl) != 0 {
		return nil
	}
	return t.pieces[id]
}

// Decode turns ids back into text the way llama.cpp's common_detokenize does
// by default: control tokens render as nothing, the leading space that
// SentencePiece encoding added is removed, and vocabularies with
// clean_spaces tidy spaces before punctuation.
func (t *Tokenizer) Decode(ids []int32) string {
	return t.Detokenize(ids, false, false)
}

// Detokenize is llama_detokenize: removeSpecial drops a leading BOS and a
// trailing EOS the model adds itself; unparseSpecial renders control tokens.
func (t *Tokenizer) Detokenize(ids []int32, removeSpecial, unparseSpecial bool) string {
	removeSpace := t.addSpacePrefix
	if removeSpecial && t.addBOS && len(ids) > 0 && ids[0] == t.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if removeSpecial && t.addEOS && len(ids) > 0 && ids[len(ids)-1] == t.eos {
		ids = ids[:len(ids)-1]
	}
	var b []byte
	for _, id := range ids {
		p := t.TokenToPiece(id, unparseSpecial)
		if removeSpace && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		removeSpace = false
		b = append(b, p...)
	}
	if t.cleanSpaces {
		b = cleanSpaces(b)
	}
	return string(b)
}

// cleanSpaces is llama_detokenize's clean_up_tokenization_spaces: three
// passes that remove the space before ?!., and in " 's", " 'm", " 're",
// " 've", and the spaces around a lone apostrophe.
func cleanSpaces(text []byte) []byte {
	if len(text) == 0 {
		return text
	}
	// " ?", " !", " .", " ,"
	out := text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			out = out[:len(out)-1]
		}
		out = append(out, x)
	}
	text = out
	// " ' " -> "'"
	out = text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if x == '\'' && i+1 < len(text) && text[i-1] == ' ' && text[i+1] == ' ' {
			out = append(out[:len(out)-1], x)
			i++ // the space after it is dropped too
			continue
		}
		out = append(out, x)
	}
	text = out
	// " 's", " 'm", " 're", " 've"
	out = text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if text[i-1] == ' ' && x == '\'' && i+1 < len(text) {
			x1 := text[i+1]
			if x1 == 's' || x1 == 'm' {
				out = out[:len(out)-1]
			} else if x1 != 't' && x1 != 'd' && i+2 < len(text) {
				x2 := text[i+2]
				if (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e') {
					out = out[:len(out)-1]
				}
			}
		}
		out = append(out, x)
	}
	return out
}
