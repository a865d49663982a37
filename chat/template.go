// Package chat renders conversations into prompts the way llama.cpp's
// built-in chat templates do (llama_chat_apply_template and
// llm_chat_detect_template in src/llama-chat.cpp): a model's
// tokenizer.chat_template text is matched to one of the known formats by
// marker strings, no Jinja engine involved, and each format is written out
// by code. On top of that it knows the thinking switches of Qwen3-style
// and Ling (bailing) templates and the stop strings that end a turn.
package chat

import (
	"fmt"
	"slices"
	"strings"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// render writes msgs in one format; addAssistant ends the prompt with the
// start of an assistant turn.
type render func(b *strings.Builder, msgs []Message, addAssistant bool)

// format is one built-in template: how it renders and the strings that
// end an assistant turn in it.
type format struct {
	render render
	stops  []string
}

// trim is llama-chat.cpp's trim: ASCII whitespace off both ends (isspace).
func trim(s string) string { return strings.Trim(s, " \t\n\v\f\r") }

// perRole renders every message as pre(role) + content + post, then gen
// for the assistant turn.
func perRole(pre func(role string) string, content func(string) string, post, gen string) render {
	return func(b *strings.Builder, msgs []Message, add bool) {
		for _, m := range msgs {
			b.WriteString(pre(m.Role))
			b.WriteString(content(m.Content))
			b.WriteString(post)
		}
		if add {
			b.WriteString(gen)
		}
	}
}

func same(s string) string { return s }

// byRole renders system, user and assistant messages with their own
// prefixes and suffixes (other roles as assistant ones, as llama.cpp's
// "else" branches do), then gen.
func byRole(sys, sysEnd, user, userEnd, asst, asstEnd, gen string) render {
	return func(b *strings.Builder, msgs []Message, add bool) {
		for _, m := range msgs {
			switch m.Role {
			case "system":
				b.WriteString(sys + m.Content + sysEnd)
			case "user":
				b.WriteString(user + m.Content + userEnd)
			default:
				b.WriteString(asst + m.Content + asstEnd)
			}
		}
		if add {
			b.WriteString(gen)
		}
	}
}

// mistral renders the v1, v3 and v3-tekken formats: turns wrapped in
// [INST] ... [/INST], system text joined to the next user turn.
func mistral(lead, trail string, trimAnswer bool) render {
	return func(b *strings.Builder, msgs []Message, _ bool) {
		inTurn := false
		for _, m := range msgs {
			if !inTurn {
				b.WriteString(lead + "[INST]" + trail)
				inTurn = true
			}
			switch m.Role {
			case "system":
				b.WriteString(m.Content + "\n\n")
			case "user":
				b.WriteString(m.Content + lead + "[/INST]")
			default:
				c := m.Content
				if trimAnswer {
					c = trim(c)
				}
				b.WriteString(trail + c + "</s>")
				inTurn = false
			}
		}
	}
}

// mistralV7 renders the v7 formats (sp: the space after each tag or none
// for tekken).
func mistralV7(sp string) render {
	return func(b *strings.Builder, msgs []Message, _ bool) {
		for _, m := range msgs {
			switch m.Role {
			case "system":
				b.WriteString("[SYSTEM_PROMPT]" + sp + m.Content + "[/SYSTEM_PROMPT]")
			case "user":
				b.WriteString("[INST]" + sp + m.Content + "[/INST]")
			default:
				b.WriteString(sp + m.Content + "</s>")
			}
		}
	}
}

// llama2 renders Llama 2's [INST] format: sys puts the system text in
// <<SYS>> tags (else it is a line of the first user turn), bos starts
// later turns with <s>, strip trims every message.
func llama2(sys, bos, strip bool) render {
	return func(b *strings.Builder, msgs []Message, _ bool) {
		inTurn := true
		b.WriteString("[INST] ")
		for _, m := range msgs {
			c := m.Content
			if strip {
				c = trim(c)
			}
			if !inTurn {
				inTurn = true
				if bos {
					b.WriteString("<s>")
				}
				b.WriteString("[INST] ")
			}
			switch m.Role {
			case "system":
				if sys {
					b.WriteString("<<SYS>>\n" + c + "\n<</SYS>>\n\n")
				} else {
					b.WriteString(c + "\n")
				}
			case "user":
				b.WriteString(c + " [/INST]")
			default:
				b.WriteString(c + "</s>")
				inTurn = false
			}
		}
	}
}

// gemma merges system text into the next user turn and calls the
// assistant "model"; every message is trimmed.
func gemma(b *strings.Builder, msgs []Message, add bool) {
	sys := ""
	for _, m := range msgs {
		if m.Role == "system" {
			sys += trim(m.Content)
			continue
		}
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		b.WriteString("<start_of_turn>" + role + "\n")
		if sys != "" && role != "model" {
			b.WriteString(sys + "\n\n")
			sys = ""
		}
		b.WriteString(trim(m.Content) + "<end_of_turn>\n")
	}
	if add {
		b.WriteString("<start_of_turn>model\n")
	}
}

// monarch starts every message but the first with <s>.
func monarch(b *strings.Builder, msgs []Message, add bool) {
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("<s>")
		}
		b.WriteString(m.Role + "\n" + m.Content + "</s>\n")
	}
	if add {
		b.WriteString("<s>assistant\n")
	}
}

// bailingRole is Ling's role tag: user is HUMAN, the others upper case.
func bailingRole(role string) string {
	if role == "user" {
		return "<role>HUMAN</role>"
	}
	return "<role>" + strings.ToUpper(role) + "</role>"
}

// bailing2 is Ling 2.0's format: turns end with <|role_end|>, and a
// conversation without a system turn gets "detailed thinking off".
func bailing2(b *strings.Builder, msgs []Message, add bool) {
	if len(msgs) == 0 || msgs[0].Role != "system" {
		b.WriteString("<role>SYSTEM</role>detailed thinking off<|role_end|>")
	}
	for _, m := range msgs {
		b.WriteString(bailingRole(m.Role) + m.Content + "<|role_end|>")
	}
	if add {
		b.WriteString("<role>ASSISTANT</role>")
	}
}

// formats are the supported templates by llama.cpp's name.
var formats = map[string]format{
	"chatml": {perRole(func(r string) string { return "<|im_start|>" + r + "\n" }, same, "<|im_end|>\n", "<|im_start|>assistant\n"),
		[]string{"<|im_end|>", "<|im_start|>"}},
	"llama2":            {llama2(false, false, false), []string{"</s>", "[INST]"}},
	"llama2-sys":        {llama2(true, false, false), []string{"</s>", "[INST]"}},
	"llama2-sys-bos":    {llama2(true, true, false), []string{"</s>", "[INST]"}},
	"llama2-sys-strip":  {llama2(true, false, true), []string{"</s>", "[INST]"}},
	"mistral-v1":        {mistral(" ", " ", false), []string{"</s>", "[INST]"}},
	"mistral-v3":        {mistral("", " ", true), []string{"</s>", "[INST]"}},
	"mistral-v3-tekken": {mistral("", "", false), []string{"</s>", "[INST]"}},
	"mistral-v7":        {mistralV7(" "), []string{"</s>", "[INST]"}},
	"mistral-v7-tekken": {mistralV7(""), []string{"</s>", "[INST]"}},
	"phi3": {perRole(func(r string) string { return "<|" + r + "|>\n" }, same, "<|end|>\n", "<|assistant|>\n"),
		[]string{"<|end|>", "<|user|>"}},
	"phi4": {perRole(func(r string) string { return "<|im_start|>" + r + "<|im_sep|>" }, same, "<|im_end|>", "<|im_start|>assistant<|im_sep|>"),
		[]string{"<|im_end|>", "<|im_start|>"}},
	"falcon3": {perRole(func(r string) string { return "<|" + r + "|>\n" }, same, "\n", "<|assistant|>\n"),
		[]string{"<|user|>"}},
	"zephyr": {perRole(func(r string) string { return "<|" + r + "|>\n" }, same, "<|endoftext|>\n", "<|assistant|>\n"),
		[]string{"<|endoftext|>", "<|user|>"}},
	"monarch": {monarch, []string{"</s>"}},
	"gemma":   {gemma, []string{"<end_of_turn>", "<start_of_turn>"}},
	"vicuna": {byRole("", "\n\n", "USER: ", "\n", "ASSISTANT: ", "</s>\n", "ASSISTANT:"),
		[]string{"</s>", "\nUSER:"}},
	"vicuna-orca": {byRole("SYSTEM: ", "\n", "USER: ", "\n", "ASSISTANT: ", "</s>\n", "ASSISTANT:"),
		[]string{"</s>", "\nUSER:"}},
	"deepseek": {byRole("", "", "### Instruction:\n", "\n", "### Response:\n", "\n<|EOT|>\n", "### Response:\n"),
		[]string{"<|EOT|>", "### Instruction:"}},
	"deepseek2": {byRole("", "\n\n", "User: ", "\n\n", "Assistant: ", "<｜end▁of▁sentence｜>", "Assistant:"),
		[]string{"<｜end▁of▁sentence｜>", "User:"}},
	"deepseek3": {byRole("", "\n\n", "<｜User｜>", "", "<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<｜Assistant｜>"),
		[]string{"<｜end▁of▁sentence｜>", "<｜User｜>"}},
	"llama3": {perRole(func(r string) string { return "<|start_header_id|>" + r + "<|end_header_id|>\n\n" }, trim, "<|eot_id|>",
		"<|start_header_id|>assistant<|end_header_id|>\n\n"), []string{"<|eot_id|>", "<|start_header_id|>"}},
	"llama4": {perRole(func(r string) string { return "<|header_start|>" + r + "<|header_end|>\n\n" }, trim, "<|eot|>",
		"<|header_start|>assistant<|header_end|>\n\n"), []string{"<|eot|>", "<|header_start|>"}},
	"bailing":       {perRole(bailingRole, same, "", "<role>ASSISTANT</role>"), []string{"<role>"}},
	"bailing-think": {perRole(bailingRole, same, "", "<role>ASSISTANT</role><think>"), []string{"<role>"}},
	"bailing2":      {bailing2, []string{"<|role_end|>", "<role>"}},
	"smolvlm": {func(b *strings.Builder, msgs []Message, add bool) {
		b.WriteString("<|im_start|>")
		byRole("", "\n\n", "User: ", "<end_of_utterance>\n", "Assistant: ", "<end_of_utterance>\n", "Assistant:")(b, msgs, add)
	}, []string{"<end_of_utterance>", "\nUser:"}},
}

// Names returns the supported template names, sorted.
func Names() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Apply renders msgs in the named template, as llama_chat_apply_template
// does for it; addAssistant ends the prompt with the start of an assistant
// turn.
func Apply(name string, msgs []Message, addAssistant bool) (string, error) {
	f, ok := formats[name]
	if !ok {
		return "", unsupported(name)
	}
	var b strings.Builder
	f.render(&b, msgs, addAssistant)
	return b.String(), nil
}

// unsupported is the error for a template name this package cannot render.
func unsupported(name string) error {
	return fmt.Errorf("chat template %q is not supported (supported: %s)", name, strings.Join(Names(), ", "))
}
