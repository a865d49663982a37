# Sourced by the scripts that run llama.cpp: where it is and how to run it.
# llama.cpp is not part of this repository. By default it is Debian sid's
# llama.cpp 0.7.0 / ggml 0.27.0 packages extracted under /tmp/lcpp/root by
# bench/lcpp-fetch.sh (engine/testdata/llamacpp/README.txt), run through their
# own glibc loader (ld-linux-x86-64.so.2 --library-path ...).
# ggml's CPU backend is ggml's own choice, as llama.cpp's users run it: it
# loads every libggml-cpu-*.so variant it finds and keeps the best for this
# CPU (zen4, sapphirerapids, ...). LCPP_BACKEND=NAME forces one
# (libggml-cpu-NAME.so, e.g. haswell), as GGML_BACKEND_PATH=FILE does; the
# scripts that compare logits with committed references set haswell, the
# backend those references were made with.
# Environment: LLAMA_CPP_ROOT, LLAMA_CPP_INCLUDE, LLAMA_CPP_LIB,
# LLAMA_CPP_BIN, LLAMA_CPP_LOADER (none: the system's), LCPP_BACKEND,
# GGML_BACKEND_PATH.
# Defines lroot, linc, llib, lbin, loader, libpath, llama PROGRAM ARGS... and
# lcpp_backend (the backend a llama.cpp log names).
lroot=${LLAMA_CPP_ROOT:-/tmp/lcpp/root}
linc=${LLAMA_CPP_INCLUDE:-$lroot/usr/include}
llib=${LLAMA_CPP_LIB:-$lroot/usr/lib/x86_64-linux-gnu}
# shellcheck disable=SC2034 # lbin is for the scripts that source this
lbin=${LLAMA_CPP_BIN:-$lroot/usr/bin}
loader=${LLAMA_CPP_LOADER:-}
if [ -z "$loader" ] && [ -x "$llib/ld-linux-x86-64.so.2" ]; then
  loader=$llib/ld-linux-x86-64.so.2
fi
[ "$loader" = none ] && loader=
if [ -z "${GGML_BACKEND_PATH:-}" ] && [ -n "${LCPP_BACKEND:-}" ]; then
  export GGML_BACKEND_PATH=$llib/ggml/backends0/libggml-cpu-$LCPP_BACKEND.so
  if [ ! -f "$GGML_BACKEND_PATH" ]; then
    echo "no ggml CPU backend $LCPP_BACKEND ($GGML_BACKEND_PATH)" >&2
    exit 2
  fi
fi
libpath="$llib:$llib/llama:$llib/ggml"
[ -d "$lroot/lib/x86_64-linux-gnu" ] && libpath="$libpath:$lroot/lib/x86_64-linux-gnu"
llama() { # PROGRAM ARGS...: run a llama.cpp program through the loader
  if [ -n "$loader" ]; then
    "$loader" --library-path "$libpath" "$@"
  else
    LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
  fi
}
lcpp_backend() { # LOGFILE: the CPU backend ggml loaded, as its log names it
  sed -n 's/.*loaded CPU backend from .*libggml-cpu-\(.*\)\.so.*/\1/p' "$1" | head -n1
}
lcpp_harness() { # SRC.c OUT: build a C harness against libllama (after checking llama.h and gcc are there)
  [ -f "$linc/llama.h" ] || { echo "llama.cpp not found: no llama.h in $linc (set LLAMA_CPP_ROOT or LLAMA_CPP_INCLUDE)" >&2; exit 2; }
  command -v gcc >/dev/null || { echo "gcc not found: cannot build the llama.cpp harness" >&2; exit 2; }
  # --allow-shlib-undefined: libllama may need symbol versions of a newer
  # glibc/libstdc++ than the system's; the loader above supplies them.
  gcc -O2 -Wall -I"$linc" -o "$2" "$1" -L"$llib" -lllama -lggml -lm -Wl,--allow-shlib-undefined
}
