package server

import "strings"

// The thinking block's tags.
const thinkOpen, thinkClose = "<think>", "</think>"

// thinkState is where a thinking split is in the reply.
type thinkState int

const (
	thinkLead        thinkState = iota // before anything: a <think> may open
	thinkStart                         // just after <think>: newlines dropped
	thinkIn                            // thinking, until </think>
	thinkAnswerStart                   // just after </think>: newlines dropped
	thinkAnswer                        // the answer, to the end
)

// thinking splits a reply, as it streams, into its thinking and its
// answer as llama-server 0.7.0 does with its default reasoning format
// (deepseek; server/testdata/llama-server-reasoning.txt): a reply that
// opens with <think> (after whitespace), or any reply to a prompt that
// opened the block itself (Qwen3's enable_thinking, Ling's
// bailing-think), is thinking up to </think> and answer after it; the
// newlines after either tag are dropped; the tags are not shown. A
// reply that does not open a block is all answer (its leading whitespace
// dropped), a </think> in it included. Text that may be the start of a tag is held back until the
// next piece tells.
type thinking struct {
	state thinkState
	held  string
}

// newThinking returns the split of a reply to prompt; open reports
// whether the prompt's end opened a thinking block already.
func newThinking(open bool) *thinking {
	if open {
		return &thinking{state: thinkIn}
	}
	return &thinking{}
}

// promptOpensThinking reports whether a rendered prompt ends inside an
// open thinking block: the reply starts with thinking.
func promptOpensThinking(prompt string) bool {
	return strings.HasSuffix(strings.TrimRight(prompt, "\n"), thinkOpen)
}

// Add takes the next piece of the reply and returns what of it (and of
// what was held) is thinking and what is answer.
func (t *thinking) Add(text string) (reasoning, content string) {
	s := t.held + text
	t.held = ""
	for s != "" {
		switch t.state {
		case thinkLead:
			lead := strings.TrimLeft(s, " \t\r\n")
			switch {
			case strings.HasPrefix(lead, thinkOpen):
				s, t.state = lead[len(thinkOpen):], thinkStart
			case strings.HasPrefix(thinkOpen, lead):
				t.held = s // whitespace, or the start of <think>
				return reasoning, content
			default:
				s, t.state = lead, thinkAnswer
			}
		case thinkStart, thinkAnswerStart:
			s = strings.TrimLeft(s, "\n")
			if s != "" {
				t.state++
			}
		case thinkIn:
			if i := strings.Index(s, thinkClose); i >= 0 {
				reasoning += s[:i]
				s, t.state = s[i+len(thinkClose):], thinkAnswerStart
				continue
			}
			keep := partialSuffix(s, thinkClose)
			reasoning += s[:len(s)-keep]
			t.held = s[len(s)-keep:]
			return reasoning, content
		case thinkAnswer:
			content += s
			s = ""
		}
	}
	return reasoning, content
}

// Flush returns what is still held at the end of the reply.
func (t *thinking) Flush() (reasoning, content string) {
	s := t.held
	t.held = ""
	if t.state == thinkIn {
		return s, ""
	}
	if t.state == thinkLead {
		return "", strings.TrimLeft(s, " \t\r\n")
	}
	return "", ""
}

// split runs the whole reply through t.
func (t *thinking) split(reply string) (reasoning, content string) {
	r, c := t.Add(reply)
	fr, fc := t.Flush()
	return r + fr, c + fc
}

// partialSuffix is the length of the longest end of s that is a proper
// start of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
