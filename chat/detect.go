package chat

import "strings"

// builtinNames are the names llama.cpp 0.7.0's llama_chat_builtin_templates
// lists: a template argument equal to one of them selects it directly.
var builtinNames = []string{
	"bailing", "bailing-think", "bailing2", "chatglm3", "chatglm4", "chatml", "command-r", "deepseek",
	"deepseek-ocr", "deepseek2", "deepseek3", "exaone-moe", "exaone3", "exaone4", "falcon3", "gemma",
	"gigachat", "glmedge", "gpt-oss", "granite", "granite-4.0", "granite-4.1", "grok-2", "hunyuan-dense",
	"hunyuan-moe", "hunyuan-vl", "kimi-k2", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip",
	"llama3", "llama4", "megrez", "minicpm", "mistral-v1", "mistral-v3", "mistral-v3-tekken", "mistral-v7",
	"mistral-v7-tekken", "monarch", "openchat", "orion", "pangu-embedded", "phi3", "phi4", "rwkv-world",
	"seed_oss", "smolvlm", "solar-open", "vicuna", "vicuna-orca", "yandex", "zephyr",
}

// Detect returns the name of the built-in template llama.cpp's
// llm_chat_detect_template picks for tmpl: tmpl itself when it is a
// built-in name, else the first format whose marker strings a Jinja
// template text contains, checked in llama.cpp's order; "" when none
// matches. The name may be one this package recognizes but does not
// render (Apply then says so).
func Detect(tmpl string) string {
	for _, n := range builtinNames {
		if tmpl == n {
			return n
		}
	}
	has := func(s ...string) bool {
		for _, x := range s {
			if !strings.Contains(tmpl, x) {
				return false
			}
		}
		return true
	}
	switch {
	case has("<|im_start|>"):
		switch {
		case has("<|im_sep|>"):
			return "phi4"
		case has("<end_of_utterance>"):
			return "smolvlm" // <|im_start|> is its BOS, the turns are not chatml
		}
		return "chatml"
	case strings.HasPrefix(tmpl, "mistral") || has("[INST]"):
		switch {
		case has("[SYSTEM_PROMPT]"):
			return "mistral-v7"
		case has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]"):
			switch {
			case has(" [INST]"):
				return "mistral-v1"
			case has(`"[INST]"`):
				return "mistral-v3-tekken"
			}
			return "mistral-v3"
		case has("content.strip()"):
			return "llama2-sys-strip"
		case has("bos_token + '[INST]"):
			return "llama2-sys-bos"
		case has("<<SYS>>"):
			return "llama2-sys"
		}
		return "llama2"
	case has("<|assistant|>", "<|end|>"):
		return "phi3"
	case has("[gMASK]<sop>"):
		return "chatglm4"
	case has("<|assistant|>", "<|user|>"):
		if has("</s>") {
			return "falcon3"
		}
		return "glmedge"
	case has("<|{{ item['role'] }}|>", "<|begin_of_image|>"):
		return "glmedge"
	case has("<|user|>", "<|endoftext|>"):
		return "zephyr"
	case has("bos_token + message['role']"):
		return "monarch"
	case has("<start_of_turn>"):
		return "gemma"
	case has(`'\n\nAssistant: ' + eos_token`):
		return "orion"
	case has("GPT4 Correct "):
		return "openchat"
	case has("USER: ", "ASSISTANT: "):
		if has("SYSTEM: ") {
			return "vicuna-orca"
		}
		return "vicuna"
	case has("### Instruction:", "<|EOT|>"):
		return "deepseek"
	case has("<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"):
		return "command-r"
	case has("<|start_header_id|>", "<|end_header_id|>"):
		return "llama3"
	case has("[gMASK]sop"):
		return "chatglm3"
	case has("<用户>"):
		return "minicpm"
	case has("'Assistant: ' + message['content'] + eos_token"):
		return "deepseek2"
	case has("<｜Assistant｜>", "<｜User｜>", "<｜end▁of▁sentence｜>"):
		return "deepseek3"
	case has("[|system|]", "[|assistant|]", "[|endofturn|]"):
		if has("[|tool|]") {
			return "exaone4"
		}
		return "exaone3"
	case has("rwkv-world") || has(`{{- 'User: ' + message['content']|trim + '\n\n' -}}`):
		return "rwkv-world"
	case has("<|start_of_role|>"):
		return "granite"
	case has("message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"):
		return "gigachat"
	case has("<|role_start|>"):
		return "megrez"
	case has(" Ассистент:"):
		return "yandex"
	case has("<role>ASSISTANT</role>") && (has("'HUMAN'") || has(`"HUMAN"`)):
		if has("<think>") {
			return "bailing-think"
		}
		return "bailing"
	case has("<role>HUMAN</role>", "<|role_end|>"):
		return "bailing2"
	case has("<|header_start|>", "<|header_end|>"):
		return "llama4"
	}
	return ""
}
