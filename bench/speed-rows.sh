#!/usr/bin/env bash
# The eight speed rows of the llama.cpp comparison (README "Speed"):
# generated models of real models' shapes in the types users run, measured
# by bench/llamacpp.sh (llama-bench with ggml's own CPU backend choice, or
# --backend NAME) at 1 and 2 threads, alternating runs, medians.
#
#   llama 254 M   Q8_0, Q4_0, Q4_K_M  16 layers, embd 1024, ff 2816, vocab 32000
#   qwen3 0.6 B   Q4_K_M, Q1_0        Qwen3-0.6B: 28 layers, embd 1024, ff 3072,
#                                     16 heads / 8 KV heads of 128, vocab 151936, tied
#   qwen3moe 1 B  Q4_K_M              16 layers, embd 1024, 64 experts of 256, top 8,
#                                     16 heads / 4 KV heads of 64, vocab 151936
#   qwen35 0.8 B  Q4_K_M              Qwen3.5-0.8B: 24 layers, embd 1024, ff 3584,
#                                     8 heads / 2 KV heads of 256, DeltaNet 16 heads of
#                                     128, every 4th layer full attention, vocab 151936
#   bailingmoe2 1 B Q4_K_M            16 layers (1 dense), embd 1024, 64 experts of 256,
#                                     top 8, one shared, 16 heads / 4 KV heads, vocab 157184
#   qwen3 1.7 B   Q1_0 (not in the default eight: give qwen3-1.7b-Q1_0)
#                                     Bonsai-1.7B's shape (Qwen3-1.7B): 28 layers, embd 2048,
#                                     ff 6144, 16 heads / 8 KV heads of 128, vocab 151669, tied
#
# Weights are bench/genmodel -crosscheck's (activations stay O(1)); each F32
# file is quantized by gguf quantize (llama-quantize's bytes). Files are kept
# in $GGUF_SPEED_DIR (default /tmp/gguf-speed, about 12 GB, 20 GB with the
# 1.7 B row) and reused.
#
# Usage: bench/speed-rows.sh [--backend NAME] [RUNS] [ROW...]
#   ROW: a file name below (e.g. qwen3-0.6b-Q1_0); default all eight.
set -euo pipefail
backend=()
if [ "${1:-}" = --backend ]; then
	backend=(--backend "$2")
	shift 2
fi
runs=${1:-3}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${GGUF_SPEED_DIR:-/tmp/gguf-speed}
mkdir -p "$dir"
(cd "$root" && go build -o "$dir/genmodel" ./bench/genmodel && go build -o "$dir/gguf" ./cmd/gguf)

declare -A shape=(
	[llama-254m]="-layers 16 -embd 1024 -ff 2816 -vocab 32000"
	[qwen3-0.6b]="-arch qwen3 -layers 28 -embd 1024 -ff 3072 -heads 16 -kv-heads 8 -head-dim 128 -vocab 151936"
	[qwen3moe-1b]="-arch qwen3moe -layers 16 -embd 1024 -ff 3072 -experts 64 -experts-used 8 -expert-ff 256 -heads 16 -kv-heads 4 -head-dim 64 -vocab 151936"
	[qwen35-0.8b]="-arch qwen35 -layers 24 -embd 1024 -ff 3584 -heads 8 -kv-heads 2 -head-dim 256 -ssm-head-dim 128 -ssm-k-heads 16 -ssm-v-heads 16 -full-attn-interval 4 -vocab 151936"
	[qwen3-1.7b]="-arch qwen3 -layers 28 -embd 2048 -ff 6144 -heads 16 -kv-heads 8 -head-dim 128 -vocab 151669"
	[bailingmoe2-1b]="-arch bailingmoe2 -tied=false -layers 16 -embd 1024 -ff 3072 -experts 64 -experts-used 8 -expert-ff 256 -shared-experts 1 -dense-lead 1 -heads 16 -kv-heads 4 -vocab 157184"
)
all=(llama-254m-Q8_0 llama-254m-Q4_0 llama-254m-Q4_K_M qwen3-0.6b-Q4_K_M qwen3-0.6b-Q1_0 qwen3moe-1b-Q4_K_M
	qwen35-0.8b-Q4_K_M bailingmoe2-1b-Q4_K_M)
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=("${all[@]}")

files=()
for row in "${rows[@]}"; do
	base=${row%-*} type=${row##*-}
	[ -n "${shape[$base]:-}" ] || {
		echo "unknown row $row (rows: ${all[*]})" >&2
		exit 2
	}
	f32=$dir/$base-F32.gguf out=$dir/$row.gguf
	if [ ! -s "$f32" ]; then
		# shellcheck disable=SC2086 # the shape is a list of flags
		"$dir/genmodel" -crosscheck ${shape[$base]} -type F32 -head-type F32 -o "$f32.part"
		mv "$f32.part" "$f32"
	fi
	[ -s "$out" ] || "$dir/gguf" quantize "$f32" "$out" --type "$type" >/dev/null
	files+=("$out")
done
exec "$root/bench/llamacpp.sh" "${backend[@]}" "$runs" "${files[@]}"
