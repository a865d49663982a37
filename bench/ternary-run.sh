#!/usr/bin/env bash
# Generation speed of the ternary weights end to end: a generated qwen3
# model (bench/genmodel -crosscheck; 4 layers, 1024 wide, FFN 2816, 32000
# tokens by default) quantized by gguf quantize to TQ1_0, TQ2_0 and Q2_0,
# each rewritten by gguf layout --ternary ter3, ter2 and ter2s128; then
# gguf run (greedy, N tokens, default 16, one thread) of every file under the
# portable set and the CPU's assembly set, in ROUNDS alternated rounds
# (every configuration once per round), printing each configuration's
# median generation tok/s and CPU seconds of the whole run (user+sys: on
# a loaded machine the steadier figure), each with its ratio to the
# original file under the same set, and the load average before and
# after.
#
# Usage: bench/ternary-run.sh [ROUNDS]   (environment: SET, the assembly
# set, default the CPU's best; N, the tokens generated; GENFLAGS,
# genmodel's size flags)
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf && go build -o "$tmp/genmodel" ./bench/genmodel)
# shellcheck disable=SC2086 # GENFLAGS is a list of flags
"$tmp/genmodel" -crosscheck -arch qwen3 ${GENFLAGS:--layers 4 -embd 1024 -ff 2816 -vocab 32000} -type F32 -head-type F32 -o "$tmp/base.gguf" >/dev/null 2>&1
files=()
for t in TQ1_0 TQ2_0 Q2_0; do
  "$tmp/gguf" quantize "$tmp/base.gguf" "$tmp/$t.gguf" --type "$t" >/dev/null 2>&1
  files+=("$t")
  for k in ter3 ter2 ter2s128; do
    "$tmp/gguf" layout "$tmp/$t.gguf" --ternary "$k" --lossy -q -o "$tmp/$t-$k.gguf" >/dev/null 2>&1
    files+=("$t-$k")
  done
done
# The CPU's best set, from the error naming the sets ("have vnni, avx2, portable").
best=$("$tmp/gguf" run "$tmp/TQ2_0.gguf" -p x -n 1 --kernels '?' 2>&1 | sed -n 's/.*(have \([a-z0-9]*\).*/\1/p' || true)
set_asm=${SET:-${best:-auto}}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for f in "${files[@]}"; do
    for s in portable "$set_asm"; do
      TIMEFORMAT=%U+%S
      { time "$tmp/gguf" run "$tmp/$f.gguf" -p "Once upon a time" -n "${N:-16}" --temp 0 --ignore-eos -t 1 --kernels "$s" \
        >/dev/null 2>"$tmp/log"; } 2>"$tmp/time"
      tps=$(sed -n 's/.*generated [0-9]* tokens in [^(]*(\([0-9.]*\) tok\/s).*/\1/p' "$tmp/log")
      echo "$f $s $tps $(bc <<<"$(cat "$tmp/time")")" >>"$tmp/runs.txt"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# median FIELD (3 tok/s, 4 CPU seconds) of file $1 under set $2
med() {
  awk -v f="$1" -v s="$2" -v c="$3" '$1==f && $2==s {print $c}' "$tmp/runs.txt" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'
}
printf "%-16s %-9s %9s %8s %9s %8s\n" file kernels "tok/s" "vs orig" "cpu s" "vs orig"
for s in portable "$set_asm"; do
  for f in "${files[@]}"; do
    t=$(med "$f" "$s" 3) to=$(med "${f%%-*}" "$s" 3) c=$(med "$f" "$s" 4) co=$(med "${f%%-*}" "$s" 4)
    printf "%-16s %-9s %9s %8.2f %9s %8.2f\n" "$f" "$s" "$t" "$(bc -l <<<"$t/$to")" "$c" "$(bc -l <<<"$c/$co")"
  done
done
