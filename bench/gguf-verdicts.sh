#!/usr/bin/env bash
# Every generated test case of internal/fixture.VerdictCases (malformed
# files, header-only files in ggml's padded and gguf-py's unpadded form, a
# valid model) put in front of ggml's own GGUF loader, gguf_init_from_file
# (ggml 0.27.0, as llama.cpp's model loader calls it: no_alloc, tensors
# created in a ggml context). For files without tensors it also records the
# size and sha256 of what ggml's writer (gguf_write_to_file) writes back.
# gguf/verdicts_test.go compares our reader's verdicts and our identity
# rewrites with these, without llama.cpp.
#
# ggml is found as bench/llama-logits.sh finds it (LLAMA_CPP_ROOT, default
# /tmp/lcpp/root: Debian sid's libggml0/libggml-dev 0.27.0 extracted, run
# through their own glibc loader).
#
# Usage: bench/gguf-verdicts.sh [--update]
#   --update  rewrite gguf/testdata/ggml-verdicts.txt; otherwise compare
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lroot=${LLAMA_CPP_ROOT:-/tmp/lcpp/root}
llib=${LLAMA_CPP_LIB:-$lroot/usr/lib/x86_64-linux-gnu}
linc=${LLAMA_CPP_INCLUDE:-$lroot/usr/include}
[ -f "$linc/gguf.h" ] || { echo "gguf.h not found under $linc" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -I"$linc" -o "$work/gguf-verdict" "$root/bench/gguf-verdict.c" -L"$llib" -lggml-base -lggml \
  -Wl,--allow-shlib-undefined
mkdir "$work/cases" "$work/out"
(cd "$root" && go run ./bench/ggufcases -o "$work/cases")
run=("$work/gguf-verdict")
if [ -x "$llib/ld-linux-x86-64.so.2" ]; then
  run=("$llib/ld-linux-x86-64.so.2" --library-path "$llib:$lroot/lib/x86_64-linux-gnu" "$work/gguf-verdict")
else
  export LD_LIBRARY_PATH=$llib
fi
{
  echo "# name verdict [rewrite-bytes rewrite-sha256]: ggml 0.27.0 gguf_init_from_file, made by bench/gguf-verdicts.sh"
  "${run[@]}" "$work/out" "$work"/cases/*.gguf 2>/dev/null | while read -r name verdict rewrite; do
    name=${name%.gguf}
    if [ "$verdict" = ok ] && [ "$rewrite" != - ]; then
      echo "$name ok $(stat -c %s "$rewrite") $(sha256sum "$rewrite" | cut -d' ' -f1)"
    else
      echo "$name $verdict"
    fi
  done
} >"$work/verdicts.txt"
golden=$root/gguf/testdata/ggml-verdicts.txt
if [ "${1:-}" = --update ]; then
  cp "$work/verdicts.txt" "$golden"
  echo "wrote $golden ($(grep -vc '^#' "$golden") cases)"
else
  diff -u "$golden" "$work/verdicts.txt" && echo "ggml's verdicts unchanged ($(grep -vc '^#' "$golden") cases)"
fi
