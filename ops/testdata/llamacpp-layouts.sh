#!/usr/bin/env bash
# Loads the layout fixtures (ops/layout_test.go: layoutFixtures) with stock
# llama.cpp's llama-simple and records, per file, its sha256 and whether
# llama.cpp loaded it ("loaded") or the line of its load error. Writes
# ops/testdata/llamacpp-layouts.txt; TestLlamaCppRefusesLayouts checks it.
# llama.cpp: LRUN (default /tmp/lcpp/lrun, see README.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
LRUN=${LRUN:-/tmp/lcpp/lrun}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
GGUF_LAYOUT_FIXTURES=$dir go test ./ops -run TestWriteLayoutFixtures -count=1 >/dev/null
out=ops/testdata/llamacpp-layouts.txt
{
  echo "# llama.cpp $("$LRUN" llama-cli --version 2>&1 | grep -m1 "^version" || true), ggml 0.27.0 CPU backend (see README.txt)"
  echo "# llama-simple -m FILE -n 2 't1 t2'; FILE SHA256 RESULT"
  for f in moe-q2k-el moe-q2lut dense-q2_0 dense-q2_0-ter3 head-q2_0 head-q2_0-ter2; do
    sum=$(sha256sum "$dir/$f.gguf" | cut -d' ' -f1)
    log=$(timeout 120 "$LRUN" llama-simple -m "$dir/$f.gguf" -n 2 't1 t2' 2>&1 || true)
    res=$(grep -m1 'error loading model' <<<"$log" || true)
    if [ -z "$res" ]; then
      grep -q 'llama_perf_context_print' <<<"$log" && res=loaded || res="no result"
    fi
    echo "$f.gguf $sum $res"
  done
} >"$out"
cat "$out"
