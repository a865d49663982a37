#!/usr/bin/env bash
# The vnni set's 512-bit pair kernels against its 256-bit group kernels
# ("vnni256": the same set without them), measured alternately in one
# process, with the median of each case's CPU time per op (cpu-ns/op, the
# thread's CLOCK_THREAD_CPUTIME_ID: on a machine shared with other work the
# wall time counts the waits for a core) and of its wall time, and the
# ratios 256-bit/512-bit (above 1: the 512-bit kernels are faster).
#
#   kernels: BenchmarkPacked, one 256x4096 matrix in cache, RUNS rounds:
#            gemv (one activation row) and x4 (four), Q4_0, Q8_0, Q4_K,
#            Q6_K;
#   model:   BenchmarkPacked512Model, the dense matrices of one generated
#            token of the 254 M-parameter llama (from memory) in each of
#            those types, 1 and 2 threads, 5 alternations;
#   head:    BenchmarkPacked512Head, the Q6_K head of Qwen3-0.6B (151936 x
#            1024, from memory), as model.
#
# The load average is printed before and after. Needs AVX-512 VNNI.
# Usage: bench/packed512.sh [kernels|model|head] [RUNS]   (default kernels 9)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-kernels}
runs=${2:-9}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/kernels.test" ./kernels)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
case $what in
kernels)
	for ((i = 0; i < runs; i++)); do
		"$tmp/kernels.test" -test.run '^$' -test.benchtime 300x \
			-test.bench 'Packed/(Q8_0|Q4_0|Q4_K|Q6_K)/vnni(256)?/(gemv|x4)/(groups|pairs)$' >>"$tmp/out"
	done
	;;
model)
	"$tmp/kernels.test" -test.run '^$' -test.bench 'Packed512Model' -test.benchtime 5x >"$tmp/out"
	;;
head)
	"$tmp/kernels.test" -test.run '^$' -test.bench 'Packed512Head' -test.benchtime 10x >"$tmp/out"
	;;
*)
	echo "usage: bench/packed512.sh [kernels|model|head] [RUNS]" >&2
	exit 2
	;;
esac
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -q 'vnni256' "$tmp/out" || { echo "no vnni256 runs: this CPU has no 512-bit VNNI kernels" >&2; exit 1; }
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/#[0-9]+$/, "", name); sub(/^Benchmark[^\/]*\//, "", name)
	wall[name] = wall[name] " " $3
	for (i = 4; i < NF; i++) if ($(i + 1) == "cpu-ns/op") cpu[name] = cpu[name] " " $i
	if (name ~ /\/vnni(\/|$)/ && !(name in seen)) { seen[name] = 1; order[++n] = name }
}
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-24s %14s %14s %9s %11s\n", "case (512-bit)", "256 cpu-ns/op", "512 cpu-ns/op", "cpu ratio", "wall ratio"
	for (i = 1; i <= n; i++) {
		nk = order[i]; ok = nk; sub(/\/vnni/, "/vnni256", ok); sub(/pairs$/, "groups", ok)
		if (!(ok in cpu)) continue
		o = median(cpu[ok]); w = median(cpu[nk])
		printf "%-24s %14.0f %14.0f %9.2f %11.2f\n", nk, o, w, o / w, median(wall[ok]) / median(wall[nk])
	}
}' "$tmp/out"
