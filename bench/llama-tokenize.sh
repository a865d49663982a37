#!/usr/bin/env bash
# vocabselect's tokenizer against llama.cpp's own (llama_tokenize through
# libllama), side by side on the same vocab GGUFs and the same multi-MB
# texts: every id must be the same, and both speeds are printed.
#
# llama.cpp is not part of this repository. The harness
# bench/llama-tokenize-bench.c is compiled here with gcc against llama.h and
# linked against libllama, found through:
#   LLAMA_CPP_ROOT     a tree with usr/include/llama.h and the libraries
#                      (default /tmp/lcpp/root: Debian's libllama0,
#                      libllama-dev, libggml0 and libggml-dev extracted)
#   LLAMA_CPP_INCLUDE  llama.h's folder (default $LLAMA_CPP_ROOT/usr/include)
#   LLAMA_CPP_LIB      libllama's folder (default
#                      $LLAMA_CPP_ROOT/usr/lib/x86_64-linux-gnu)
#   LLAMA_CPP_LOADER   dynamic loader to run the harness with, for a libllama
#                      built against a newer glibc than the system's (default
#                      $LLAMA_CPP_LIB/ld-linux-x86-64.so.2 where it exists;
#                      "none" runs it directly with LD_LIBRARY_PATH)
#   LLAMA_TOKENIZE_BENCH  a prebuilt harness: no compiling then
# Our side is bench/vocabbench, which times vocabselect's Encode the same way.
#
# What is compared (add_special on, parse_special off, as llama-tokenize
# does by default for text without control tokens):
#   VOCABS  vocab GGUFs: names under shared/models/vocab (gpt-2 for
#           ggml-vocab-gpt-2.gguf) or paths; qwen2 and llama-bpe are made
#           from the Hugging Face files in shared/models/tokenizers with
#           `gguf vocab import-hf` (Qwen2's config, tokenizer_config and
#           added_tokens included, as the tests import it). Default: all.
#   TEXTS   texts: paths under shared/corpus (en/war-and-peace.txt) or
#           absolute paths. Default: every corpus text but eval/.
#
# Columns: the text's MB and token count, whether all ids matched, then
# MB/s of the tokenization call alone. llama.cpp: its first (cold) call and
# the best of REPS calls. Ours: the first Encode after loading (cold: lazily
# built tables and empty word caches), the best first pass over the text of
# REPS freshly loaded tokenizers whose tables are built (fresh: empty word
# caches) and the best of REPS on one tokenizer (warm caches). The ratios
# are ours/llama.cpp MB/s, cold against cold and warm against llama.cpp's
# best. The same table follows by the CPU time of each process (its threads
# all counted), which stays steady on a machine shared with other work where
# the wall clock swings. A last summary gives the MB and ids compared per
# vocab.
#
# Usage: bench/llama-tokenize.sh [REPS]   (default 3)
# Exit status: 0 all ids matched, 1 some differed, 2 llama.cpp or gcc missing.
set -euo pipefail
reps=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${GGUF_SHARED:-$root/../shared}
lroot=${LLAMA_CPP_ROOT:-/tmp/lcpp/root}
linc=${LLAMA_CPP_INCLUDE:-$lroot/usr/include}
llib=${LLAMA_CPP_LIB:-$lroot/usr/lib/x86_64-linux-gnu}
loader=${LLAMA_CPP_LOADER:-}
if [ -z "$loader" ] && [ -x "$llib/ld-linux-x86-64.so.2" ]; then
  loader=$llib/ld-linux-x86-64.so.2
fi
[ "$loader" = none ] && loader=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

harness=${LLAMA_TOKENIZE_BENCH:-}
if [ -z "$harness" ]; then
  [ -f "$linc/llama.h" ] || { echo "llama.cpp not found: no llama.h in $linc (set LLAMA_CPP_ROOT or LLAMA_CPP_INCLUDE, or LLAMA_TOKENIZE_BENCH to a built harness)" >&2; exit 2; }
  ls "$llib"/libllama.so* >/dev/null 2>&1 || { echo "llama.cpp not found: no libllama.so in $llib (set LLAMA_CPP_ROOT or LLAMA_CPP_LIB)" >&2; exit 2; }
  command -v gcc >/dev/null || { echo "gcc not found: cannot build the llama.cpp harness" >&2; exit 2; }
  harness=$tmp/llama-tokenize-bench
  # --allow-shlib-undefined: libllama may need symbol versions of a newer
  # glibc/libstdc++ than the system's; the loader above supplies them.
  gcc -O2 -I"$linc" -o "$harness" "$root/bench/llama-tokenize-bench.c" \
    -L"$llib" -lllama -Wl,--allow-shlib-undefined
elif [ ! -x "$harness" ]; then
  echo "llama.cpp harness not found: LLAMA_TOKENIZE_BENCH=$harness is not an executable" >&2
  exit 2
fi
llama() {
  if [ -n "$loader" ]; then
    "$loader" --library-path "$llib:$llib/ggml" "$harness" "$@"
  else
    LD_LIBRARY_PATH="$llib:$llib/ggml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$harness" "$@"
  fi
}

(cd "$root" && go build -o "$tmp/vocabbench" ./bench/vocabbench && go build -o "$tmp/gguf" ./cmd/gguf)

hf_dir() { # the Hugging Face files of qwen2 or llama-bpe under their own names
  local src=$shared/models/tokenizers dir=$tmp/hf-$1
  mkdir -p "$dir"
  case $1 in
    qwen2)
      ln -sf "$src/qwen2/vocab.json" "$src/qwen2/merges.txt" "$dir/"
      for f in config tokenizer_config added_tokens; do
        ln -sf "$src/qwen2/qwen2-1.5b-instruct_$f.json" "$dir/$f.json"
      done ;;
    llama-bpe) ln -sf "$src/llama3/vocab.json" "$src/llama3/merges.txt" "$dir/" ;;
  esac
  echo "$dir"
}
vocab_path() { # name or path -> GGUF path
  case $1 in
    qwen2 | llama-bpe)
      [ -f "$tmp/$1.gguf" ] || "$tmp/gguf" vocab import-hf "$(hf_dir "$1")" --pre "$1" -o "$tmp/$1.gguf" 2>/dev/null
      echo "$tmp/$1.gguf" ;;
    */*) echo "$1" ;;
    *) echo "$shared/models/vocab/ggml-vocab-$1.gguf" ;;
  esac
}
if [ -z "${VOCABS:-}" ]; then
  VOCABS=$(cd "$shared/models/vocab" && ls ggml-vocab-*.gguf | sed 's/^ggml-vocab-//; s/\.gguf$//' | tr '\n' ' ')"qwen2 llama-bpe"
fi
if [ -z "${TEXTS:-}" ]; then
  TEXTS=$(cd "$shared/corpus" && ls */*.txt | grep -v -e '^eval/' -e '/SOURCE.txt$' | tr '\n' ' ')
fi

field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

bad=0
fmt="%-15s %-42s %6s %9s %-5s | %7s %7s | %7s %7s %7s | %6s %6s\n"
echo "MB/s by the wall clock:"
printf "$fmt" vocab text MB tokens ids llm-cold llm-best our-cold fresh our-warm x-cold x-warm
summary=() cpu_rows=()
for v in $VOCABS; do
  gg=$(vocab_path "$v")
  vmb=0 vtok=0 vtexts=0 vok=0
  for t in $TEXTS; do
    case $t in /*) tp=$t ;; *) tp=$shared/corpus/$t ;; esac
    l=$(llama "$gg" "$tp" -r "$reps" -o "$tmp/llama.ids")
    o=$("$tmp/vocabbench" -r "$reps" -o "$tmp/ours.ids" "$gg" "$tp")
    n=$(field tokens "$l")
    mb=$(awk -v b="$(field bytes "$l")" 'BEGIN { printf "%.2f", b / 1e6 }')
    if cmp -s "$tmp/llama.ids" "$tmp/ours.ids"; then
      ok=same
      vok=$((vok + 1))
    else
      ok=DIFF
      bad=1
      first=$(cmp "$tmp/llama.ids" "$tmp/ours.ids" 2>&1 | sed -n 's/.* line \([0-9]*\).*/\1/p' || true)
      echo "  $v $t: ids differ from line ${first:-?} (llama.cpp $n tokens, ours $(field tokens "$o"))" >&2
    fi
    vmb=$(awk -v a="$vmb" -v b="$mb" 'BEGIN { print a + b }')
    vtok=$((vtok + n))
    vtexts=$((vtexts + 1))
    lc=$(field cold_MBps "$l") lb=$(field best_MBps "$l")
    oc=$(field cold_MBps "$o") of=$(field fresh_MBps "$o") ob=$(field best_MBps "$o")
    printf "$fmt" "$v" "$t" "$mb" "$n" "$ok" "$lc" "$lb" "$oc" "$of" "$ob" "$(ratio "$oc" "$lc")" "$(ratio "$ob" "$lb")"
    lc=$(field cold_cpu_MBps "$l") lb=$(field best_cpu_MBps "$l")
    oc=$(field cold_cpu_MBps "$o") of=$(field fresh_cpu_MBps "$o") ob=$(field best_cpu_MBps "$o")
    cpu_rows+=("$(printf "$fmt" "$v" "$t" "$mb" "$n" "$ok" "$lc" "$lb" "$oc" "$of" "$ob" "$(ratio "$oc" "$lc")" "$(ratio "$ob" "$lb")")")
  done
  summary+=("$(printf "%-15s %3d texts, %7.2f MB, %9d ids compared: %d/%d texts identical" "$v" "$vtexts" "$vmb" "$vtok" "$vok" "$vtexts")")
done
echo
echo "MB/s by the CPU time of the process:"
printf "$fmt" vocab text MB tokens ids llm-cold llm-best our-cold fresh our-warm x-cold x-warm
printf '%s\n' "${cpu_rows[@]}"
echo
printf '%s\n' "${summary[@]}"
exit $bad
