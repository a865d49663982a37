#!/usr/bin/env bash
# The expert pager on a generated MoE of >= 1.5 GiB (internal/moegen: a
# Mixtral-style llama, 15 layers, embd 1024, 64 experts of 1024 per layer,
# 4 used, Q4_K experts (8 distinct ones per tensor, repeated), Q8_0
# elsewhere, experts last, a router with Zipf popularity, skew 3), run
# three ways on the same sampled text (temp 1, seed 1):
#
#   mmap     whole file mapped, page cache warm: compute only
#   paged    --moe-pool 16 (1/4 of the experts) under --moe-sim-flash, read
#            through the page cache (--moe-direct=false: the simulated flash
#            alone is the device, as thrash's; bench/pager-direct.sh measures
#            direct I/O)
#   thrash   whole file mapped under the same simulated flash, every
#            weight a token reads charged to it (a page cache that keeps
#            nothing between tokens: stock llama.cpp on a device whose RAM
#            is smaller than the model, the seeds' §10)
#
# and prints tok/s, peak RSS against its bound (non-experts + pools + KV
# cache + 64 MiB), bytes read per token against misses x expert bytes, and
# the paged/thrash speed ratio.
#
# Usage: bench/pager.sh [FLASH] [TOKENS]   (default 200MB/s,0.3ms and 64)
set -euo pipefail
flash=${1:-200MB/s,0.3ms}
n=${2:-64}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/pager-model.sh
. bench/pager-model.sh
run() { # name, tokens, flags...
	local name=$1 toks=$2
	shift 2
	"$work/gguf" run "$model" -p "$prompt" -n "$toks" --temp 1 --seed 1 -t 2 "$@" >"$work/${name// /_}.txt" 2>"$work/${name// /_}.err"
	echo "== $name: $*"
	grep '^gguf:' "$work/${name// /_}.err"
}
run mmap "$n"
run paged "$n" --moe-pool 16 --moe-direct=false --moe-sim-flash "$flash" --moe-stats
for v in "--moe-policy lfu:0.95" "--moe-prefetch 4" "--moe-policy lfu:0.95 --moe-prefetch 4" "--moe-bias 0.1" "--moe-bias 0.3"; do
	# shellcheck disable=SC2086 # $v is a list of flags
	run "paged $v" "$n" --moe-pool 16 --moe-direct=false --moe-sim-flash "$flash" --moe-stats $v
done
thrash_n=$(( n < 16 ? n : 16 ))
run thrash "$thrash_n" --moe-sim-flash "$flash"
run mmap-short "$thrash_n"
run paged-short "$thrash_n" --moe-pool 16 --moe-direct=false --moe-sim-flash "$flash"
cmp -s "$work/mmap.txt" "$work/paged.txt" && echo "paged text == mmap text" || echo "paged text DIFFERS from mmap text"
gen() { sed -n 's/.*generated [0-9]* tokens in [^ ]* (\([0-9.]*\) tok\/s).*/\1/p' "$work/$1.err"; }
awk -v p="$(gen paged-short)" -v t="$(gen thrash)" -v m="$(gen mmap-short)" \
	'BEGIN { printf "generation, %s tokens: paged %.2f tok/s, thrash %.2f tok/s, ratio %.1fx (mmap in RAM %.2f)\n", "'"$thrash_n"'", p, t, p / t, m }'
