#!/usr/bin/env bash
# Runs the device binaries (linux/arm64 and linux/arm GOARM=7) under qemu
# user emulation and checks that `gguf recut` on the device gives the same
# bytes as `gguf build` of the original on the host (the seeds' E29 check).
# Usage: bench/device-recut.sh DIST_DIR   (needs qemu-aarch64-static and qemu-arm-static)
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
go build -o "$T/gguf" ./cmd/gguf
model=../shared/models/stories260K-f32.gguf
"$T/gguf" build "$model" --drop '^output\.weight$' -q -o "$T/tied.gguf" 2>/dev/null   # llama2.c's tied head
seq 0 3 400 > "$T/ids1.txt"
seq 500 -7 10 > "$T/ids2.txt"
"$T/gguf" build "$T/tied.gguf" --head-ids "$T/ids1.txt" -q -o "$T/built.gguf" 2>/dev/null
"$T/gguf" build "$T/tied.gguf" --head-ids "$T/ids2.txt" -q -o "$T/direct.gguf" 2>/dev/null
for pair in arm64:qemu-aarch64-static armv7:qemu-arm-static; do
  bin=${pair%%:*}; emu=${pair##*:}
  "$emu" "$dist/gguf-linux-$bin" recut "$T/built.gguf" --head-ids "$T/ids2.txt" -q -o "$T/recut-$bin.gguf" 2>/dev/null
  if cmp -s "$T/recut-$bin.gguf" "$T/direct.gguf"; then
    echo "device-recut: linux/$bin recut is byte-identical to the host's direct build"
  else
    echo "device-recut: linux/$bin recut DIFFERS from the host's direct build"; exit 1
  fi
done
