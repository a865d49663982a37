#!/usr/bin/env bash
# --moe-direct (uncached expert reads: O_DIRECT) against reads through the
# page cache, on bench/pager.sh's generated MoE (1.76 GB, experts last),
# in a memory cgroup limited to a quarter of the file, as a device whose
# RAM is smaller than the model (the seeds' E140: on an iPad the cached
# reads ran at half the speed, their pages pushing out the mapped
# non-expert weights). Both ways run --moe-pool POOL, alternated ROUNDS
# times, the file's pages dropped from the page cache before each run
# (dd iflag=nocache on the file alone: the machine's other users keep
# their cache); prints each run's tok/s, major faults and the cgroup's
# peak, then the medians and the direct/cached ratio, with the load
# average before and after.
#
# The cgroup: v1 (memory.limit_in_bytes) or v2 (memory.max) under
# /sys/fs/cgroup, which needs root; elsewhere systemd-run --user --scope
# -p MemoryMax= (which needs a user session with the memory controller).
#
# Usage: bench/pager-direct.sh [ROUNDS] [TOKENS] [POOL]  (default 3 32 8)
set -euo pipefail
rounds=${1:-3}
n=${2:-32}
pool=${3:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/pager-model.sh
. bench/pager-model.sh
limit=$(( $(stat -c %s "$model") / 4 ))
cg=""
if [ -w /sys/fs/cgroup/memory ]; then
	cg=/sys/fs/cgroup/memory/gguf-pager-direct.$$
	mkdir "$cg"
	echo "$limit" >"$cg/memory.limit_in_bytes"
	peakf=memory.max_usage_in_bytes
elif [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	cg=/sys/fs/cgroup/gguf-pager-direct.$$
	mkdir "$cg"
	echo "$limit" >"$cg/memory.max"
	peakf=memory.peak
fi
cleanup() { [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true; }
trap cleanup EXIT
run() { # name, flags...
	local name=$1 out
	shift
	dd if="$model" iflag=nocache count=0 status=none
	out=$work/direct-$name.err
	if [ -n "$cg" ]; then
		[ "$peakf" = memory.max_usage_in_bytes ] && echo 0 >"$cg/$peakf"
		sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
			"$work/gguf" run "$model" -p "$prompt" -n "$n" --temp 1 --seed 1 -t 2 --moe-pool "$pool" --moe-stats "$@" >/dev/null 2>"$out"
		peak=$(( $(cat "$cg/$peakf") >> 20 ))
	else
		systemd-run --user --scope -q -p MemoryMax="$limit" \
			"$work/gguf" run "$model" -p "$prompt" -n "$n" --temp 1 --seed 1 -t 2 --moe-pool "$pool" --moe-stats "$@" >/dev/null 2>"$out"
		peak=?
	fi
	tps=$(sed -n 's/.*generated [0-9]* tokens in [^ ]* (\([0-9.]*\) tok\/s).*/\1/p' "$out")
	faults=$(sed -n 's/.* \([0-9]*\) major faults.*/\1/p' "$out" | head -1)
	waited=$(sed -n 's/.*waited \([0-9.]* [a-zµ]*\) per token.*/\1/p' "$out" | head -1)
	echo "$name $tps tok/s, waited ${waited:-?} per token, major faults ${faults:-?}, cgroup peak ${peak} MiB"
	echo "$name $tps" >>"$work/direct-all.txt"
}
: >"$work/direct-all.txt"
echo "limit $((limit >> 20)) MiB (a quarter of the file), pool $pool, $n tokens, $rounds rounds; $(uptime)"
for _ in $(seq "$rounds"); do
	run cached --moe-direct=false
	run direct --moe-direct
done
echo "after: $(uptime)"
med() { grep "^$1 " "$work/direct-all.txt" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
awk -v c="$(med cached)" -v d="$(med direct)" 'BEGIN { printf "median tok/s: cached %.2f, direct %.2f, direct/cached %.2f\n", c, d, d / c }'
