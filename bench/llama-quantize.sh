#!/bin/sh
# Side-by-side speed of `gguf quantize` and llama.cpp's llama-quantize on the
# same generated F32 model (~400 MB), per type and thread count, runs
# alternating between the two, and whether their outputs are byte-identical.
#
#   LLAMA_QUANTIZE   llama-quantize command (default: /tmp/lcpp/lrun llama-quantize)
#   TYPES            file types (default: Q8_0 Q4_0 Q4_K_M Q5_K_M Q6_K Q2_K Q3_K_M IQ4_NL IQ4_XS TQ1_0)
#   THREADS          thread counts (default: 1 2)
#   RUNS             runs of each tool per type and thread count (default: 2)
#   WORK             directory for the model and outputs (default: /tmp/gguf-lq-bench)
#   GGUF             gguf binary to time (default: built from this checkout)
#
# Run from the repository root: sh bench/llama-quantize.sh
set -eu
LQ=${LLAMA_QUANTIZE:-/tmp/lcpp/lrun llama-quantize}
TYPES=${TYPES:-Q8_0 Q4_0 Q4_K_M Q5_K_M Q6_K Q2_K Q3_K_M IQ4_NL IQ4_XS TQ1_0}
THREADS=${THREADS:-1 2}
RUNS=${RUNS:-2}
WORK=${WORK:-/tmp/gguf-lq-bench}

# shellcheck disable=SC2086
set -- $LQ
if ! command -v "$1" >/dev/null 2>&1 || ! "$@" --help 2>&1 | grep -q 'allowed quantization types'; then
	echo "llama-quantize.sh: llama-quantize not available as '$LQ'; set LLAMA_QUANTIZE to its command" >&2
	exit 2
fi

mkdir -p "$WORK"
if [ -z "${GGUF:-}" ]; then
	GGUF=$WORK/gguf
	go build -o "$GGUF" ./cmd/gguf
fi
MODEL=$WORK/bench-f32.gguf
if [ ! -s "$MODEL" ]; then
	go run ./bench/genmodel -o "$MODEL" -layers 6 -embd 1024 -ff 2816 -vocab 32000 -type F32 -head-type F32
fi
MB=$(awk -v b="$(wc -c <"$MODEL")" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "model: $MODEL ($MB MB); llama-quantize: $LQ; gguf: $GGUF"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
rate() { awk -v mb="$MB" -v s="$1" 'BEGIN { printf "%.0f", mb / s }'; }

# run_llama TYPE THREADS OUT and run_gguf TYPE THREADS OUT print the seconds taken.
run_llama() {
	a=$(now)
	# shellcheck disable=SC2086
	$LQ "$MODEL" "$3" "$1" "$2" >"$WORK/llama-quantize.log" 2>&1 ||
		{ echo "llama-quantize failed on $1 (see $WORK/llama-quantize.log)" >&2; exit 1; }
	secs "$a" "$(now)"
}
run_gguf() {
	a=$(now)
	"$GGUF" quantize -q "$MODEL" "$3" --type "$1" -t "$2" 2>"$WORK/gguf.log" ||
		{ echo "gguf quantize failed on $1 (see $WORK/gguf.log)" >&2; exit 1; }
	secs "$a" "$(now)"
}

printf '%-8s %3s %3s  %8s %8s  %10s %10s  %10s  %s\n' type thr run "llama s" "gguf s" "llama MB/s" "gguf MB/s" "llama/gguf" identical
for t in $TYPES; do
	for th in $THREADS; do
		for run in $(seq 1 "$RUNS"); do
			out_l=$WORK/out-llama.gguf
			out_g=$WORK/out-gguf.gguf
			rm -f "$out_l" "$out_g"
			# Odd runs start with llama-quantize, even runs with gguf.
			if [ $((run % 2)) -eq 1 ]; then
				sl=$(run_llama "$t" "$th" "$out_l")
				sg=$(run_gguf "$t" "$th" "$out_g")
			else
				sg=$(run_gguf "$t" "$th" "$out_g")
				sl=$(run_llama "$t" "$th" "$out_l")
			fi
			same=no
			cmp -s "$out_l" "$out_g" && same=yes
			printf '%-8s %3s %3s  %8s %8s  %10s %10s  %10s  %s\n' "$t" "$th" "$run" "$sl" "$sg" \
				"$(rate "$sl")" "$(rate "$sg")" "$(awk -v l="$sl" -v g="$sg" 'BEGIN { printf "%.2f", l / g }')" "$same"
		done
	done
done
rm -f "$WORK/out-llama.gguf" "$WORK/out-gguf.gguf"
