#!/usr/bin/env bash
# Remote build throughput against a local build of the same file, measured
# in the same run (source.BenchmarkRemoteBuild): a 64 MiB GGUF file rebuilt
# from the loopback Hub (hfremote/hubtest) whose answers wait 20 ms and whose
# CDN sends at most 32 MiB/s per connection, with 1, 4 and 8 range requests
# in flight, and from a local copy in the same iteration. The remote time
# includes the resolve, the header reads and the sha256 check of the whole
# file.
#
# Output: one line per concurrency with remote_MB/s, local_MB/s and
# x_local_time (remote time / local time).
#
# Usage: bench/remote.sh [ITERATIONS]   (default 3)
set -euo pipefail
n=${1:-3}
cd "$(dirname "$0")/.."
go test ./source -run '^$' -bench '^BenchmarkRemoteBuild$' -benchtime "${n}x" | grep -E '^(Benchmark|cpu)'
