#!/usr/bin/env bash
# CPU time per 4096-weight row product of the amd64 ternary kernels
# (BenchmarkTernary/SET/..., package kernels) and of ggml-cpu's own TQ1_0
# and TQ2_0 kernels (ggml_vec_dot_tq*_q8_K of Debian's
# libggml-cpu-haswell.so through bench/icount-ggml.c), in ROUNDS
# alternated rounds. Each is run for LO and 3*LO calls and timed in user+
# sys CPU seconds, whose difference over 2*LO calls is the figure: start-up
# cancels, and on a loaded machine CPU time is steadier than the wall time
# go test -bench reports (the 10 ms clock of the rusage figures limits a
# round to about +-15 ns).
#
# Usage: bench/ternary-cpu.sh [ROUNDS]   (environment: SET, default avx2;
# llama.cpp found as by bench/lcpp-env.sh, backend LCPP_BACKEND=haswell;
# KERNELS, the kernels to run, default all: e.g. "TQ1_0/int ggml/tq1_0";
# BASE=REV adds the same kernels of git revision REV, "base/KERNEL",
# built from its tree, alternated with the others in every round; LO, the
# calls of the short run, default 1000000 (300000 for Q2_0's kernels))
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
export LCPP_BACKEND=${LCPP_BACKEND:-haswell}
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/kernels.test" ./kernels)
if [ -n "${BASE:-}" ]; then
  mkdir "$tmp/base"
  git -C "$root" archive "$BASE" | tar -x -C "$tmp/base"
  (cd "$tmp/base" && go test -c -o "$tmp/base.test" ./kernels)
fi
# x86 gcc has no __fp16 (the harness's F16 branch, unused here).
gcc -O2 -D__fp16=_Float16 -I "$root/bench" -o "$tmp/icount-ggml" "$root/bench/icount-ggml.c" -ldl
set_=${SET:-avx2}
cpu() { # CPU seconds of a command
  /usr/bin/time -f "%U %S" "$@" >/dev/null 2>"$tmp/time"
  tail -1 "$tmp/time" | awk '{print $1 + $2}'
}
run() { # kernel name, calls
  case $1 in
  ggml/*) cpu ${loader:+"$loader"} ${loader:+--library-path "$libpath"} "$tmp/icount-ggml" "$GGML_BACKEND_PATH" \
    "ggml_vec_dot_${1#ggml/}_q8_K" 4096 1056 4672 "$2" ;;
  base/*) (cd "$root/kernels" && cpu "$tmp/base.test" -test.run '^$' \
    -test.bench "^BenchmarkTernary\$/^$set_\$/^$(k=${1#base/}; echo "${k%%/*}")\$/^${1##*/}\$" -test.benchtime "${2}x") ;;
  *) (cd "$root/kernels" && cpu "$tmp/kernels.test" -test.run '^$' \
    -test.bench "^BenchmarkTernary\$/^$set_\$/^${1%%/*}\$/^${1#*/}\$" -test.benchtime "${2}x") ;;
  esac
}
kernels=${KERNELS:-TQ1_0/int TQ2_0/int ter3/TQ2_0 ter2/TQ2_0 ter2s128/TQ2_0 Q2_0/int ter3/Q2_0 ter2/Q2_0 ter2s128/Q2_0 ggml/tq1_0 ggml/tq2_0}
if [ -n "${BASE:-}" ]; then
  with=
  for k in $kernels; do
    with="$with $k"
    case $k in ggml/*) ;; *) with="$with base/$k" ;; esac
  done
  kernels=$with
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for k in $kernels; do
    lo=${LO:-1000000}
    case $k in *Q2_0*) lo=${LO:-300000} ;; esac
    a=$(run "$k" "$lo") b=$(run "$k" $((3 * lo)))
    echo "$k $(awk -v a="$a" -v b="$b" -v n=$((2 * lo)) 'BEGIN{printf "%.0f", (b - a) / n * 1e9}')" >>"$tmp/runs.txt"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-16s %s\n" kernel "ns/row (median; rounds)"
awk '{v[$1] = v[$1] " " $2} END {for (k in v) print k, v[k]}' "$tmp/runs.txt" | sort |
  while read -r k vals; do
    printf "%-16s %s  (%s)\n" "$k" "$(tr ' ' '\n' <<<"$vals" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')" "$vals"
  done
