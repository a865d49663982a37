# Sourced by the scripts that run llama.cpp: where it is and how to run it.
# llama.cpp is not part of this repository. By default it is Debian sid's
# llama.cpp 0.7.0 / ggml 0.27.0 packages extracted under /tmp/lcpp/root
# (engine/testdata/llamacpp/README.txt), run through their own glibc loader
# (ld-linux-x86-64.so.2 --library-path ...) with ggml's haswell CPU backend.
# Environment: LLAMA_CPP_ROOT, LLAMA_CPP_INCLUDE, LLAMA_CPP_LIB,
# LLAMA_CPP_BIN, LLAMA_CPP_LOADER (none: the system's), GGML_BACKEND_PATH.
# Defines lroot, linc, llib, lbin, loader, libpath and llama PROGRAM ARGS...
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
if [ -z "${GGML_BACKEND_PATH:-}" ] && [ -f "$llib/ggml/backends0/libggml-cpu-haswell.so" ]; then
  export GGML_BACKEND_PATH=$llib/ggml/backends0/libggml-cpu-haswell.so
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
