#!/usr/bin/env bash
# Static instruction counts of the arm64 assembly kernels' loops: each
# loop's length (from go tool objdump of the engine's arm64 test binary:
# the backward branch's distance) over the weights one iteration handles.
# Straight-line loop bodies, so this is what an iteration executes; the Go
# side that scales each block's sums is not counted.
# Usage: bench/arm64-loops.sh > engine/testdata/arm64-loops.txt
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
GOARCH=arm64 go test -c -o "$T/engine-arm64.test" ./engine
go tool objdump -s 'engine\.(q[0-9]_[0-9K]Sums(NEON|SDOT)|dotF32NEON)\.abi0$' "$T/engine-arm64.test" > "$T/objdump.txt"
echo "# kernel	loop	instructions	weights	per-weight   (bench/arm64-loops.sh, $(go env GOVERSION))"
python3 - "$T/objdump.txt" <<'PY'
import re, sys
weights = {'q8_0': 32, 'q4_K': 256, 'q6_K': 256, 'q2_K': 256, 'q1_0': 128, 'q2_0': 64, 'dotF32': 16}
fn, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith('TEXT'):
        cur = line.split()[1].split('.')[-2]
        fn[cur] = []
    elif cur and line.strip():
        p = [x for x in line.split('\t') if x]
        if len(p) >= 4:
            fn[cur].append(p[3].strip())
for f, ins in sorted(fn.items()):
    base = next(k for k in weights if f.startswith(k))
    for s in ins:
        m = re.match(r'(BNE|BGE)\s+(-\d+)\(PC\)', s)
        if m:
            n = -int(m.group(2)) + 1
            # the Q8_0 kernels have a four-block loop (BGE) and a one-block tail (BNE)
            w = weights[base] * (4 if base == 'q8_0' and m.group(1) == 'BGE' else 1)
            loop = 'tail' if base == 'q8_0' and m.group(1) == 'BNE' else 'main'
            print(f"{f}\t{loop}\t{n}\t{w}\t{n / w:.3f}")
PY
