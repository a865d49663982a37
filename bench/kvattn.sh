#!/bin/sh
# Attention speed per KV cache type (engine's BenchmarkKVAttention: one
# query over 4096 positions, 8 heads of 64), exact and pruned (--attn-eps
# 1e-3): the runs alternate (-count rounds of every variant), and each
# median of the CPU time per op (the benchmark's thread's, cpu-ns/op: wall
# time on a shared machine measures the other jobs) is printed as a ratio
# to exact f32's, with the wall-time medians and the load average.
# Usage: bench/kvattn.sh [rounds] [extra go test flags]
set -e
cd "$(dirname "$0")/.."
rounds=${1:-7}
[ $# -gt 0 ] && shift
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./engine -run '^$' -bench '^BenchmarkKVAttention$' -benchtime 20x -count "$rounds" "$@" |
awk '
/^BenchmarkKVAttention\// {
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[2]); n[p[2]]++; w[p[2], n[p[2]]] = $3
	for (i = 5; i < NF; i++) if ($(i + 1) == "cpu-ns/op") v[p[2], n[p[2]]] = $i
}
function median(k, x,   i, j, t, a, m) {
	m = n[k]
	for (i = 1; i <= m; i++) a[i] = x == "w" ? w[k, i] : v[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	f = median("f32", "v")
	for (k in n) printf "%-13s median %.0f cpu-ns/op over %d runs, %.2fx f32 (wall %.0f ns/op)\n", k, median(k, "v"), n[k], median(k, "v") / f, median(k, "w")
	"cut -d\" \" -f1-3 /proc/loadavg" | getline load
	print "load average after: " load
}'
