#!/usr/bin/env bash
# The engine against a real llama.cpp, file by file: logits of the
# crosscheck prompt and perplexity, on the models of package
# bench/crosscheck (every weight type llama-quantize makes without an
# imatrix, plus a tied-head and a MoE model).
#
# llama.cpp is not part of this repository. The harness bench/llama-logits.c
# is compiled here with gcc against llama.h and linked against libllama,
# found through:
#   LLAMA_CPP_ROOT     a tree with usr/include/llama.h, the libraries and
#                      usr/bin/llama-quantize (default /tmp/lcpp/root:
#                      Debian's libllama0, libllama-dev, libggml0,
#                      libggml-dev and llama.cpp-tools extracted)
#   LLAMA_CPP_INCLUDE  llama.h's folder (default $LLAMA_CPP_ROOT/usr/include)
#   LLAMA_CPP_LIB      libllama's folder (default
#                      $LLAMA_CPP_ROOT/usr/lib/x86_64-linux-gnu)
#   LLAMA_CPP_BIN      llama-quantize's folder (default $LLAMA_CPP_ROOT/usr/bin)
#   LLAMA_CPP_LOADER   dynamic loader to run llama.cpp with, for libraries
#                      built against a newer glibc than the system's (default
#                      $LLAMA_CPP_LIB/ld-linux-x86-64.so.2 where it exists;
#                      "none" runs directly with LD_LIBRARY_PATH)
#   LCPP_BACKEND       the ggml CPU backend to load (default haswell, the
#                      one the committed references were made with: Debian
#                      builds one per CPU level); GGML_BACKEND_PATH=FILE too
#
# Per model (TAG = shape-TYPE; the F32 files are the sources):
#   1. llama-quantize --pure SHAPE-F32.gguf TYPE must give the same tensors
#      as our quantizer (gguf diff: "same" = whole file, "data" = every
#      tensor's type, shape and data but not all metadata, DIFF = some
#      tensor differs); -imat cases add --imatrix imatrix.dat
#      --token-embedding-type q8_0 --output-tensor-type q8_0. The logits of
#      both sides are computed on OUR file either way.
#   2. llama-logits (F32 KV cache, no flash attention, n_ctx 512, one batch;
#      no repack, but for the types the engine itself interleaves at load,
#      $repacked, which llama.cpp then runs repacked too, as its users get
#      them) writes llama.cpp's logits of the prompt and computes its
#      perplexity over eval.txt (1200 words) with --ctx 128
#   3. enginelogits runs the engine on the same ids: max |diff| over all
#      positions and logits, positions whose argmax agrees
#   4. gguf perplexity -f eval.txt --ctx 128: our perplexity
#   5. the fresh llama.cpp logits are compared with the committed
#      engine/testdata/llamacpp/TAG.f32 (cmp: bit for bit)
#   6. for the other families' cases (qwen2, qwen3, qwen3moe, olmoe,
#      bailingmoe2, gemma3, qwen35 in F32, Q8_0 and the Q4_K_M mix, qwen35moe
#      in F32), also the prompt's greedy continuation of 64 tokens on both
#      sides ("greedy":
#      how many agree before the first difference), and llama.cpp's
#      perplexity and greedy ids go to engine/testdata/llamacpp/families.txt
# then go test ./engine -run CrossCheck checks the per-type tolerances.
#
# Usage: bench/llama-logits.sh [--update] [TAG-REGEX]
#   --update   write the fresh llama.cpp logits (and families.txt) to
#              engine/testdata/llamacpp
#   TAG-REGEX  only the cases whose tag matches (grep -E); families.txt is
#              then rewritten only when every family case is run
# Exit status: 0 all checks passed, 1 some failed, 2 llama.cpp or gcc missing.
set -euo pipefail
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
filter=${1:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
# The committed references were made with ggml's haswell backend: compare
# with the same arithmetic unless told otherwise (LCPP_BACKEND, or
# GGML_BACKEND_PATH).
[ -n "${GGML_BACKEND_PATH:-}" ] || LCPP_BACKEND=${LCPP_BACKEND:-haswell}
# shellcheck source=bench/lcpp-env.sh
. "$root/bench/lcpp-env.sh"

ls "$llib"/libllama.so* >/dev/null 2>&1 || { echo "llama.cpp not found: no libllama.so in $llib (set LLAMA_CPP_ROOT or LLAMA_CPP_LIB)" >&2; exit 2; }
[ -f "$lbin/llama-quantize" ] || { echo "llama.cpp not found: no llama-quantize in $lbin (set LLAMA_CPP_ROOT or LLAMA_CPP_BIN)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lcpp_harness "$root/bench/llama-logits.c" "$tmp/llama-logits"
(cd "$root" && go build -o "$tmp/enginelogits" ./bench/enginelogits && go build -o "$tmp/gguf" ./cmd/gguf)
"$tmp/enginelogits" -gen "$tmp/models" -match "$filter"
prompt=$("$tmp/enginelogits" -print-prompt)
gold=$root/engine/testdata/llamacpp
mkdir -p "$gold"

# the weight types kernels/repack.go interleaves at Open (as llama.cpp's
# CPU_REPACK buffers do): their files are compared repacked on both sides
repacked=" Q4_0 "

families=$("$tmp/enginelogits" -list-families)
famtab=$tmp/families.txt
bad=0
fmt="%-20s %-5s %-6s %9s %6s | %10s %10s %9s %7s\n"
printf "$fmt" tag quant golden max-diff argmax llama-ppl our-ppl ppl-rel greedy
for tag in $("$tmp/enginelogits" -list | grep -E "$filter"); do
  f=$tmp/models/$tag.gguf
  shape=${tag%%-*} typ=${tag#*-} opts=()
  if [ "${typ%-imat}" != "$typ" ]; then
    typ=${typ%-imat}
    opts=(--imatrix imatrix.dat --token-embedding-type q8_0 --output-tensor-type q8_0)
  fi
  pure=(--pure) gflag=() ogflag=() fam=0
  [ "$typ" = Q4_K_M ] && pure=()
  grep -qx "$tag" <<<"$families" && { fam=1; gflag=(-g 64); ogflag=(-greedy 64); }
  q=-
  if [ "$typ" != F32 ]; then
    # in the models folder: llama-quantize records the imatrix path as given
    (cd "$tmp/models" && llama "$lbin/llama-quantize" "${pure[@]}" "${opts[@]}" "$shape-F32.gguf" "$tmp/lq.gguf" "$typ" 2) >"$tmp/quantize.log" 2>&1 ||
      { echo "$tag: llama-quantize failed:" >&2; tail -3 "$tmp/quantize.log" >&2; bad=1; continue; }
    if "$tmp/gguf" diff "$tmp/lq.gguf" "$f" >"$tmp/diff.txt" 2>&1; then
      q=same
    elif ! grep -q '^[-+~] tensor' "$tmp/diff.txt"; then
      q=data # same tensors, metadata differs (e.g. no quantize.imatrix.* keys)
    else
      q=DIFF bad=1
      sed -n 's/^/    /; /tensor/p' "$tmp/diff.txt" | head -5 >&2
    fi
  fi
  rflag=()
  [ "${repacked/ $typ /}" != "$repacked" ] && rflag=(--repack)
  out=$(llama "$tmp/llama-logits" "$f" -p "$prompt" -o "$tmp/llama.f32" "${gflag[@]}" "${rflag[@]}" -f "$tmp/models/eval.txt" --ctx 128)
  ids=$(sed -n 's/^tokens: //p' <<<"$out")
  lppl=$(sed -n 's/^ppl: \([^ ]*\).*/\1/p' <<<"$out")
  ours=$("$tmp/enginelogits" -m "$f" -ids "$ids" -ref "$tmp/llama.f32" "${ogflag[@]}")
  cmp=$(tail -1 <<<"$ours")
  gr=-
  if [ $fam = 1 ]; then
    lg=$(sed -n 's/^greedy: //p' <<<"$out")
    og=$(sed -n 's/^greedy: //p' <<<"$ours")
    # the first differing greedy id; the engine test decides whether our
    # top-2 margin there is small enough for a rounding flip
    gr=$(awk -v a="$lg" -v b="$og" 'BEGIN { n = split(a, x); split(b, y)
      for (i = 1; i <= n; i++) if (x[i] != y[i]) { print (i - 1) "/" n; exit }
      print n "/" n }')
    echo "$tag $lppl $lg" >>"$famtab"
  fi
  md=$(sed -n 's/^max=\([^ ]*\).*/\1/p' <<<"$cmp")
  am=$(sed -n 's/.*argmax=\([^ ]*\).*/\1/p' <<<"$cmp")
  oppl=$("$tmp/gguf" perplexity "$f" -f "$tmp/models/eval.txt" --ctx 128 2>/dev/null | sed -n 's/.*PPL = \([^ ]*\).*/\1/p')
  g=new
  if [ -f "$gold/$tag.f32" ]; then
    if cmp -s "$tmp/llama.f32" "$gold/$tag.f32"; then g=same; else g=DIFF; [ $update = 1 ] || bad=1; fi
  fi
  [ $update = 1 ] && cp "$tmp/llama.f32" "$gold/$tag.f32"
  rel=$(awk -v a="$lppl" -v b="$oppl" 'BEGIN { printf "%.2e", (b - a) / a }')
  printf "$fmt" "$tag" "$q" "$g" "$md" "$am" "$lppl" "$oppl" "$rel" "$gr"
done
if [ -f "$famtab" ]; then
  if [ "$(wc -l <"$famtab")" = "$(wc -l <<<"$families")" ]; then
    if ! cmp -s "$famtab" "$gold/families.txt"; then
      echo "families.txt: llama.cpp's perplexities or greedy ids changed" >&2
      [ $update = 1 ] || bad=1
    fi
    [ $update = 1 ] && cp "$famtab" "$gold/families.txt"
  fi
fi
echo
(cd "$root" && go test ./engine -run CrossCheck -count=1) || bad=1
exit $bad
