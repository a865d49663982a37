package chat

import (
	"errors"
	"fmt"
	"strings"
)

// Reasoning is the thinking mode asked of a template (llama-cli's
// --reasoning).
type Reasoning int

// The thinking modes. Auto renders exactly what llama_chat_apply_template
// renders; On and Off add the template's switch where it has one.
const (
	ReasoningAuto Reasoning = iota
	ReasoningOn
	ReasoningOff
)

// ParseReasoning reads "auto", "on" or "off".
func ParseReasoning(s string) (Reasoning, error) {
	switch s {
	case "auto":
		return ReasoningAuto, nil
	case "on":
		return ReasoningOn, nil
	case "off":
		return ReasoningOff, nil
	}
	return 0, fmt.Errorf("--reasoning must be auto, on or off, not %q", s)
}

// Template is a model's chat format: one of llama.cpp's built-in templates,
// chosen from the model's tokenizer.chat_template (or named by the user).
type Template struct {
	// Name is llama.cpp's name for the format ("chatml", "llama3", ...).
	Name string
	// qwenThink marks a chatml template with Qwen3's <think> blocks: its
	// generation prompt takes an empty block to switch thinking off, and
	// earlier answers keep only the text after their </think>.
	qwenThink bool
}

// New returns the template for spec: a built-in name or a Jinja template
// text (a model's tokenizer.chat_template), detected as llama.cpp does.
func New(spec string) (*Template, error) {
	if spec == "" {
		return nil, errors.New("the model has no tokenizer.chat_template; name one with --chat-template (" + strings.Join(Names(), ", ") + ")")
	}
	name := Detect(spec)
	if name == "" {
		return nil, errors.New("the chat template matches none of llama.cpp's built-in formats; name one with --chat-template (" + strings.Join(Names(), ", ") + ")")
	}
	if _, ok := formats[name]; !ok {
		return nil, unsupported(name)
	}
	return &Template{Name: name, qwenThink: name == "chatml" && strings.Contains(spec, "<think>")}, nil
}

// HasReasoning reports whether the template has a thinking switch
// (Qwen3-style chatml and the Ling templates).
func (t *Template) HasReasoning() bool {
	switch t.Name {
	case "bailing", "bailing-think", "bailing2":
		return true
	}
	return t.qwenThink
}

// String names the template, with its thinking style.
func (t *Template) String() string {
	if t.qwenThink {
		return t.Name + " (Qwen3 thinking)"
	}
	return t.Name
}

// Render writes the conversation as a prompt for the next assistant turn.
// With ReasoningAuto it is llama_chat_apply_template's text; On and Off
// use the template's switch: Qwen3's empty <think></think> block (what
// its Jinja template writes for enable_thinking=false) or an opened one,
// Ling's bailing-think generation prompt (<think>) or the plain one, Ling
// 2.0's "detailed thinking on/off" system turn when the conversation has
// none. Templates without a switch ignore it.
func (t *Template) Render(msgs []Message, r Reasoning) (string, error) {
	name := t.Name
	switch {
	case (name == "bailing" || name == "bailing-think") && r == ReasoningOn:
		name = "bailing-think"
	case (name == "bailing" || name == "bailing-think") && r == ReasoningOff:
		name = "bailing"
	case name == "bailing2" && r == ReasoningOn && (len(msgs) == 0 || msgs[0].Role != "system"):
		msgs = append([]Message{{Role: "system", Content: "detailed thinking on"}}, msgs...)
	}
	s, err := Apply(name, msgs, true)
	if err != nil {
		return "", err
	}
	if t.qwenThink {
		switch r {
		case ReasoningOn:
			s += "<think>\n"
		case ReasoningOff:
			s += "<think>\n\n</think>\n\n"
		}
	}
	return s, nil
}

// Answer returns what of a generated reply goes back into the conversation
// as the assistant's turn: for Qwen3-style templates the text after its
// last </think> without leading newlines, as Qwen3's template keeps
// earlier answers; the reply itself otherwise.
func (t *Template) Answer(reply string) string {
	if t.qwenThink {
		if i := strings.LastIndex(reply, "</think>"); i >= 0 {
			return strings.TrimLeft(reply[i+len("</think>"):], "\n")
		}
	}
	return reply
}

// Stops returns the strings that end an assistant turn in this format
// (its end-of-turn marker and the start of the next turn): generation
// stops when the text ends in one, also when the model spells a marker
// out instead of producing its token.
func (t *Template) Stops() []string { return formats[t.Name].stops }

// Stream cuts generated text at the first stop string, holding back the
// end of the text while it could still become one.
type Stream struct {
	stops   []string
	pending string
}

// NewStream returns a Stream for the stop strings stops.
func NewStream(stops []string) *Stream { return &Stream{stops: stops} }

// Add takes the next piece of generated text and returns the text that
// can be shown now; stopped reports that a stop string completed (out is
// then the text before it, and the rest is dropped).
func (s *Stream) Add(piece string) (out string, stopped bool) {
	s.pending += piece
	cut := -1
	for _, st := range s.stops {
		if i := strings.Index(s.pending, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out, s.pending = s.pending[:cut], ""
		return out, true
	}
	hold := 0
	for _, st := range s.stops {
		for n := min(len(st)-1, len(s.pending)); n > hold; n-- {
			if strings.HasSuffix(s.pending, st[:n]) {
				hold = n
				break
			}
		}
	}
	out, s.pending = s.pending[:len(s.pending)-hold], s.pending[len(s.pending)-hold:]
	return out, false
}

// Flush returns the text held back at the end of generation.
func (s *Stream) Flush() string {
	out := s.pending
	s.pending = ""
	return out
}
