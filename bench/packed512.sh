#!/usr/bin/env bash
# The vnni set's 512-bit group kernels against its 256-bit ones, in the
# kernels alone (BenchmarkPacked, one 256x4096 matrix): RUNS rounds of the
# test binary, each measuring both (the 256-bit set as "vnni256" right
# after "vnni"), then per type the median of each one's thread CPU time
# per op (cpu-ns/op: the other work of a shared machine takes cores, not
# CPU time; the wall-time ratio is printed too) and the ratio old/new
# (above 1: the 512-bit kernels are faster). Generation: one
# activation row, vnni256/gemv/groups against vnni/gemv/pairs; prompt:
# four rows, vnni256/x4/groups against vnni/x4/pairs. The load average is
# printed before and after.
#
# Usage: bench/packed512.sh [RUNS]   (default 9; needs AVX-512 VNNI)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-9}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/kernels.test" ./kernels)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; i++)); do
	"$tmp/kernels.test" -test.run '^$' -test.bench 'Packed/(Q8_0|Q4_0|Q4_K)/vnni(256)?/(gemv|x4)/(groups|pairs)$' \
		-test.benchtime 300x >>"$tmp/out"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -q 'vnni256' "$tmp/out" || { echo "no vnni256 runs: this CPU has no 512-bit VNNI kernels" >&2; exit 1; }
awk '
/^BenchmarkPacked/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkPacked\//, "", name)
	v[name] = v[name] " " $3
	for (i = 4; i < NF; i++) if ($(i + 1) == "cpu-ns/op") c[name] = c[name] " " $i
}
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	printf "%-6s %-5s %14s %14s %7s %12s\n", "type", "case", "256-bit cpu-ns", "512-bit cpu-ns", "ratio", "wall ratio"
	split("Q4_0 Q8_0 Q4_K", ts, " ")
	split("gemv x4", cs, " ")
	for (i = 1; i <= 3; i++) for (j = 1; j <= 2; j++) {
		ok = ts[i] "/vnni256/" cs[j] "/groups"; nk = ts[i] "/vnni/" cs[j] "/pairs"
		o = median(c[ok]); n = median(c[nk])
		printf "%-6s %-5s %14.0f %14.0f %7.2f %12.2f\n", ts[i], cs[j], o, n, o / n, median(v[ok]) / median(v[nk])
	}
}' "$tmp/out"
