#!/bin/sh
# Regenerates ops/testdata/llama-quantize-*.txt with a real llama-quantize
# (see README.txt): writes the fixtures with TestWriteLlamaQuantizeFixtures,
# runs llama-quantize on each for every file type (2 threads), without and
# for some types with the importance matrix, and summarizes the outputs with
# TestSummarizeLlamaQuantizeOutputs. Usage, from the repository root:
#   LLAMA_QUANTIZE="/tmp/lcpp/lrun llama-quantize" sh ops/testdata/llama-quantize-golden.sh
set -eu
LQ=${LLAMA_QUANTIZE:-/tmp/lcpp/lrun llama-quantize}
set -- $LQ
if ! command -v "$1" >/dev/null 2>&1; then
	echo "llama-quantize-golden.sh: '$LQ' not found (set LLAMA_QUANTIZE)" >&2
	exit 2
fi
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GGUF_LQ_FIXTURES=$work go test -count=1 -run '^TestWriteLlamaQuantizeFixtures$' ./build >/dev/null
TYPES="Q1_0 Q2_0 Q4_0 Q4_1 MXFP4_MOE Q5_0 Q5_1 IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S IQ1_M TQ1_0 TQ2_0
Q2_K Q2_K_S IQ3_XXS IQ3_S IQ3_M IQ3_XS Q3_K_S Q3_K_M Q3_K_L IQ4_NL IQ4_XS Q4_K_S Q4_K_M Q5_K_S Q5_K_M
Q6_K Q8_0 F16 BF16 F32"
IMATRIX_TYPES="IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S IQ1_M Q2_K_S IQ3_XXS IQ3_XS Q4_0 Q5_0 IQ4_XS Q4_K_M"
cd "$work"
for fx in dense gqa4-tied-odd moe8; do
	for t in $TYPES; do
		# A refusal (a type that needs an importance matrix, rows no type
		# fits) is recorded too: the quantizer must refuse as well.
		$LQ "$fx.gguf" "$fx-$t-plain.gguf" "$t" 2 >"$fx-$t-plain.log" 2>&1 ||
			touch "$fx-$t-plain.refused"
	done
	for t in $IMATRIX_TYPES; do
		$LQ --imatrix "$fx-imatrix.gguf" "$fx.gguf" "$fx-$t-imatrix.gguf" "$t" 2 >"$fx-$t-imatrix.log" 2>&1
	done
done
cd "$root"
GGUF_LQ_OUTPUTS=$work go test -count=1 -run '^TestSummarizeLlamaQuantizeOutputs$' ./build >/dev/null
cp "$work"/llama-quantize-*.txt ops/testdata/
echo "wrote ops/testdata/llama-quantize-{dense,gqa4-tied-odd,moe8}.txt"
