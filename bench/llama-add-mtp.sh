#!/usr/bin/env bash
# gguf build --add-mtp against llama.cpp: on a generated qwen35 and qwen35moe
# model and a
# checkpoint of its MTP block (bench/mtpcase), the output must equal the
# converter's file (want.gguf) byte for byte, load in a real llama.cpp, and
# llama-speculative-simple --spec-type draft-mtp on it must print the text
# gguf run --spec-type draft-mtp prints (greedy), for each --outtype and
# model.
# llama.cpp is found as bench/llama-mtp.sh finds it (bench/lcpp-env.sh).
#
# Usage: bench/llama-add-mtp.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf && go build -o "$tmp/mtpcase" ./bench/mtpcase)
prompt="t1 t2 t3"
fail=0
for arch in qwen35 qwen35moe; do
for typ in f32 f16 bf16 q8_0; do
  d=$tmp/$arch-$typ
  mkdir -p "$d"
  "$tmp/mtpcase" -dir "$d" -type $typ -arch $arch
  "$tmp/gguf" build "$d/base.gguf" --add-mtp "$d/mtp.safetensors" --mtp-outtype $typ -o "$d/out.gguf" -q 2>/dev/null
  same=same
  cmp -s "$d/out.gguf" "$d/want.gguf" || { same=DIFFERENT; fail=1; }
  llama "$lbin/llama-speculative-simple" -m "$d/out.gguf" --spec-type draft-mtp --spec-draft-n-max 2 \
    -p "$prompt" -n 8 --temp 0 -c 256 >"$d/llama.out" 2>"$d/llama.err"
  ours=$("$tmp/gguf" run "$d/out.gguf" -p "$prompt" -n 16 --temp 0 --spec-type draft-mtp --spec-draft-n-max 2 2>/dev/null)
  theirs=$(sed 's/<s>//g' "$d/llama.out")
  # both print the prompt and then the generation; compare the words
  # llama.cpp printed (it counts -n otherwise: ours runs longer)
  t=$(echo $theirs)
  o=$(echo $ours)
  text=same
  [ "${o:0:${#t}}" = "$t" ] || { text=DIFFERENT; fail=1; }
  drafted=$(grep -o 'n_drafted = [0-9]*' "$d/llama.err" || true)
  echo "$arch $typ: file $same as the converter's; llama.cpp ($drafted) text $text: $t"
done
done
exit $fail
