#!/bin/sh
# The same requests to Debian's llama-server (llama.cpp 0.7.0, see
# bench/lcpp-env.sh) and to gguf serve, on stories260K with a context of
# 128: for each, the fields (one level into objects) that llama-server
# gives and gguf serve lacks or gives with another JSON kind, and for the
# greedy requests whether the text is the same. Its output is
# server/testdata/llama-server.txt; server/server_test.go holds the greedy
# texts and shared fields it found (llamaServer), so go test checks them
# without llama.cpp.
set -eu
cd "$(dirname "$0")/.."
. bench/lcpp-env.sh
model=../shared/models/stories260K-f32.gguf
bin=$(mktemp -d)/gguf
CGO_ENABLED=0 go build -o "$bin" ./cmd/gguf
llama "$lbin/llama-server" -m "$model" --port 18481 -c 128 -t 1 --metrics --slots >/dev/null 2>&1 &
lpid=$!
"$bin" serve "$model" --port 18482 -c 128 -t 1 2>/dev/null &
gpid=$!
# llama is a shell function: $lpid is the subshell running it, and the
# server is its child, which killing the subshell would leave running.
trap 'kill $(ps -o pid= --ppid $lpid) $lpid $gpid 2>/dev/null' EXIT
for p in 18481 18482; do
  for _ in $(seq 100); do curl -sf "localhost:$p/health" >/dev/null && break; sleep 0.1; done
done
python3 - <<'PY'
import json, urllib.request
reqs = [
    ("/completion", {"prompt": "Once upon a time", "n_predict": 5, "temperature": 0, "n_probs": 2}, "content"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "temperature": 0, "logprobs": True, "top_logprobs": 2}, "chat"),
    ("/v1/completions", {"prompt": "Once upon", "max_tokens": 3, "temperature": 0}, "text"),
    ("/completion", {"prompt": ["Once upon", "The dog", [1, 403, 29], ["Once", 403]], "n_predict": 3, "temperature": 0}, "contents"),
    ("/v1/completions", {"prompt": ["Once upon", "The dog"], "max_tokens": 3, "temperature": 0}, "texts"),
    ("/tokenize", {"content": "Once upon", "with_pieces": True}, None),
    ("/detokenize", {"tokens": [1, 403]}, None),
    ("/apply-template", {"messages": [{"role": "user", "content": "hi"}]}, None),
    ("/completion", {"prompt": "Once upon a time " * 60, "n_predict": 2}, None),
    ("/v1/chat/completions", {"prompt": "x"}, None),
    ("GET /v1/models", None, None), ("GET /props", None, None), ("GET /health", None, None), ("GET /slots", None, None),
]
def call(port, path, body):
    method, _, p = path.rpartition(" ")
    req = urllib.request.Request(f"http://localhost:{port}{p}", data=None if body is None else json.dumps(body).encode(),
                                 method=method or "POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
def kinds(v, pre=""):
    out = {}
    if isinstance(v, list):
        return kinds(v[0], pre + "[].") if v and isinstance(v[0], dict) else out
    for k, x in v.items():
        t = {dict: "object", list: "array", str: "string", bool: "bool", type(None): "null"}.get(type(x), "number")
        out[pre + k] = t
        if isinstance(x, (dict, list)) and pre.count(".") < 1:
            out.update(kinds(x, pre + k + "."))
    return out
def text(v, how):
    return {"content": lambda: v["content"], "chat": lambda: v["choices"][0]["message"]["content"],
            "text": lambda: v["choices"][0]["text"], "contents": lambda: [(x["index"], x["content"]) for x in v],
            "texts": lambda: [(c["index"], c["text"]) for c in v["choices"]]}[how]()
bad = 0
for path, body, how in reqs:
    (lc, lv), (gc, gv) = call(18481, path, body), call(18482, path, body)
    lk, gk = kinds(lv), kinds(gv)
    diff = sorted(f"{k}: {t} vs {gk.get(k, 'missing')}" for k, t in lk.items() if gk.get(k) != t)
    same = "" if how is None else ("same text" if text(lv, how) == text(gv, how) else f"TEXT DIFFERS {text(lv, how)!r} vs {text(gv, how)!r}")
    print(f"{path} {json.dumps(body)[:60]}: status {lc} vs {gc}; {len(lk)} llama-server fields, {len(diff)} missing or of another kind {same}")
    for d in diff:
        print("   ", d)
    bad += (lc != gc) + same.startswith("TEXT")
print("status or greedy text differences:", bad)
PY
