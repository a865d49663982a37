#!/usr/bin/env bash
# llama.cpp's logits over a long prompt for a recurrent family, to measure
# how the engine's error grows with the position: BOS and the first 511
# words of the crosscheck text (512 positions, one batch, as
# bench/llama-logits.c evaluates a prompt) on bailingmoe3-F32, of which
# every 32nd position (31, 63, ..., 511) is kept in
# engine/testdata/llamacpp/bailingmoe3-F32-long.f32 (16 x 512 float32)
# for TestBailingMoE3LongPrompt. Environment as bench/llama-logits.sh.
#
# Usage: bench/llama-logits-long.sh [--update]
set -euo pipefail
update=0
[ "${1:-}" = --update ] && update=1
root=$(cd "$(dirname "$0")/.." && pwd)
# The committed references were made with ggml's haswell backend: compare
# with the same arithmetic unless told otherwise (LCPP_BACKEND, or
# GGML_BACKEND_PATH).
[ -n "${GGML_BACKEND_PATH:-}" ] || LCPP_BACKEND=${LCPP_BACKEND:-haswell}
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lcpp_harness "$root/bench/llama-logits.c" "$tmp/llama-logits"
(cd "$root" && go build -o "$tmp/enginelogits" ./bench/enginelogits)
"$tmp/enginelogits" -gen "$tmp/models" -match '^bailingmoe3-F32$' -words 511
prompt=$(cat "$tmp/models/eval.txt")
out=$(llama "$tmp/llama-logits" "$tmp/models/bailingmoe3-F32.gguf" -p "$prompt" -o "$tmp/long.f32")
ids=$(sed -n 's/^tokens: //p' <<<"$out")
[ "$(wc -w <<<"$ids")" = 512 ] || { echo "the prompt is $(wc -w <<<"$ids") tokens, want 512" >&2; exit 1; }
"$tmp/enginelogits" -m "$tmp/models/bailingmoe3-F32.gguf" -ids "$ids" -ref "$tmp/long.f32" | tail -1
: >"$tmp/kept.f32"
for p in $(seq 31 32 511); do
  dd if="$tmp/long.f32" bs=2048 skip="$p" count=1 status=none >>"$tmp/kept.f32"
done
gold=$root/engine/testdata/llamacpp/bailingmoe3-F32-long.f32
if [ -f "$gold" ] && cmp -s "$tmp/kept.f32" "$gold"; then echo "golden: same"; else echo "golden: new or DIFF"; fi
[ $update = 1 ] && cp "$tmp/kept.f32" "$gold"
exit 0
