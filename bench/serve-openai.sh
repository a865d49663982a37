#!/bin/sh
# gguf serve on stories260K, then the npm openai package's client against
# it (bench/serve-openai.mjs). Needs node and npm; openai is installed
# under ${OPENAI_NODE_DIR:-/tmp/gguf-openai} when missing.
set -eu
cd "$(dirname "$0")/.."
dir=${OPENAI_NODE_DIR:-/tmp/gguf-openai}
[ -d "$dir/node_modules/openai" ] || (mkdir -p "$dir" && cd "$dir" && npm install --no-audit --no-fund openai@4 >/dev/null)
bin=$(mktemp -d)/gguf
CGO_ENABLED=0 go build -o "$bin" ./cmd/gguf
log=$(mktemp)
"$bin" serve ../shared/models/stories260K-f32.gguf --port 0 -c 128 -t 1 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q 'on http://' "$log" && break; sleep 0.1; done
addr=$(sed -n 's|.* on http://\([^/]*\)/.*|\1|p' "$log")
cp bench/serve-openai.mjs "$dir/"
OPENAI_BASE_URL="http://$addr/v1" node "$dir/serve-openai.mjs"
