#!/usr/bin/env bash
# Static instruction counts of the ARM assembly kernels' loops (arm64 and
# armv7): each loop's length (from go tool objdump of package kernels' test
# binary: the backward branch's distance) over the weights one iteration
# handles. The loop bodies are straight-line, so this is what an iteration
# executes: on arm64 the whole dot (sums, scales, float steps), on armv7
# the integer sums only (Go scales them). bench/icount.sh counts what the
# kernels execute in all, against ggml-cpu's.
# Usage: bench/arm64-loops.sh > kernels/testdata/arm64-loops.txt
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
GOARCH=arm64 go test -c -o "$T/kernels-arm64.test" ./kernels
GOARCH=arm GOARM=7 go test -c -o "$T/kernels-armv7.test" ./kernels
go tool objdump -s 'kernels\.(q[0-9]_[0-9K](Sums|Dot)(NEON|SDOT)|dotF32NEON)\.abi0$' "$T/kernels-arm64.test" > "$T/arm64.txt"
go tool objdump -s 'kernels\.q[0-9]_[0-9K]SumsNEON$' "$T/kernels-armv7.test" > "$T/armv7.txt"
echo "# arch	kernel	loop	instructions	weights	per-weight   (bench/arm64-loops.sh, $(go env GOVERSION))"
python3 - "$T/arm64.txt" "$T/armv7.txt" <<'PY'
import re, sys
weights = {'q8_0': 32, 'q4_K': 256, 'q6_K': 256, 'q2_K': 256, 'q1_0': 128, 'q2_0': 64, 'dotF32': 16}
for arch, path in (('arm64', sys.argv[1]), ('armv7', sys.argv[2])):
    fn, cur = {}, None
    for line in open(path):
        if line.startswith('TEXT'):
            cur = re.search(r'kernels\.(\w+)', line).group(1)
            fn[cur] = []
        elif cur and line.strip():
            p = [x for x in line.split('\t') if x]
            if len(p) >= 4:
                fn[cur].append((int(p[1], 16), p[3].strip()))
    for f, ins in sorted(fn.items()):
        base = next(k for k in weights if f.startswith(k))
        for addr, s in ins:
            m = re.match(r'(BNE|BGE)\s+(-\d+)\(PC\)', s)          # arm64 syntax
            m7 = re.match(r'B\.(NE|GE)\s+0x([0-9a-f]+)', s)       # arm syntax
            if m:
                kind, n = m.group(1), -int(m.group(2)) + 1
            elif m7 and int(m7.group(2), 16) < addr:
                kind, n = 'B' + m7.group(1), (addr - int(m7.group(2), 16)) // 4 + 1
            else:
                continue
            # arm64's Q8_0 has a four-block loop (BGE) and a one-block tail (BNE)
            quad = arch == 'arm64' and base == 'q8_0'
            w = weights[base] * (4 if quad and kind == 'BGE' else 1)
            loop = 'tail' if quad and kind == 'BNE' else 'main'
            print(f"{arch}\t{f}\t{loop}\t{n}\t{w}\t{n / w:.3f}")
PY
