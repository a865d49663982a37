#!/usr/bin/env bash
# Speed of `gguf run` against Karpathy's llama2.c run.c on stories260K, on
# this machine, measured alternately in the same run: prompt processing and
# generation, with 1 and 2 threads.
#
# llama2.c's run.c is not part of this repository. Put a copy at
# $LLAMA2C_RUN_C (default /tmp/llama2c/run.c); it is compiled here with
# gcc -O3 -march=native, once plain (1 thread) and once with -fopenmp (its
# matmul and attention loops run on OMP_NUM_THREADS=2 threads).
#
# Generation: both programs generate llama2.c's greedy story (prompt "Once
# upon a time", 341 tokens, context 512); llama2.c reports forward passes
# per second after the first one, gguf its generation tok/s.
# Prompt: a 100-odd-token prompt with nothing generated after it (llama2.c
# -n = the prompt's token count, so every timed forward pass is a prompt
# token; it feeds them one at a time), against gguf's prompt tok/s (gguf
# evaluates the prompt in batches).
#
# Output: every run, then per row the medians and the ratio gguf/llama2.c.
#
# Usage: bench/llama2c.sh [RUNS]   (default 5)
set -euo pipefail
runs=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${GGUF_SHARED:-$root/../shared}
runc=${LLAMA2C_RUN_C:-/tmp/llama2c/run.c}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v gcc >/dev/null || { echo "gcc not found: cannot build llama2.c" >&2; exit 2; }
[ -f "$runc" ] || { echo "llama2.c run.c not found at $runc (set LLAMA2C_RUN_C)" >&2; exit 2; }
gcc -O3 -march=native -o "$tmp/run1" "$runc" -lm
gcc -O3 -march=native -fopenmp -o "$tmp/run2" "$runc" -lm
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf)

model_bin=$shared/models/stories260K.bin
tok=$shared/models/tok512.bin
gguf_model=$shared/models/stories260K-f32.gguf
story="Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom to help her. Her mom said, \"Let's go to the park and play with the ball.\" They played together all day long."
plen=$("$tmp/gguf" run "$gguf_model" -p "$story" -n 1 --temp 0 --ctx 512 2>&1 >/dev/null | sed -n 's/.*prompt \([0-9]*\) tokens.*/\1/p')

llama2c() { # threads prompt steps
  OMP_NUM_THREADS=$1 "$tmp/run$1" "$model_bin" -z "$tok" -t 0 -n "$3" -i "$2" 2>&1 >/dev/null | sed -n 's/achieved tok\/s: //p'
}
gguf_rate() { # threads prompt n field
  "$tmp/gguf" run "$gguf_model" -p "$2" -n "$3" --temp 0 --ctx 512 -t "$1" 2>&1 >/dev/null |
    sed -n "s/.*$4 [0-9]* tokens in [^(]*(\([0-9.]*\) tok\/s).*/\1/p"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "prompt: $plen tokens; generation: 341 tokens after \"Once upon a time\""
summary=()
for threads in 1 2; do
  for what in prompt gen; do
    c_rates=() g_rates=()
    for i in $(seq "$runs"); do
      if [ "$what" = prompt ]; then
        c=$(llama2c "$threads" "$story" "$plen")
        g=$(gguf_rate "$threads" "$story" 1 prompt)
      else
        c=$(llama2c "$threads" "Once upon a time" 0)
        g=$(gguf_rate "$threads" "Once upon a time" 341 generated)
      fi
      printf '%s t%d run %d: llama2.c %8.1f tok/s   gguf %8.1f tok/s\n' "$what" "$threads" "$i" "$c" "$g"
      c_rates+=("$c") g_rates+=("$g")
    done
    mc=$(median "${c_rates[@]}") mg=$(median "${g_rates[@]}")
    summary+=("$(printf '%-6s %d thread(s): llama2.c %8.1f tok/s, gguf %8.1f tok/s, gguf/llama2.c = %.2f' "$what" "$threads" "$mc" "$mg" "$(echo "$mg / $mc" | bc -l)")")
  done
done
echo "medians:"
printf '%s\n' "${summary[@]}"
