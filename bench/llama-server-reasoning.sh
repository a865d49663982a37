#!/bin/sh
# How Debian's llama-server (llama.cpp 0.7.0, see bench/lcpp-env.sh) splits
# a chat reply into reasoning_content and content with its default
# reasoning format, streamed and not: stories260K served with Qwen3's
# template (../shared's Qwen3-4B tokenizer_config, whose generation
# prompt opens <think>) and with the same template opening nothing, each
# reply forced by a grammar. Its output is
# server/testdata/llama-server-reasoning.txt, which TestThinkingSplit
# reads: one JSON line per reply and template.
set -eu
cd "$(dirname "$0")/.."
. bench/lcpp-env.sh
model=../shared/models/stories260K-f32.gguf
T=$(mktemp -d)
python3 -c "import json; print(json.load(open('../shared/models/tokenizers/qwen2/qwen3-4b_tokenizer_config.json'))['chat_template'], end='')" >"$T/open.jinja"
sed 's/<|im_start|>assistant\\n<think>\\n/<|im_start|>assistant\\n/' "$T/open.jinja" >"$T/plain.jinja"
llama "$lbin/llama-server" -m "$model" --port 18483 -c 256 -t 1 --jinja --chat-template-file "$T/open.jinja" >/dev/null 2>&1 &
p1=$!
llama "$lbin/llama-server" -m "$model" --port 18484 -c 256 -t 1 --jinja --chat-template-file "$T/plain.jinja" >/dev/null 2>&1 &
p2=$!
# llama is a shell function: the servers are children of its subshells.
trap 'kill $(ps -o pid= --ppid $p1) $(ps -o pid= --ppid $p2) $p1 $p2 2>/dev/null; rm -rf "$T"' EXIT
for p in 18483 18484; do
  for _ in $(seq 100); do curl -sf "localhost:$p/health" >/dev/null && break; sleep 0.1; done
done
python3 - <<'PY'
import json, urllib.request
def call(port, body):
    req = urllib.request.Request(f"http://localhost:{port}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        if not body.get("stream"):
            return json.load(r)["choices"][0]["message"]
        deltas = []
        for line in r:
            line = line.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                ch = json.loads(line[6:])["choices"]
                if ch and ch[0]["delta"] and "role" not in ch[0]["delta"]:
                    deltas.append(ch[0]["delta"])
        return deltas
replies = ["<think>\n I think. \n</think>\n\n The end. ", " \n<think>\n I think. \n</think>\n\n The end. ",
           "Just the end.</think> x", "<think> I think", "No think at all.", "<think></think>\n\nAnswer",
           "\n I think  so. \n</think>\n\n The end. ", "I think</think>The end."]
for port, opened in ((18483, True), (18484, False)):
    for reply in replies:
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 60,
                "grammar": "root ::= " + json.dumps(reply)}
        msg = call(port, body)
        deltas = call(port, dict(body, stream=True))
        print(json.dumps({"opened": opened, "reply": reply, "message": msg, "deltas": deltas}))
PY
