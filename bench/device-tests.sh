#!/usr/bin/env bash
# Runs the whole test suites of the packages that compute bytes and logits
# (kernels, engine, quant, layout, experts and their subpackages) on the devices'
# architectures under qemu user emulation, so a device computes what the
# amd64 tests prove (issue 24: a chosen subset let arm64 digests and a
# bailingmoe3 cross-check differ unseen):
#   arm64 -cpu max          the dotprod kernel set (SDOT, NEON)
#   arm64 -cpu cortex-a57   the neon set (ARMv8.0, no dot product: the iPad's A7)
#   armv7 (GOARM=7)         quant's and kernels' whole suites (NEON
#                           Q8_0 assembly, the rest portable Go): each
#                           assembly kernel bit for bit against plain Go integer
#                           sums, every installed kernel against the references
#                           and ggml's own results, the q2lut and group kernels
#                           against the row layout
# Every package's tests run, none skipped; -short trims the slowest
# cross-checks inside a package as it does on the host (one synthetic
# model's perplexity instead of all). The two arm64 CPUs run side by side,
# one per core. Each line printed gives the package, the emulated CPU and
# the seconds it took.
# Usage: bench/device-tests.sh [-full]  (needs qemu-aarch64-static and qemu-arm-static)
set -euo pipefail
cd "$(dirname "$0")/.."
short=-test.short
[ "${1:-}" = -full ] && short=
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
arm64_pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./kernels/... ./engine/... ./quant/... ./layout/... ./experts/...)
armv7_pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./quant/... ./kernels)
mod=$(go list -m)
build() { # GOARCH GOARM PKG... : test binaries into $T/$GOARCH
  local arch=$1 arm=$2; shift 2
  mkdir -p "$T/$arch"
  for p in "$@"; do
    CGO_ENABLED=0 GOARCH=$arch GOARM=$arm go test -c -o "$T/$arch/$(echo "${p#"$mod"/}" | tr / _).test" "$p"
  done
}
# shellcheck disable=SC2086 # the package lists are words
build arm64 7 $arm64_pkgs
# shellcheck disable=SC2086
build arm 7 $armv7_pkgs
run() { # LABEL ARCH EMULATOR... : every test binary of ARCH, from its package's directory
  local label=$1 arch=$2; shift 2
  local p dir bin start out
  for p in $([ "$arch" = arm64 ] && echo "$arm64_pkgs" || echo "$armv7_pkgs"); do
    dir=${p#"$mod"/}
    bin=$T/$arch/$(echo "$dir" | tr / _).test
    start=$(date +%s)
    if ! out=$(cd "$dir" && "$@" "$bin" $short -test.timeout 60m 2>&1); then
      echo "$out" | tail -40
      echo "device-tests: $dir under $label FAILED"
      return 1
    fi
    echo "device-tests: $dir under $label: ok in $(($(date +%s) - start)) s"
  done
}
start=$(date +%s)
run "arm64 -cpu max" arm64 qemu-aarch64-static -cpu max > "$T/max.log" 2>&1 &
max=$!
run "arm64 -cpu cortex-a57" arm64 qemu-aarch64-static -cpu cortex-a57 > "$T/a57.log" 2>&1 &
a57=$!
status=0
wait $max || status=1
wait $a57 || status=1
cat "$T/max.log" "$T/a57.log"
run "armv7" arm qemu-arm-static || status=1
echo "device-tests: $(($(date +%s) - start)) s in all"
exit $status
