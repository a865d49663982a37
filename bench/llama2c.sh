#!/usr/bin/env bash
# Speed of `gguf run` against Karpathy's llama2.c run.c on stories260K, on
# this machine, one thread each, measured alternately in the same run.
#
# llama2.c's run.c is not part of this repository. Put a copy at
# $LLAMA2C_RUN_C (default /tmp/llama2c/run.c); it is compiled here with
# gcc -O3 -march=native into a temporary directory. Both programs generate
# llama2.c's greedy story (prompt "Once upon a time", 341 tokens, context
# 512); llama2.c reports forward passes per second after the first one,
# gguf its generation tok/s. Output: every run, then the medians and their
# ratio.
#
# Usage: bench/llama2c.sh [RUNS]   (default 7)
set -euo pipefail
runs=${1:-7}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${GGUF_SHARED:-$root/../shared}
runc=${LLAMA2C_RUN_C:-/tmp/llama2c/run.c}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v gcc >/dev/null || { echo "gcc not found: cannot build llama2.c" >&2; exit 2; }
[ -f "$runc" ] || { echo "llama2.c run.c not found at $runc (set LLAMA2C_RUN_C)" >&2; exit 2; }
gcc -O3 -march=native -o "$tmp/run" "$runc" -lm
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf)

model_bin=$shared/models/stories260K.bin
tok=$shared/models/tok512.bin
gguf_model=$shared/models/stories260K-f32.gguf

c_rates=() g_rates=()
for i in $(seq "$runs"); do
  c=$("$tmp/run" "$model_bin" -z "$tok" -t 0 -n 0 -i "Once upon a time" 2>&1 >/dev/null | sed -n 's/achieved tok\/s: //p')
  g=$("$tmp/gguf" run "$gguf_model" -p "Once upon a time" -n 341 --temp 0 --ctx 512 -t 1 2>&1 >/dev/null |
      sed -n 's/.*generated [0-9]* tokens in [^(]*(\([0-9.]*\) tok\/s).*/\1/p')
  printf 'run %d: llama2.c %8.1f tok/s   gguf %8.1f tok/s\n' "$i" "$c" "$g"
  c_rates+=("$c") g_rates+=("$g")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mc=$(median "${c_rates[@]}") mg=$(median "${g_rates[@]}")
printf 'median: llama2.c %.1f tok/s, gguf %.1f tok/s, gguf/llama2.c = %.2f\n' "$mc" "$mg" "$(echo "$mg / $mc" | bc -l)"
