#!/usr/bin/env bash
# --moe-stage N (the next layer's predicted experts read into staging
# slots outside the pools) against plain paging, alternated ROUNDS times
# on bench/pager-model.sh's generated MoE (1.76 GB, experts last),
# --moe-pool POOL, bias 0 (exact), 32 tokens, 2 threads. With FLASH (e.g.
# 1GB/s,0.1ms) the reads go through the page cache, warm, and the
# simulated flash alone is the device: other processes' disk traffic
# does not enter; without it they are direct reads from the disk, the
# file's cached pages dropped before each run.
#
# Prints each run's tok/s, wait per token, bytes read and staged/used,
# then per variant the median tok/s and its ratio to plain paging's
# median, and the load average before and after.
#
# Usage: bench/pager-stage.sh [ROUNDS] [POOL] [STAGES] [FLASH]  (default 5 6 "1 2 4" "")
set -euo pipefail
rounds=${1:-5}
pool=${2:-6}
stages=${3:-1 2 4}
flash=${4:-}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/pager-model.sh
. bench/pager-model.sh
dev=(--moe-direct=true)
[ -z "$flash" ] || dev=(--moe-direct=false --moe-sim-flash "$flash")
: >"$work/st-all.txt"
run() { # name, flags...
	local name=$1 out=$work/st-$1.err tps pg st
	shift
	if [ -z "$flash" ]; then
		dd if="$model" iflag=nocache count=0 status=none
	fi
	"$work/gguf" run "$model" -p "$prompt" -n 32 --temp 1 --seed 1 -t 2 --moe-pool "$pool" --moe-stats "${dev[@]}" "$@" >"$work/st-$name.txt" 2>"$out"
	tps=$(sed -n 's/.*generated [0-9]* tokens in [^ ]* (\([0-9.]*\) tok\/s).*/\1/p' "$out")
	pg=$(sed -n 's/^gguf: pager: [0-9]* slots per layer ([^)]*), \(.*\)/\1/p' "$out" | head -1)
	st=$(sed -n 's/.*\(staged [0-9]* ([0-9]* used)\).*/\1/p' "$out")
	echo "$name $tps tok/s; $pg; $st"
	echo "$name $tps" >>"$work/st-all.txt"
}
[ -n "$flash" ] && cat "$model" >/dev/null
echo "pool $pool, stages $stages, device ${flash:-this disk, direct}; load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
	run paged
	for s in $stages; do
		run "stage$s" --moe-stage "$s"
	done
done
echo "after: load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $stages; do
	cmp -s "$work/st-paged.txt" "$work/st-stage$s.txt" || echo "stage$s text DIFFERS from paged text"
done
med() { grep "^$1 " "$work/st-all.txt" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(med paged)
echo "median paged $p tok/s"
for s in $stages; do
	awk -v k="stage$s" -v m="$(med "stage$s")" -v p="$p" 'BEGIN { printf "median %s %.2f tok/s, %.2fx paged\n", k, m, m / p }'
done
