#!/usr/bin/env bash
# The engine's KV cache types against a real llama.cpp run with the same
# cache types: for the F32 files of qwen3, qwen35 and bailingmoe2 (package
# bench/crosscheck), each of the cache pairs below, llama.cpp's logits of
# the crosscheck prompt (TAG-K-V.f32) and its perplexity over eval.txt
# (--ctx 128) through bench/llama-logits.c, and ours through enginelogits
# and gguf perplexity. A q8_0 V cache runs only with flash attention in
# llama.cpp (its V is then not transposed), so those pairs use -fa on; the
# others are computed without it, as the F32 references are.
#
# Usage: bench/llama-kvtypes.sh [--update]
#   --update   write the logits and engine/testdata/llamacpp/kvtypes.txt
# Then go test ./engine -run KVTypes checks them. llama.cpp is found as in
# bench/llama-logits.sh (bench/lcpp-env.sh).
set -euo pipefail
update=0
[ "${1:-}" = --update ] && update=1
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lcpp_harness "$root/bench/llama-logits.c" "$tmp/llama-logits"
(cd "$root" && go build -o "$tmp/enginelogits" ./bench/enginelogits && go build -o "$tmp/gguf" ./cmd/gguf)
"$tmp/enginelogits" -gen "$tmp/models" -match '^(qwen3|qwen35|bailingmoe2)-F32$'
prompt=$("$tmp/enginelogits" -print-prompt)
gold=$root/engine/testdata/llamacpp
tab=$tmp/kvtypes.txt
fmt="%-24s %-3s %9s %6s | %10s %10s %9s | %10s %9s\n"
printf "$fmt" case fa max-diff argmax llama-ppl our-ppl ppl-rel f32-ppl vs-f32
for m in qwen3 qwen35 bailingmoe2; do
  f=$tmp/models/$m-F32.gguf
  f32ppl=$("$tmp/gguf" perplexity "$f" -f "$tmp/models/eval.txt" --ctx 128 -ctk f32 -ctv f32 2>/dev/null | sed -n 's/.*PPL = \([^ ]*\).*/\1/p')
  for kv in f16:f16 q8_0:f16 q8_0:q8_0; do
    k=${kv%:*} v=${kv#*:} fa=off
    [ "$v" = q8_0 ] && fa=on
    tag=$m-F32-$k-$v
    out=$(llama "$tmp/llama-logits" "$f" -p "$prompt" -o "$tmp/llama.f32" -f "$tmp/models/eval.txt" --ctx 128 -ctk "$k" -ctv "$v" -fa "$fa")
    ids=$(sed -n 's/^tokens: //p' <<<"$out")
    lppl=$(sed -n 's/^ppl: \([^ ]*\).*/\1/p' <<<"$out")
    cmp=$("$tmp/enginelogits" -m "$f" -ids "$ids" -ref "$tmp/llama.f32" -ctk "$k" -ctv "$v" | tail -1)
    oppl=$("$tmp/gguf" perplexity "$f" -f "$tmp/models/eval.txt" --ctx 128 -ctk "$k" -ctv "$v" 2>/dev/null | sed -n 's/.*PPL = \([^ ]*\).*/\1/p')
    echo "$tag $k $v $fa $lppl" >>"$tab"
    [ $update = 1 ] && cp "$tmp/llama.f32" "$gold/$tag.f32"
    md=$(sed -n 's/^max=\([^ ]*\).*/\1/p' <<<"$cmp")
    am=$(sed -n 's/.*argmax=\([^ ]*\).*/\1/p' <<<"$cmp")
    rel=$(awk -v a="$lppl" -v b="$oppl" 'BEGIN { printf "%.2e", (b - a) / a }')
    vs=$(awk -v a="$f32ppl" -v b="$oppl" 'BEGIN { printf "%.2e", (b - a) / a }')
    printf "$fmt" "$tag" "$fa" "$md" "$am" "$lppl" "$oppl" "$rel" "$f32ppl" "$vs"
  done
done
[ $update = 1 ] && cp "$tab" "$gold/kvtypes.txt"
(cd "$root" && go test ./engine -run KVTypes -count=1)
