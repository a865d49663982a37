#!/bin/sh
# Attention speed per KV cache type (engine's BenchmarkKVAttention: one
# query over 4096 positions, 8 heads of 64): the types' runs alternate
# (-count rounds of f32, f16, q8_0), and the f16 and q8_0 medians are
# printed as ratios to f32's, with the load average (the figures mean
# little on a loaded machine).
# Usage: bench/kvattn.sh [rounds] [extra go test flags]
set -e
cd "$(dirname "$0")/.."
rounds=${1:-7}
[ $# -gt 0 ] && shift
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./engine -run '^$' -bench '^BenchmarkKVAttention$' -benchtime 20x -count "$rounds" "$@" |
awk '
/^BenchmarkKVAttention\// {
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[2]); n[p[2]]++; v[p[2], n[p[2]]] = $3
}
function median(k,   i, j, t, a, m) {
	m = n[k]
	for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	f = median("f32")
	for (k in n) printf "%-5s median %.0f ns/op over %d runs, %.2fx f32\n", k, median(k), n[k], median(k) / f
	"cut -d\" \" -f1-3 /proc/loadavg" | getline load
	print "load average after: " load
}'
