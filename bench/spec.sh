#!/usr/bin/env bash
# Speculative decoding (gguf run --spec-type ngram-simple) against plain
# decoding on a generated MoE (bench/genmodel: a Mixtral-style llama, 8
# layers, embd 1024, 64 experts of 1024, 4 used, Q4_K experts, Q8_0
# elsewhere, experts last, Zipf router, skew 3: 944 MB), greedy from a
# repetitive prompt, three ways:
#
#   ram      the file mapped, page cache warm: compute only
#   paged    --moe-pool 16 under --moe-sim-flash (experts read on a miss;
#            a verification batch reads the union of its rows' experts once)
#   thrash   --moe-sim-flash without a pool: every weight a pass reads is
#            charged to the flash (a model larger than RAM, streamed)
#
# Runs alternate (plain, drafting, plain, ...), ROUNDS rounds; the medians
# of generation tok/s and their ratio are printed with the load average,
# the draft acceptance rate, tokens per forward pass and the pager's bytes
# per token. Each pair's texts must be equal (drafting is exact).
#
# Usage: bench/spec.sh [ROUNDS] [TOKENS] [FLASH]   (default 3, 96, 200MB/s,0.3ms)
# SPEC_ARGS overrides the drafting flags.
set -euo pipefail
rounds=${1:-3}
n=${2:-96}
flash=${3:-200MB/s,0.3ms}
spec=${SPEC_ARGS:---spec-type ngram-simple --spec-ngram-simple-size-n 3 --spec-ngram-simple-size-m 8 --spec-draft-n-max 3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${SPEC_BENCH_DIR:-/tmp/specbench}
mkdir -p "$work"
cd "$root"
go build -o "$work/gguf" ./cmd/gguf
model=$work/moe.gguf
if [ ! -f "$model" ]; then
	go run ./bench/genmodel -o "$model" -layers 8 -embd 1024 -ff 1024 -experts 64 -experts-used 4 \
		-heads 16 -kv-heads 8 -vocab 4096 -type Q8_0 -head-type Q8_0 -expert-type Q4_K \
		-moe-skew 3 -expert-templates 8 -tied=false
fi
prompt="t1 t2 t3 t4 t5 t1 t2 t6 t7 t1 t3 t8 t1 t2 t3 t4 t5 t1 t2 t6 t7 t1 t3 t8"
gen() { sed -n 's/.*generated [0-9]* tokens in [^ ]* (\([0-9.]*\) tok\/s).*/\1/p' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for mode in ram paged thrash; do
	case $mode in
	ram) flags=() toks=$n ;;
	paged) flags=(--moe-pool 16 --moe-sim-flash "$flash") toks=$n ;;
	thrash) flags=(--moe-sim-flash "$flash") toks=$(( n < 32 ? n : 32 )) ;;
	esac
	: >"$work/$mode-plain.rates"
	: >"$work/$mode-spec.rates"
	for r in $(seq "$rounds"); do
		for kind in plain spec; do
			extra=()
			# shellcheck disable=SC2206 # the drafting flags are a list
			[ "$kind" = spec ] && extra=($spec)
			"$work/gguf" run "$model" -p "$prompt" -n "$toks" --temp 0 -t 2 "${flags[@]}" "${extra[@]}" \
				>"$work/$mode-$kind.txt" 2>"$work/$mode-$kind.err"
			gen "$work/$mode-$kind.err" >>"$work/$mode-$kind.rates"
		done
		cmp -s "$work/$mode-plain.txt" "$work/$mode-spec.txt" || { echo "$mode round $r: drafting changed the text" >&2; exit 1; }
	done
	p=$(median <"$work/$mode-plain.rates")
	s=$(median <"$work/$mode-spec.rates")
	echo "== $mode, $toks tokens, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg): plain $p tok/s, drafting $s tok/s, ratio $(awk -v a="$s" -v b="$p" 'BEGIN { printf "%.2f", a / b }')"
	grep -h 'draft acceptance' "$work/$mode-spec.err" | sed 's/^gguf: /   /'
	for kind in plain spec; do
		grep -h 'pager:' "$work/$mode-$kind.err" | sed "s/^gguf: pager:/   $kind:/" || true
	done
done
