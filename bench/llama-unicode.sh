#!/usr/bin/env bash
# vocabselect's code point tables (lowercase, NFD, category flags) and UTF-8
# decoder against the real llama.cpp's, for every code point and for every
# lead byte with every second byte: bench/llama-unicode-dump.cpp calls
# libllama's own functions, and vocabselect's TestLlamaCppUnicodeDump
# compares every line.
#
# llama.cpp is found as bench/llama-tokenize.sh finds it (LLAMA_CPP_ROOT,
# LLAMA_CPP_LIB, LLAMA_CPP_LOADER; default /tmp/lcpp/root); it needs g++.
# Exit status: 0 identical, 1 some differ, 2 llama.cpp or g++ missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lroot=${LLAMA_CPP_ROOT:-/tmp/lcpp/root}
llib=${LLAMA_CPP_LIB:-$lroot/usr/lib/x86_64-linux-gnu}
loader=${LLAMA_CPP_LOADER:-}
if [ -z "$loader" ] && [ -x "$llib/ld-linux-x86-64.so.2" ]; then
  loader=$llib/ld-linux-x86-64.so.2
fi
[ "$loader" = none ] && loader=
ls "$llib"/libllama.so* >/dev/null 2>&1 || { echo "llama.cpp not found: no libllama.so in $llib (set LLAMA_CPP_ROOT or LLAMA_CPP_LIB)" >&2; exit 2; }
command -v g++ >/dev/null || { echo "g++ not found: cannot build the llama.cpp dump" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -o "$tmp/dump" "$root/bench/llama-unicode-dump.cpp" -L"$llib" -lllama -Wl,--allow-shlib-undefined
run() {
  if [ -n "$loader" ]; then
    "$loader" --library-path "$llib:$llib/ggml" "$tmp/dump" "$@"
  else
    LD_LIBRARY_PATH="$llib:$llib/ggml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/dump" "$@"
  fi
}
run tables >"$tmp/tables.txt"
run utf8 >"$tmp/utf8.txt"
cd "$root"
LLAMACPP_UNICODE_TABLES=$tmp/tables.txt LLAMACPP_UNICODE_UTF8=$tmp/utf8.txt \
  go test -count=1 -run TestLlamaCppUnicodeDump -v ./vocabselect
