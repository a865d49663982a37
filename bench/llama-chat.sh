#!/usr/bin/env bash
# Package chat against a real llama.cpp: llama_chat_apply_template for every
# built-in template on fixed conversations, llm_chat_detect_template on the
# template texts of chat/testdata/detect and on a Qwen3 vocab's own template,
# and that Qwen3 prompt tokenized (add_special, parse_special), through the
# harness bench/llama-chat.c.
#
# llama.cpp is found as bench/llama-logits.sh finds it (LLAMA_CPP_ROOT,
# LLAMA_CPP_INCLUDE, LLAMA_CPP_LIB, LLAMA_CPP_LOADER). The Qwen3 vocab is
# written by `gguf vocab import-hf` from ../shared/models/tokenizers/qwen2
# (vocab.json, merges.txt, qwen3-4b_tokenizer_config.json as
# tokenizer_config.json, qwen2-1.5b-instruct_config.json as config.json).
#
# Usage: bench/llama-chat.sh [--update]
#   --update  write the outputs to chat/testdata/llamacpp (else compare)
# Exit status: 0 same, 1 an output differs from the committed one, 2 llama.cpp
# or gcc missing.
set -euo pipefail
update=0
[ "${1:-}" = --update ] && update=1
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
[ -f "$linc/llama.h" ] || { echo "llama.cpp not found: no llama.h in $linc (set LLAMA_CPP_ROOT or LLAMA_CPP_INCLUDE)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "gcc not found: cannot build the llama.cpp harness" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I"$linc" -o "$tmp/llama-chat" "$root/bench/llama-chat.c" -L"$llib" -lllama -lggml -lm -Wl,--allow-shlib-undefined
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf)

tok=$root/../shared/models/tokenizers/qwen2
mkdir "$tmp/qwen3"
ln -s "$tok/vocab.json" "$tok/merges.txt" "$tmp/qwen3/"
ln -s "$tok/qwen3-4b_tokenizer_config.json" "$tmp/qwen3/tokenizer_config.json"
ln -s "$tok/qwen2-1.5b-instruct_config.json" "$tmp/qwen3/config.json"
"$tmp/gguf" vocab import-hf "$tmp/qwen3" --pre qwen2 -o "$tmp/qwen3-4b.gguf" >/dev/null

out=$tmp/out
mkdir "$out"
llama "$tmp/llama-chat" templates >"$out/templates.txt"
llama "$tmp/llama-chat" detect "$root"/chat/testdata/detect/*.jinja "$tmp/qwen3-4b.gguf" >"$out/detect.txt"
llama "$tmp/llama-chat" tokenize "$tmp/qwen3-4b.gguf" >"$out/qwen3-tokens.txt" 2>"$tmp/tokenize.log" ||
  { cat "$tmp/tokenize.log" >&2; exit 1; }

gold=$root/chat/testdata/llamacpp
if [ $update = 1 ]; then
  mkdir -p "$gold"
  cp "$out"/*.txt "$gold/"
  echo "wrote $(ls "$out" | tr '\n' ' ')to $gold"
  exit 0
fi
bad=0
for f in "$out"/*.txt; do
  if cmp -s "$f" "$gold/$(basename "$f")"; then
    echo "$(basename "$f"): same"
  else
    echo "$(basename "$f"): DIFFERENT from the committed file"
    bad=1
  fi
done
exit $bad
