#!/usr/bin/env bash
# Speed of `gguf run` against llama.cpp's llama-bench on the same model
# files, on this machine, with 1 and 2 threads, measured alternately in the
# same run.
#
# llama.cpp is not part of this repository. $LLAMA_BENCH is the command that
# runs llama-bench (default: /tmp/lcpp/lrun llama-bench, a Debian sid build
# extracted under /tmp/lcpp by bench/lcpp-fetch.sh). llama-bench runs with
# its defaults (F16 KV cache, flash attention auto, weight repacking on) and
# ggml's own choice of CPU backend (the best variant for this CPU), the
# configuration its users get; --backend NAME forces libggml-cpu-NAME.so
# (e.g. haswell). The CPU model, the backend ggml loaded and the load
# average are printed with the figures.
#
# Prompt: llama-bench's ppN (one batch of N tokens from an empty context)
# against gguf's prompt tok/s for a text of N tokens (N as gguf counts it
# for that model's tokenizer, generation 1 token). Generation: llama-bench's
# tgM (M tokens, one at a time, from an empty context) against gguf's
# generation tok/s for M tokens after a one-word prompt.
#
# Output: every run, then per model and row the medians and the ratio
# gguf/llama.cpp.
#
# --base GGUF runs that gguf binary too (a build of another revision: the
# baseline of a change), alternately with the others, and adds its median
# and the ratio gguf/base. --prompt-only leaves generation out.
#
# Usage: bench/llamacpp.sh [--backend NAME] [--base GGUF] [--prompt-only] [RUNS] [MODEL.gguf...]
#   (default 5 runs; default model ../shared/models/stories260K-f32.gguf)
set -euo pipefail
base= whats="prompt gen"
while :; do
	case "${1:-}" in
	--backend) LCPP_BACKEND=$2 && shift 2 ;;
	--base) base=$(realpath "$2") && shift 2 ;;
	--prompt-only) whats=prompt && shift ;;
	*) break ;;
	esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
runs=${1:-5}
shift || true
shared=${GGUF_SHARED:-$root/../shared}
models=("$@")
[ ${#models[@]} -gt 0 ] || models=("$shared/models/stories260K-f32.gguf")
read -r -a lbench <<<"${LLAMA_BENCH:-/tmp/lcpp/lrun llama-bench}"
"${lbench[@]}" --help >/dev/null 2>&1 || {
	echo "llama-bench not runnable as '${lbench[*]}' (set LLAMA_BENCH)" >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/gguf" ./cmd/gguf)
"${lbench[@]}" -m "${models[0]}" -p 1 -n 0 -r 1 -o csv >/dev/null 2>"$tmp/backend.log" || true
backend=$(lcpp_backend "$tmp/backend.log")
echo "cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores; ggml CPU backend: ${backend:-unknown}${GGML_BACKEND_PATH:+ (forced)}"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

text="Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom to help her. Her mom said, \"Let's go to the park and play with the ball.\" They played together all day long."
gen=128

# llama_rate MODEL THREADS NPROMPT NGEN: llama-bench's mean tok/s of its one test.
llama_rate() {
	"${lbench[@]}" -m "$1" -t "$2" -p "$3" -n "$4" -r 1 -o csv 2>/dev/null |
		awk -F, 'NR==1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
			{gsub(/"/, ""); print $col["avg_ts"]}'
}
# gguf_rate MODEL THREADS PROMPT N FIELD [GGUF]: gguf run's tok/s for FIELD
# (prompt|generated), of GGUF (default: this checkout's build).
gguf_rate() {
	"${6:-$tmp/gguf}" run "$1" -p "$3" -n "$4" --temp 0 --ctx 512 -t "$2" 2>&1 >/dev/null |
		sed -n "s/.*$5 [0-9]* tokens in [^(]*(\([0-9.]*\) tok\/s).*/\1/p"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

summary=()
for model in "${models[@]}"; do
	plen=$("$tmp/gguf" run "$model" -p "$text" -n 1 --temp 0 --ctx 512 2>&1 >/dev/null |
		sed -n 's/.*prompt \([0-9]*\) tokens.*/\1/p')
	echo "$(basename "$model"): prompt $plen tokens (pp$plen), generation $gen tokens (tg$gen)"
	for threads in 1 2; do
		for what in $whats; do
			l_rates=() g_rates=() b_rates=()
			for i in $(seq "$runs"); do
				b=
				if [ "$what" = prompt ]; then
					l=$(llama_rate "$model" "$threads" "$plen" 0)
					g=$(gguf_rate "$model" "$threads" "$text" 1 prompt)
					[ -z "$base" ] || b=$(gguf_rate "$model" "$threads" "$text" 1 prompt "$base")
				else
					l=$(llama_rate "$model" "$threads" 0 "$gen")
					g=$(gguf_rate "$model" "$threads" "Once" "$gen" generated)
					[ -z "$base" ] || b=$(gguf_rate "$model" "$threads" "Once" "$gen" generated "$base")
				fi
				printf '  %s t%d run %d: llama.cpp %9.1f tok/s   gguf %9.1f tok/s%s   (load %s)\n' "$what" "$threads" "$i" "$l" "$g" \
					"${b:+$(printf '   base %9.1f tok/s' "$b")}" "$(cut -d' ' -f1 /proc/loadavg)"
				l_rates+=("$l") g_rates+=("$g")
				[ -z "$b" ] || b_rates+=("$b")
			done
			ml=$(median "${l_rates[@]}") mg=$(median "${g_rates[@]}")
			line=$(printf '%-28s %-6s %d thread(s): llama.cpp %9.1f tok/s, gguf %9.1f tok/s, gguf/llama.cpp = %.2f' \
				"$(basename "$model")" "$what" "$threads" "$ml" "$mg" "$(echo "$mg / $ml" | bc -l)")
			if [ ${#b_rates[@]} -gt 0 ]; then
				mb=$(median "${b_rates[@]}")
				line+=$(printf ', base %9.1f tok/s, gguf/base = %.2f' "$mb" "$(echo "$mg / $mb" | bc -l)")
			fi
			summary+=("$line")
		done
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians (llama.cpp backend ${backend:-unknown}):"
printf '%s\n' "${summary[@]}"
