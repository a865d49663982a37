#!/usr/bin/env bash
# Head pruning of a ~1 GiB synthetic model: peak RSS and throughput, as a
# ratio against plain copies of the same file (cp and cat) in the same run.
# gguf build fsyncs its output before renaming it, so the copies are timed
# with the same durability (sync FILE after the copy), and all dirty pages
# are flushed before each timed step so no step pays for another's writes.
# Usage: bench/build-1g.sh [runs]   (needs ~4 GB free in $TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
go build -o "$T/gguf" ./cmd/gguf
for tied in true false; do
  model="$T/big-tied-$tied.gguf"
  go run ./bench/genmodel -o "$model" -tied=$tied
  size=$(stat -c %s "$model")
  # A frequency-like ranked list: 65,668 ids (the seeds' H65 size).
  awk 'BEGIN { for (i = 0; i < 131072; i += 2) print i; for (i = 1; i < 2000; i += 2) print i }' > "$T/ids.txt"
  cat "$model" > /dev/null   # warm the page cache for every contender
  for r in $(seq "$runs"); do
    sync; t0=$(date +%s.%N); cp "$model" "$T/copy.gguf"; sync "$T/copy.gguf"; t1=$(date +%s.%N)
    rm -f "$T/copy.gguf"
    sync; t2=$(date +%s.%N); cat "$model" > "$T/copy.gguf"; sync "$T/copy.gguf"; t3=$(date +%s.%N)
    rm -f "$T/copy.gguf"
    sync; t5=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$T/rss" "$T/gguf" build "$model" --head-ids "$T/ids.txt" --head-rows 65668 -q -o "$T/out.gguf" 2> "$T/log"
    t4=$(date +%s.%N)
    out=$(stat -c %s "$T/out.gguf")
    rm -f "$T/out.gguf"
    awk -v tied="$tied" -v size="$size" -v out="$out" -v cp="$(echo "$t1 - $t0" | bc)" -v cat="$(echo "$t3 - $t2" | bc)" \
        -v b="$(echo "$t4 - $t5" | bc)" -v rss="$(tail -1 "$T/rss")" 'BEGIN {
      printf "tied=%s in=%.0f MiB out=%.0f MiB | cp %.2fs (%.0f MB/s)  cat %.2fs (%.0f MB/s)  build %.2fs (%.0f MB/s read, %.0f MB/s written) | build / cp: %.2f by bytes read, %.2f by bytes written | peak RSS %.1f MiB\n",
        tied, size/1048576, out/1048576, cp, size/cp/1e6, cat, size/cat/1e6, b, size/b/1e6, out/b/1e6, cp/b, (out/b)/(size/cp), rss/1024 }'
  done
  rm -f "$model"
done
