#!/usr/bin/env bash
# Fetch Debian sid's llama.cpp 0.7.0 / ggml 0.27.0 packages and extract them,
# with the sid glibc and libraries they link against, under DEST (default
# /tmp/lcpp): DEST/root is the extracted tree every bench script reads
# (bench/lcpp-env.sh), DEST/lrun the wrapper that runs one of its programs
# (`DEST/lrun llama-bench -m MODEL`), through sid's own loader so the host's
# older glibc does not matter.
#
# Nothing is installed and the system's apt state is not touched: apt runs on
# a private state directory (DEST/apt) with one source, sid, from the mirror
# this machine's own apt sources name (deb.debian.org when none is found),
# checked with the system's Debian archive keyring. The llama.cpp and ggml
# versions are pinned; the libraries they need are sid's current ones.
#
# Usage: bench/lcpp-fetch.sh [DEST]
# Environment: LCPP_MIRROR (e.g. a snapshot.debian.org URL once sid has moved
# past these versions), LCPP_SUITE (default sid), LCPP_KEYRING.
set -euo pipefail
dest=${1:-/tmp/lcpp}
llama_version=1:0.7.0+dfsg-2
ggml_version=0.27.0-1
suite=${LCPP_SUITE:-sid}
keyring=${LCPP_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
mirror=${LCPP_MIRROR:-}
if [ -z "$mirror" ]; then
	# The first Debian URI of the machine's sources (deb822 or one-line).
	mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)
	mirror=${mirror:-http://deb.debian.org/debian}
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
	echo "lcpp-fetch: needs apt-get and dpkg-deb (a Debian or Ubuntu machine)" >&2
	exit 2
}

apt=$dest/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::State::status=/dev/null
	-o Debug::NoLocking=1 -o APT::Architecture=amd64 -o APT::Sandbox::User=root)
echo "lcpp-fetch: $mirror $suite -> $dest" >&2
apt-get "${opts[@]}" -qq update

top=(llama.cpp-tools llama.cpp-examples libllama0 libllama-dev libggml0 libggml-dev)
# Every package the pinned ones need at run time, recursively (the status
# file is empty, so apt counts nothing as installed).
mapfile -t deps < <(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances "${top[@]}" 2>/dev/null |
	grep -v '^[ <]' | sort -u | grep -vxE 'debconf|cdebconf|debconf-2.0|libdebian-installer4|libnewt0.52|libslang2|libtextwrap1')
want=()
for p in "${deps[@]}"; do
	case $p in
	llama.cpp-tools | llama.cpp-examples | libllama0 | libllama-dev) want+=("$p=$llama_version") ;;
	libggml0 | libggml-dev) want+=("$p=$ggml_version") ;;
	*) want+=("$p") ;;
	esac
done
(cd "$apt/debs" && apt-get "${opts[@]}" -qq download "${want[@]}")

rm -rf "$dest/root.new"
mkdir -p "$dest/root.new"
for deb in "$apt/debs"/*.deb; do
	dpkg-deb -x "$deb" "$dest/root.new"
done
rm -rf "$dest/root"
mv "$dest/root.new" "$dest/root"

# ggml looks for its CPU variants (libggml-cpu-*.so) in the folder Debian
# installs them to (/usr/lib/x86_64-linux-gnu/ggml/backends0, compiled in),
# next to the executable and in the current folder. Run through the loader,
# the executable is the loader itself: link the variants next to it, so ggml
# enumerates them all and loads the best one for this CPU, as it does for an
# installed llama.cpp.
lib=$dest/root/usr/lib/x86_64-linux-gnu
for b in "$lib"/ggml/backends0/libggml-cpu-*.so; do
	ln -sf "ggml/backends0/${b##*/}" "$lib/${b##*/}"
done

# The wrapper: sid's loader with the extracted library folders, no
# GGML_BACKEND_PATH (ggml loads every CPU variant in its backend folder and
# keeps the best for this CPU, as llama.cpp's users get it).
loader=$dest/root/usr/lib64/ld-linux-x86-64.so.2
[ -x "$loader" ] || loader=$lib/ld-linux-x86-64.so.2
libpath="$lib:$lib/llama:$lib/ggml:$dest/root/lib/x86_64-linux-gnu"
cat >"$dest/lrun.new" <<EOF
#!/bin/sh
# Written by bench/lcpp-fetch.sh: run PROGRAM from $dest/root/usr/bin.
prog=\$1; shift
case \$prog in */*) ;; *) prog=$dest/root/usr/bin/\$prog ;; esac
exec "$loader" --library-path "$libpath" "\$prog" "\$@"
EOF
chmod +x "$dest/lrun.new"
mv "$dest/lrun.new" "$dest/lrun"
"$dest/lrun" llama-cli --version 2>&1 | grep -m1 -i version >&2 || true
ls "$lib/ggml/backends0" 2>/dev/null | sed 's/^/lcpp-fetch: CPU backend /' >&2 || true
