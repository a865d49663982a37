#!/usr/bin/env bash
# Runs the whole test suites of the packages that compute bytes and logits
# (engine, quant, layout, experts and their subpackages) on the devices'
# architectures under qemu user emulation, so a device computes what the
# amd64 tests prove (issue 24: a chosen subset let arm64 digests and a
# bailingmoe3 cross-check differ unseen):
#   arm64 -cpu max          the dotprod kernel set (SDOT, NEON)
#   arm64 -cpu cortex-a57   the neon set (ARMv8.0, no dot product: the iPad's A7)
#   armv7 (GOARM=7)         quant's whole suite, and engine's kernel tests (NEON
#                           Q8_0 assembly, the rest portable Go): each
#                           assembly kernel bit for bit against plain Go integer
#                           sums, every installed kernel against the references
#                           and ggml's own results, the q2lut and group kernels
#                           against the row layout; and amd64's portable logits
#                           bit for bit (TestPortableBitsEverywhere) and
#                           llama.cpp's greedy text (TestStories260KGreedy)
# Every package's tests run, none skipped; -short trims the slowest
# cross-checks inside a package as it does on the host (one synthetic
# model's perplexity instead of all). The two arm64 CPUs run side by side,
# one per core. Each line printed gives the package, the emulated CPU, the
# seconds it took, its slowest tests (20 s or more) and, for engine, which
# assembly kernel variants ran (so a CPU model without SDOT or a build
# without assembly cannot pass unnoticed).
# Usage: bench/device-tests.sh [-full]  (needs qemu-aarch64-static and qemu-arm-static)
set -euo pipefail
cd "$(dirname "$0")/.."
short=-test.short
[ "${1:-}" = -full ] && short=
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The kernels, wherever they live: in engine, or in their own package
# kernels/ (all of whose tests are kernel tests, run on armv7 too).
kernels=()
[ -d kernels ] && kernels=(./kernels/...)
list() { go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@"; }
arm64_pkgs=$(list ./engine/... ./quant/... ./layout/... ./experts/... "${kernels[@]}")
armv7_pkgs=$(list ./quant/... ./engine "${kernels[@]}")
# What armv7 runs of engine: its kernel tests (a 32-bit device runs small
# dense models) and the bit-equality checks with amd64.
armv7_engine='^(TestArmSums|TestArmDots|TestKernelsAgainstGGML|TestActivationQuantizers|TestFastKernelsMatchReference|TestDot4|TestScores|TestSelectKernels|TestKernelSelection|TestLowBitKernels|TestQ2LUTAsm|TestQ2LUTKernelBitExact|TestPackedKernels|TestVdots|TestPortableBitsEverywhere|TestStories260KGreedy)$'
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
# slowest LOG: the top-level tests of a -test.v log that took 20 s or more,
# slowest first ("TestX 35s, ...").
slowest() {
  sed -n 's/^--- [A-Z]*: \(Test[^ ]*\) (\([0-9]*\)\.[0-9]*s)$/\2 \1/p' "$1" |
    sort -rn | awk '$1 >= 20 { printf "%s%s %ds", n++ ? ", " : "", $2, $1 }'
}
# variants LOG: the assembly kernels an engine log says ran (device-kernels.sh's summary).
variants() {
  sed -n 's/.*\(arm\|q2lut\) kernels: \([^(]*[^ (]\).*/\1 \2/p; s/.*\(Q[0-9A-Z_]*\): group kernels \(\[[^]]*\]\).*/\1 groups \2/p' "$1" | sort -u | paste -sd';'
}
run() { # LABEL ARCH EMULATOR... : every test binary of ARCH, from its package's directory
  local label=$1 arch=$2; shift 2
  local p dir bin start log sel slow vars
  for p in $([ "$arch" = arm64 ] && echo "$arm64_pkgs" || echo "$armv7_pkgs"); do
    dir=${p#"$mod"/}
    bin=$T/$arch/$(echo "$dir" | tr / _).test
    log=$T/$(echo "$label $dir" | tr -c 'a-z0-9\n' _).log
    start=$(date +%s)
    sel=()
    [ "$arch" = arm ] && [ "$dir" = engine ] && sel=(-test.run "$armv7_engine")
    if ! (cd "$dir" && "$@" "$bin" $short -test.v -test.timeout 60m "${sel[@]}") > "$log" 2>&1; then
      grep -v '^=== \|^    --- PASS\|^--- PASS' "$log" | tail -40 || true
      echo "device-tests: $dir under $label FAILED"
      return 1
    fi
    slow=$(slowest "$log")
    vars=
    [ "$dir" = engine ] && vars=$(variants "$log")
    echo "device-tests: $dir under $label: ok in $(($(date +%s) - start)) s${slow:+ (slowest: $slow)}${vars:+ [$vars]}"
  done
}
start=$(date +%s)
echo "device-tests: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
run "arm64 -cpu max" arm64 qemu-aarch64-static -cpu max > "$T/max.log" 2>&1 &
max=$!
run "arm64 -cpu cortex-a57" arm64 qemu-aarch64-static -cpu cortex-a57 > "$T/a57.log" 2>&1 &
a57=$!
status=0
wait $max || status=1
wait $a57 || status=1
cat "$T/max.log" "$T/a57.log"
run "armv7" arm qemu-arm-static || status=1
echo "device-tests: $(($(date +%s) - start)) s in all (load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
exit $status
