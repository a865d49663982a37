#!/usr/bin/env bash
# CPU seconds of a prompt and of generation with `gguf run`, this
# checkout's build against a baseline build, alternated in the same run:
# where other jobs load the machine, wall-clock tok/s (bench/llamacpp.sh)
# measures them, not gguf; a process's own CPU time much less so.
#
# Per model and run, three runs of each binary: A the 294-token prompt of
# bench/llamacpp.sh and 1 token, B a one-word prompt and 1 token, C the
# one-word prompt and 129 tokens. Prompt CPU = A - B (293 more prompt
# tokens, the load cancelled), generation CPU = C - B (128 tokens). Prints
# every run, then per model the medians and base/gguf (> 1: faster than
# the base), with the load average.
#
# Usage: bench/moe-cpu.sh BASE-GGUF [RUNS] [THREADS] MODEL.gguf...
set -euo pipefail
base=$(realpath "$1")
runs=${2:-3}
threads=${3:-1}
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf)
text="Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom to help her. Her mom said, \"Let's go to the park and play with the ball.\" They played together all day long."
# cpu BIN MODEL PROMPT N: user+system seconds of one run
cpu() {
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$1" run "$2" -p "$3" -n "$4" --temp 0 --ctx 512 -t "$threads" >/dev/null 2>&1
	awk '{printf "%.2f", $1 + $2}' "$tmp/t"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $threads thread(s)"
for model in "$@"; do
	declare -A pp=() tg=()
	for r in $(seq "$runs"); do
		for who in gguf base; do
			bin=$tmp/gguf
			[ "$who" = base ] && bin=$base
			a=$(cpu "$bin" "$model" "$text" 1)
			b=$(cpu "$bin" "$model" Once 1)
			c=$(cpu "$bin" "$model" Once 129)
			pp[$who]+="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a - b}') "
			tg[$who]+="$(awk -v c="$c" -v b="$b" 'BEGIN {printf "%.2f", c - b}') "
			echo "$(basename "$model") run $r $who: A $a B $b C $c s (load $(cut -d' ' -f1 /proc/loadavg))"
		done
	done
	for what in pp tg; do
		declare -n v=$what
		# shellcheck disable=SC2086 # the lists are words
		g=$(median ${v[gguf]}) && b=$(median ${v[base]})
		echo "$(basename "$model") $what CPU s: gguf $g, base $b, base/gguf = $(awk -v g="$g" -v b="$b" 'BEGIN {printf "%.2f", b / g}')"
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
