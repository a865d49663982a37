#!/usr/bin/env bash
# Runs every CI recipe (recipes/ci/*.yaml on ../shared files, recipes/ci/gen/
# *.yaml on generated models) with the host binary and with the device
# binaries (linux/arm64, linux/arm GOARM=7) under qemu user emulation, with
# 1 and 2 threads, and checks that every run writes the recipe's pinned
# sha256: the same recipe gives the same bytes on every architecture.
# Usage: bench/device-recipes.sh [DIST_DIR]   (needs qemu-aarch64-static and
# qemu-arm-static for the device runs; without them only the host runs)
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
go build -o "$T/gguf" ./cmd/gguf
# The generated models, next to copies of their recipes.
mkdir -p "$T/gen"
cp recipes/ci/gen/*.yaml "$T/gen/"
for m in ci-dense ci-moe; do
  go run ./bench/genmodel -fixture "$m" -imatrix "$T/gen/$m-imatrix.gguf" -o "$T/gen/$m.gguf" 2>/dev/null
done
runners=("host:$T/gguf")
if command -v qemu-aarch64-static >/dev/null && command -v qemu-arm-static >/dev/null; then
  runners+=("arm64:qemu-aarch64-static $dist/gguf-linux-arm64" "armv7:qemu-arm-static $dist/gguf-linux-armv7")
else
  echo "device-recipes: qemu-user-static unavailable: host runs only"
fi
fail=0
for r in recipes/ci/*.yaml "$T"/gen/*.yaml; do
  name=$(basename "$r" .yaml)
  want=$(sed -n 's/^  sha256: \([0-9a-f]\{64\}\)$/\1/p' "$r" | tail -1)
  for runner in "${runners[@]}"; do
    arch=${runner%%:*}; bin=${runner#*:}
    for t in 1 2; do
      out="$T/$name-$arch-t$t.gguf"
      start=$(date +%s.%N)
      if $bin recipe run "$r" -t "$t" -q -o "$out" 2>"$T/err"; then
        got=$(sha256sum "$out" | cut -d' ' -f1)
        printf 'device-recipes: %-20s %-6s -t %d  sha256 %s  %s  %.1fs\n' "$name" "$arch" "$t" "$got" \
          "$([ "$got" = "$want" ] && echo same || echo DIFFERENT)" "$(echo "$(date +%s.%N) - $start" | bc)"
        [ "$got" = "$want" ] || fail=1
      else
        echo "device-recipes: $name $arch -t $t FAILED: $(cat "$T/err")"; fail=1
      fi
    done
  done
done
if [ "$fail" = 0 ]; then
  echo "device-recipes: every recipe gave its pinned sha256 on ${#runners[@]} architecture(s), 1 and 2 threads"
fi
exit "$fail"
