#!/usr/bin/env bash
# The kernels' K-quant, Q4_0 and Q8_0 dot kernels against ggml-cpu's own, bit for bit:
# writes kernels/testdata/llamacpp/vecdot-haswell.txt, which
# TestKQuantAgainstHaswell (kernels/kernels_haswell_test.go) checks.
#
# The test writes its inputs (GGUF_VECDOT_INPUTS), bench/ggml-vecdot.c
# (built here with gcc) dlopens the backend and runs its
# ggml_vec_dot_<type>_q8_K (q8_0 for Q4_0 and Q8_0) on them. Environment as bench/llama-logits.sh:
#   LLAMA_CPP_ROOT     default /tmp/lcpp/root (Debian's libggml0 extracted)
#   LLAMA_CPP_LIB      default $LLAMA_CPP_ROOT/usr/lib/x86_64-linux-gnu
#   LLAMA_CPP_LOADER   default $LLAMA_CPP_LIB/ld-linux-x86-64.so.2 if present,
#                      "none" to run directly
#   GGML_BACKEND_PATH  default $LLAMA_CPP_LIB/ggml/backends0/libggml-cpu-haswell.so
#
# Usage: bench/ggml-vecdot.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lroot=${LLAMA_CPP_ROOT:-/tmp/lcpp/root}
llib=${LLAMA_CPP_LIB:-$lroot/usr/lib/x86_64-linux-gnu}
loader=${LLAMA_CPP_LOADER:-}
if [ -z "$loader" ] && [ -x "$llib/ld-linux-x86-64.so.2" ]; then
  loader=$llib/ld-linux-x86-64.so.2
fi
[ "$loader" = none ] && loader=
backend=${GGML_BACKEND_PATH:-$llib/ggml/backends0/libggml-cpu-haswell.so}
[ -f "$backend" ] || { echo "no ggml backend at $backend" >&2; exit 2; }
command -v gcc >/dev/null || { echo "gcc missing" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -o "$tmp/ggml-vecdot" "$root/bench/ggml-vecdot.c" -ldl
(cd "$root" && GGUF_VECDOT_INPUTS=$tmp go test ./kernels -run '^TestKQuantAgainstHaswell$' -count=1 >/dev/null)

run() {
  if [ -n "$loader" ]; then
    "$loader" --library-path "$llib:$llib/ggml:$lroot/lib/x86_64-linux-gnu" "$@"
  else
    LD_LIBRARY_PATH=$llib:$llib/ggml "$@"
  fi
}

out=$root/kernels/testdata/llamacpp/vecdot-haswell.txt
{
  echo "# ggml_vec_dot_<type>_<q8_K|q8_0> of $(basename "$backend") on TestKQuantAgainstHaswell's rows"
  echo "# (1024 values, 64 rows per type); written by bench/ggml-vecdot.sh. TYPE row float32-bits"
  for spec in Q2_K:q2_K_q8_K:84:4 Q3_K:q3_K_q8_K:110:4 Q4_K:q4_K_q8_K:144:4 Q5_K:q5_K_q8_K:176:4 Q6_K:q6_K_q8_K:210:4 \
    Q4_0:q4_0_q8_0:18:32 Q8_0:q8_0_q8_0:34:32; do
    IFS=: read -r typ sym bytes blocks <<<"$spec"
    run "$tmp/ggml-vecdot" "$backend" "ggml_vec_dot_${sym}" 1024 $((blocks * bytes)) "$tmp/$typ.w" "$tmp/$typ.a" |
      awk -v t="$typ" '{ print t, NR-1, $1 }'
  done
} >"$out"
echo "wrote $out"
