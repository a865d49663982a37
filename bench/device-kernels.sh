#!/usr/bin/env bash
# Runs package kernels' tests on the devices' architectures under qemu
# user emulation: the arm64 test binary with a CPU that has the ARMv8.2 dot
# product (-cpu max: the neon and dotprod assembly both run) and with one
# that has not (-cpu cortex-a57: neon only, as on the iPad's A7), then the
# armv7 (GOARM=7) binary (NEON Q8_0 assembly, the rest portable Go). Each
# assembly kernel is checked bit for bit against plain Go integer sums
# (TestArmSums) and its dot against the portable kernel's (TestArmDots);
# the NEON F32 and F16 dots (one kernel each for both sets) against float64
# dots within their float32 rounding bound (TestArm64FloatDots), F16 also
# bit for bit where every order of the sums agrees (TestArm64F16Exact);
# the shared tests check every installed kernel against the references and
# ggml's own results; the q2lut kernel (NEON TBL under both arm64 CPUs,
# portable Go on armv7) is checked against its portable Go and, through
# the runtime's matmul, against the reference Q2_K kernel bit for bit
# (TestQ2LUTAsm, TestQ2LUTKernelBitExact); the group kernels of the
# interleaved matrices (SDOT by element under dotprod) against the Go one
# and the row layout, bit for bit (TestPackedKernels). Each line printed
# names the variants that ran.
# Usage: bench/device-kernels.sh   (needs qemu-aarch64-static and qemu-arm-static)
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tests='^(TestArmSums|TestArmDots|TestArm64FloatDots|TestArm64F16Exact|TestKernelsAgainstGGML|TestActivationQuantizers|TestFastKernelsMatchReference|TestDot4|TestScores|TestSelectKernels|TestLowBitKernels|TestQ2LUTAsm|TestQ2LUTKernelBitExact|TestPackedKernels|TestVdots|TestICountCoversArm64|TestICountTable)$'
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$T/kernels-arm64.test" ./kernels
CGO_ENABLED=0 GOARCH=arm GOARM=7 go test -c -o "$T/kernels-armv7.test" ./kernels
cd kernels   # the tests find ../shared relative to the package
run() {
  local label=$1; shift
  if ! out=$("$@" -test.run "$tests" -test.v 2>&1); then
    echo "$out"; echo "device-kernels: $label FAILED"; exit 1
  fi
  variants=$(echo "$out" | sed -n 's/.*\(arm\|q2lut\) kernels: \([^(]*[^ (]\).*/\1 \2/p; s/.*\(Q[0-9A-Z_]*\): group kernels \(\[[^]]*\]\).*/\1 groups \2/p' | sort -u | paste -sd';')
  echo "device-kernels: $label: $(echo "$out" | grep -c '^--- PASS') tests pass${variants:+ ($variants)}"
}
run "arm64 -cpu max" qemu-aarch64-static -cpu max "$T/kernels-arm64.test"
run "arm64 -cpu cortex-a57" qemu-aarch64-static -cpu cortex-a57 "$T/kernels-arm64.test"
run "armv7" qemu-arm-static "$T/kernels-armv7.test"
