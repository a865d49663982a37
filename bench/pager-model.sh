# Sourced by bench/pager.sh and bench/pager-direct.sh, from the checkout's
# root: builds gguf into $work (PAGER_BENCH_DIR, default /tmp/pgbench) and
# writes their generated MoE once, $model (internal/moegen: a
# Mixtral-style llama, 15 layers, embd 1024, 64 experts of 1024 per layer,
# 4 used, Q4_K experts (8 distinct ones per tensor, repeated), Q8_0
# elsewhere, experts last, a router with Zipf popularity, skew 3), and
# sets $prompt, the prompt both run.
work=${PAGER_BENCH_DIR:-/tmp/pgbench}
mkdir -p "$work"
go build -o "$work/gguf" ./cmd/gguf
model=$work/moe-1g6-s3.gguf
if [ ! -f "$model" ]; then
	go run ./bench/genmodel -o "$model" -layers 15 -embd 1024 -ff 1024 -experts 64 -experts-used 4 \
		-heads 16 -kv-heads 8 -vocab 4096 -type Q8_0 -head-type Q8_0 -expert-type Q4_K \
		-moe-skew 3 -expert-templates 8 -tied=false
fi
# shellcheck disable=SC2034 # used by the scripts that source this one
prompt="t1 t2 t3 t4 t5 t1 t2 t6 t7 t1 t3 t8"
