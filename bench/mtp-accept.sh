#!/usr/bin/env bash
# Where --spec-type draft-mtp pays (issue 29), on a generated qwen35moe whose
# MTP block is built to agree with the model (bench/genmodel -crosscheck
# -mtp-agree 0.02, fixture.Model.MTPAgree: a near-bigram trunk and a block
# that drafts it, a stand-in for a trained block): 8 layers (6 Gated
# DeltaNet, 2 gated attention), embd 1024, 32 experts of 512, 4 used, a
# shared expert, vocab 4096 untied, Q4_K_M, experts last: 331 MB; and a
# dense qwen35 built the same way (FFN 3072, otherwise the same: 96 MB).
#
#   ram      the file mapped, page cache warm: compute only
#   paged-P  --moe-pool P under --moe-sim-flash FLASH, for each P of POOLS
#            (experts read on a miss; a verification batch reads the union
#            of its rows' experts, which a pool smaller than it evicts)
#   dense-ram     the dense model in RAM
#   dense-stream  the dense model, --moe-sim-flash FLASH without a pool:
#            every weight a pass reads charged to the flash (a model
#            larger than RAM, streamed), at most 32 tokens
#
# gguf run, greedy, plain and draft-mtp with --spec-draft-n-max 1, 2, 3,
# alternated (plain, mtp1, mtp2, mtp3, plain, ...) for ROUNDS rounds: the
# medians of generation tok/s and their ratio to plain, the medians of the
# run's CPU seconds (user + sys, /usr/bin/time: what a shared, loaded
# machine leaves steady, where wall-clock rates swing) and plain's over
# them, the acceptance rate, tokens per pass and the pager's bytes per
# token. Every drafted text must
# equal plain's (drafting is exact). Then llama.cpp 0.7.0 on the same file
# in RAM (bench/lcpp-env.sh): llama-bench's tg rate, and
# llama-speculative-simple --spec-type draft-mtp's decode rate and
# acceptance for n-max 1, 2, 3, alternated the same way.
#
# Usage: bench/mtp-accept.sh [ROUNDS] [TOKENS] [FLASH] [POOLS]
#        (default 3, 64, 200MB/s,0.3ms, 8,16)
# MTP_BENCH_DIR keeps the models and the logs (default /tmp/mtpaccept);
# MODES picks modes (default: ram, paged-P for each pool, dense-ram,
# dense-stream);
# NO_LLAMA=1 skips llama.cpp.
set -euo pipefail
rounds=${1:-3}
n=${2:-64}
flash=${3:-200MB/s,0.3ms}
pools=${4:-8,16}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${MTP_BENCH_DIR:-/tmp/mtpaccept}
mkdir -p "$work"
cd "$root"
go build -o "$work/gguf" ./cmd/gguf
model=$work/moe.gguf
if [ ! -f "$model" ]; then
	go run ./bench/genmodel -crosscheck -o "$work/moe-f32.gguf" -arch qwen35moe -layers 8 -embd 1024 -ff 512 \
		-expert-ff 512 -experts 32 -experts-used 4 -shared-experts 1 -heads 8 -kv-heads 2 -head-dim 128 \
		-ssm-head-dim 128 -ssm-k-heads 8 -ssm-v-heads 16 -full-attn-interval 4 -vocab 4096 -tied=false \
		-nextn 1 -mtp-agree 0.02
	"$work/gguf" build "$work/moe-f32.gguf" --type Q4_K_M --experts-last -o "$model" -q
	rm "$work/moe-f32.gguf"
fi
dense=$work/dense.gguf
if [ ! -f "$dense" ]; then
	go run ./bench/genmodel -crosscheck -o "$work/dense-f32.gguf" -arch qwen35 -layers 8 -embd 1024 -ff 3072 \
		-heads 8 -kv-heads 2 -head-dim 128 -ssm-head-dim 128 -ssm-k-heads 8 -ssm-v-heads 16 -full-attn-interval 4 \
		-vocab 4096 -tied=false -nextn 1 -mtp-agree 0.02
	"$work/gguf" build "$work/dense-f32.gguf" --type Q4_K_M -o "$dense" -q
	rm "$work/dense-f32.gguf"
fi
prompt="t1 t2 t3 t4 t5 t6 t7 t8"
kinds="plain mtp1 mtp2 mtp3"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
gen() { sed -n 's/.*generated [0-9]* tokens in [^ ]* (\([0-9.]*\) tok\/s).*/\1/p' "$1"; }
for mode in ${MODES:-ram $(echo "$pools" | sed 's/\([0-9]*\)/paged-\1/g; s/,/ /g') dense-ram dense-stream}; do
	file=$model toks=$n
	case $mode in
	ram) flags=() ;;
	dense-ram) flags=() file=$dense ;;
	dense-stream) flags=(--moe-sim-flash "$flash") file=$dense toks=$((n < 32 ? n : 32)) ;;
	*) flags=(--moe-pool "${mode#paged-}" --moe-sim-flash "$flash") ;;
	esac
	for k in $kinds; do : >"$work/$mode-$k.rates" && : >"$work/$mode-$k.cpu"; done
	for r in $(seq "$rounds"); do
		for k in $kinds; do
			extra=()
			[ "$k" != plain ] && extra=(--spec-type draft-mtp --spec-draft-n-max "${k#mtp}")
			/usr/bin/time -f '%U %S' -o "$work/$mode-$k.time" \
				"$work/gguf" run "$file" -p "$prompt" -n "$toks" --temp 0 -t 2 "${flags[@]}" "${extra[@]}" \
				>"$work/$mode-$k.txt" 2>"$work/$mode-$k.err"
			gen "$work/$mode-$k.err" >>"$work/$mode-$k.rates"
			awk '{ print $1 + $2 }' "$work/$mode-$k.time" >>"$work/$mode-$k.cpu"
			cmp -s "$work/$mode-plain.txt" "$work/$mode-$k.txt" ||
				{ echo "$mode round $r: $k changed the text" >&2; exit 1; }
		done
	done
	p=$(median <"$work/$mode-plain.rates")
	pc=$(median <"$work/$mode-plain.cpu")
	echo "== gguf $mode, $toks tokens, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg): plain $p tok/s, $pc s CPU"
	for k in $kinds; do
		s=$(median <"$work/$mode-$k.rates")
		c=$(median <"$work/$mode-$k.cpu")
		acc=$(sed -n 's/.*draft acceptance rate = \([0-9.]*\).*, \([0-9.]*\) tokens per forward pass.*/acceptance \1, \2 tokens per pass/p' "$work/$mode-$k.err")
		pg=$(sed -n 's/^gguf: pager: //p' "$work/$mode-$k.err" | head -n1)
		printf '   %-5s %7.2f tok/s  x%.2f  CPU %6.2f s  x%.2f  %s%s\n' "$k" "$s" "$(awk -v a="$s" -v b="$p" 'BEGIN { print a / b }')" \
			"$c" "$(awk -v a="$c" -v b="$pc" 'BEGIN { print b / a }')" "${acc:+$acc; }" "${pg:+pager: $pg}"
	done
done
[ "${NO_LLAMA:-0}" = 1 ] && exit 0
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"
: >"$work/llama-plain.rates"
for k in 1 2 3; do : >"$work/llama-mtp$k.rates"; done
for r in $(seq "$rounds"); do
	llama "$lbin/llama-bench" -m "$model" -p 0 -n "$n" -t 2 -r 1 -o csv 2>/dev/null |
		awk -F'","' 'END { print $(NF - 1) }' >>"$work/llama-plain.rates"
	for k in 1 2 3; do
		# -lv 3: the decode rate and the counts are info lines
		llama "$lbin/llama-speculative-simple" -m "$model" --spec-type draft-mtp --spec-draft-n-max "$k" -p "$prompt" \
			-n "$n" --temp 0 -c 512 -t 2 -lv 3 >"$work/llama-mtp$k.txt" 2>"$work/llama-mtp$k.err"
		sed -n 's/.*decoded .* speed: *\([0-9.]*\) t\/s.*/\1/p' "$work/llama-mtp$k.err" >>"$work/llama-mtp$k.rates"
	done
done
p=$(median <"$work/llama-plain.rates")
echo "== llama.cpp ram, $n tokens, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg): llama-bench tg$n $p tok/s"
for k in 1 2 3; do
	s=$(median <"$work/llama-mtp$k.rates")
	acc=$(sed -n 's/.*accept *= *\([0-9.]*%\).*/\1/p' "$work/llama-mtp$k.err")
	cnt=$(sed -n 's/.*n_accept *= *\([0-9]*\).*/\1/p' "$work/llama-mtp$k.err")/$(sed -n 's/.*n_drafted *= *\([0-9]*\).*/\1/p' "$work/llama-mtp$k.err")
	printf '   mtp%d  %7.2f tok/s  x%.2f  acceptance %s (%s)\n' "$k" "$s" "$(awk -v a="$s" -v b="$p" 'BEGIN { print a / b }')" "$acc" "$cnt"
done
# llama.cpp prints the prompt and its generation; ours (mode ram) must
# begin the same (llama.cpp counts -n otherwise: its text runs longer)
[ -f "$work/ram-plain.txt" ] || exit 0
t=$(sed 's/<s>//g' "$work/llama-mtp3.txt" | tr -s ' \n' ' ')
o=$(tr -s ' \n' ' ' <"$work/ram-plain.txt")
if [ "${t:0:${#o}}" = "$o" ] || [ "${o:0:${#t}}" = "$t" ]; then
	echo "   llama.cpp's draft-mtp text is gguf's"
else
	echo "   llama.cpp's text DIFFERS: $t"
fi
