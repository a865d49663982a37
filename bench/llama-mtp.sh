#!/usr/bin/env bash
# The engine's MTP (NextN) block against libllama's MTP context: on the
# generated qwen35 and qwen35moe with an MTP block (crosscheck shapes
# qwen35mtp and qwen35moemtp, F32 and Q8_0), bench/llama-mtp.c mirrors the
# crosscheck prompt into llama.cpp's LLAMA_CONTEXT_TYPE_MTP context as draft-mtp does and writes the block's
# logits for token 17 at the next position; enginelogits -mtp computes ours
# (engine.MTPLogits) and prints the max |diff| and whether the argmax
# agrees. llama.cpp is found as bench/llama-logits.sh finds it
# (bench/lcpp-env.sh).
#
# Usage: bench/llama-mtp.sh [--update]
#   --update   write llama.cpp's logits to engine/testdata/llamacpp/TAG.mtp.f32
#              (go test ./engine -run MTPLlamaCpp compares with them)
set -euo pipefail
update=0
[ "${1:-}" = --update ] && update=1
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lcpp_harness "$root/bench/llama-mtp.c" "$tmp/llama-mtp"
(cd "$root" && go build -o "$tmp/enginelogits" ./bench/enginelogits)
"$tmp/enginelogits" -gen "$tmp/models" -match '^qwen35(moe)?mtp-'
ids="1 21 89 220 27 496 25 316" # crosscheck.PromptIDs
next=17
gold=$root/engine/testdata/llamacpp
for tag in qwen35mtp-F32 qwen35mtp-Q8_0 qwen35moemtp-F32 qwen35moemtp-Q8_0; do
  llama "$tmp/llama-mtp" "$tmp/models/$tag.gguf" -i "${ids// /,}" -n $next -o "$tmp/$tag.f32"
  echo "$tag: $("$tmp/enginelogits" -m "$tmp/models/$tag.gguf" -ids "$ids" -mtp $next -ref "$tmp/$tag.f32" | tail -1)"
  [ $update = 1 ] && cp "$tmp/$tag.f32" "$gold/$tag.mtp.f32"
done
