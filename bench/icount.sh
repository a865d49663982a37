#!/usr/bin/env bash
# Instructions per weight of package kernels' arm64 kernels and of ggml-cpu's
# (llama.cpp's) aarch64 kernels of the same types, counted under qemu user
# emulation: writes or checks kernels/testdata/icount-arm64.txt, which
# TestICountTable (kernels/icount_test.go) checks.
#
# Counting: `qemu-aarch64-static -singlestep -d exec,nochain` logs one
# "Trace" line per guest instruction executed (-singlestep makes every
# instruction its own translation block, nochain logs every block run),
# and -dfilter keeps only those inside the kernel's code. Each kernel is
# run twice, REPS and 2*REPS calls, so the difference of the two counts is
# REPS calls, whatever the start-up costs; per weight = difference / (the
# weights those calls multiply). A call is one row product of N=4096
# elements for every kernel but q2lut's; the per-row costs (call, final
# reduction) are spread over the 4096 weights of a row.
#   ours:  BenchmarkKernelSets/<type>/<set> and, for the kernels it has
#          not (F16, q2lut; the ternary types and layouts:
#          BenchmarkTernaryKernels), BenchmarkArm64Kernels/<kernel>/<set> of the arm64 kernels
#          test binary with -test.benchtime REPSx; counted: every function
#          of package kernels except the benchmarks' own (their loops), so
#          the Go side (slicing, any Go tail) is counted with the assembly;
#          the "asm" column is the assembly functions (*NEON, *SDOT) alone.
#   q2lut: the Q2_K experts' table-lookup layout, whose kernel multiplies
#          16 rows at a time by one Q8_K activation row through tables
#          built once from that row (16 bytes per column). Two rows:
#          Q2_K.q2lut is the group kernel alone (the tables built before
#          counting; a call is 16 row products, REPS=100),
#          Q2_K.q2lut+tables one token through a 1024-row matrix with the
#          runtime's matmulQ2LUT on one thread (its tables built once per
#          call, then its 64 groups; a call is 1024 row products, REPS=2).
#          Its assembly is TBL and ARMv8.0 only, the same code under neon
#          and dotprod. Both are compared with ggml's Q2_K kernel (ggml has
#          no such layout): the same ggml figure as the Q2_K row.
#   ggml:  bench/icount-ggml.c calling ggml_vec_dot_<type>_<vec_dot_type>
#          of Debian's arm64 libggml0 backends, REPS=100 row products:
#          libggml-cpu-armv8.0_1.so (-march=armv8-a: against our "neon"
#          set) and libggml-cpu-armv8.2_1.so (-march=armv8.2-a+dotprod:
#          against "dotprod"); counted: that function's symbol range only.
# Both run with -cpu max. The C harness counts the same every run; the Go
# test binary's counts do not quite (its runtime is multi-threaded under
# qemu; async preemption is turned off): the same code counted in two runs
# differed by up to 0.0016 per weight (F32 under neon and dotprod, one
# kernel, on a loaded machine), so the comparison with the committed table
# allows 0.005 per weight and 0.01 in a ratio. Instruction counts track
# time on an in-order core like the Cortex-A55 but not exactly: memory
# stalls, dual issue and the latency of each instruction are not in them.
#
# ggml is not part of this repository; the arm64 packages are Debian's:
#   GGML_ARM64_ROOT  a tree with Debian sid's libggml0 0.27.0-1 (arm64) and
#                    the libc6, libstdc++6, libgcc-s1, libgomp1 it needs,
#                    extracted with dpkg-deb -x (default /tmp/sidarm/root;
#                    made here with apt-get download and a private apt
#                    configuration when missing)
# Needs qemu-aarch64-static (qemu-user-static) and aarch64-linux-gnu-gcc
# (gcc-aarch64-linux-gnu) for the harness.
#
# Usage: bench/icount.sh [--update]
#   compares the fresh table with kernels/testdata/icount-arm64.txt (exit 1
#   if a figure differs by more than the noise below); --update rewrites it.
# Exit status: 0 same (or updated), 1 differs, 2 tools or ggml missing.
set -euo pipefail
update=0
[ "${1:-}" = --update ] && update=1
root=$(cd "$(dirname "$0")/.." && pwd)
groot=${GGML_ARM64_ROOT:-/tmp/sidarm/root}
n=4096
reps=100
q2lutRows=1024 # BenchmarkArm64Kernels' q2lut matrix (icountQ2LUTRows in kernels/icount_arm64_test.go)

for tool in qemu-aarch64-static aarch64-linux-gnu-gcc go; do
	command -v "$tool" >/dev/null || { echo "icount: $tool missing" >&2; exit 2; }
done
glib=$groot/usr/lib/aarch64-linux-gnu
backends=$glib/ggml/backends0
if [ ! -f "$backends/libggml-cpu-armv8.2_1.so" ] && [ -z "${GGML_ARM64_ROOT:-}" ]; then
	# Debian sid's arm64 packages through a private apt configuration (the
	# system's sources and architectures are left alone).
	apt=/tmp/sidarm
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$groot"
	echo 'deb [arch=arm64] http://deb.debian.org/debian sid main' >"$apt/sources.list"
	opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64)
	apt-get "${opts[@]}" update >/dev/null
	(cd "$apt/debs" && apt-get "${opts[@]}" download libggml0=0.27.0-1 libc6 libstdc++6 libgcc-s1 libgomp1 >/dev/null 2>&1)
	for d in "$apt"/debs/*.deb; do dpkg-deb -x "$d" "$groot"; done
fi
[ -f "$backends/libggml-cpu-armv8.2_1.so" ] || { echo "icount: no arm64 ggml backends under $backends" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$tmp/kernels.test" ./kernels)
aarch64-linux-gnu-gcc -O2 -Wall -o "$tmp/icount-ggml" "$root/bench/icount-ggml.c" -ldl

# The kernels' code: from its first function to the end of its last (go
# tool nm -n sorts by address; the package's code is laid out in one
# piece), less the benchmark functions and their closures.
ranges= lo= hi=
while read -r addr size kind name _; do
	case $kind in T | t) ;; *) continue ;; esac
	case $name in
	github.com/ggufkit/gguf/kernels.Benchmark*)
		[ -z "$lo" ] || ranges+=$(printf '0x%x..0x%x,' "$lo" $((hi - 1)))
		lo=
		;;
	github.com/ggufkit/gguf/kernels.*)
		[ -n "$lo" ] || lo=$((16#$addr))
		hi=$((16#$addr + size))
		;;
	esac
done < <(go tool nm -n -size "$tmp/kernels.test")
[ -z "$lo" ] || ranges+=$(printf '0x%x..0x%x' "$lo" $((hi - 1)))
[ -n "$ranges" ] || { echo "icount: kernels code not found in the test binary" >&2; exit 1; }
echo "${ranges%,}" >"$tmp/kernels.ranges"

# count FILTER CMD...: instructions the command executes inside FILTER,
# and how many of them are in an assembly kernel ("total asm").
count() {
	local filter=$1; shift
	qemu-aarch64-static -cpu max -singlestep -d exec,nochain -dfilter "$filter" -D /dev/fd/3 "$@" 3>&1 >/dev/null 2>"$tmp/stderr" |
		awk '/^Trace/ { n++; if ($NF ~ /(NEON|SDOT)\.abi0$/) a++ } END { print n + 0, a + 0 }'
}

# ours BENCH KERNEL SET REPS: "R 2R asmR asm2R" for BENCH/KERNEL/SET (the
# kernel's . and + quoted in the -test.bench pattern).
ours() {
	local pat r1 r2
	pat="^$1\$/^$(printf '%s' "$2" | sed 's/[.+]/\\&/g')\$/^$3\$"
	r1=$(cd "$root/kernels" && GODEBUG=asyncpreemptoff=1 count "$(cat "$tmp/kernels.ranges")" "$tmp/kernels.test" \
		-test.run '^$' -test.bench "$pat" -test.benchtime "${4}x")
	r2=$(cd "$root/kernels" && GODEBUG=asyncpreemptoff=1 count "$(cat "$tmp/kernels.ranges")" "$tmp/kernels.test" \
		-test.run '^$' -test.bench "$pat" -test.benchtime "$((2 * $4))x")
	set -- $r1 $r2
	echo "$1 $3 $2 $4"
}

# ggml LIB SYMBOL WBYTES ABYTES: "R 2R" for the backend's SYMBOL (counted
# once per library and symbol: the counts repeat exactly).
declare -A ggmlCounts
ggml() {
	local lib=$backends/$1 sym=$2 addr size run c1 c2
	if [ -z "${ggmlCounts[$1/$2]:-}" ]; then
		run=("$glib/ld-linux-aarch64.so.1" --library-path "$glib" "$tmp/icount-ggml" "$lib" "$sym" "$n" "$3" "$4")
		# The harness prints where the symbol was loaded (stderr); qemu
		# maps the libraries at the same addresses every run, which is
		# checked.
		addr=$(qemu-aarch64-static -cpu max "${run[@]}" 0 2>&1 >/dev/null | head -1)
		size=$(readelf -Ws --dyn-syms "$lib" | awk -v s="$sym" '$8 == s { print $3; exit }')
		[ -n "$addr" ] && [ -n "$size" ] || { echo "icount: $sym not found in $lib" >&2; exit 1; }
		c1=$(count "$addr+$size" "${run[@]}" "$reps")
		[ "$(head -1 "$tmp/stderr")" = "$addr" ] || { echo "icount: $sym moved between runs" >&2; exit 1; }
		c2=$(count "$addr+$size" "${run[@]}" "$((2 * reps))")
		ggmlCounts[$1/$2]="${c1% *} ${c2% *}"
	fi
	echo "${ggmlCounts[$1/$2]}"
}

out=$tmp/icount-arm64.txt
{
	echo "# Instructions per weight of the arm64 kernels, ours and llama.cpp's (ggml-cpu), counted under qemu:"
	echo "# written by bench/icount.sh (see its header for the method). Rows of N=$n weights; each side ran REPS and"
	echo "# 2*REPS calls under $(qemu-aarch64-static --version | head -1) -cpu max -singlestep"
	echo "# -d exec,nochain -dfilter; per weight = (count at 2*REPS - count at REPS) / (rows * N), rows: the weight"
	echo "# rows REPS calls multiply (ours: the rows column; ggml: one per call, REPS=$reps)."
	echo "# ours: BenchmarkKernelSets/TYPE/SET or BenchmarkArm64Kernels/KERNEL/SET of the kernels' arm64 test binary"
	echo "#   ($(go env GOVERSION)), every function of package kernels but the benchmarks' counted (the assembly and its Go"
	echo "#   wrapper); asm: the assembly functions alone."
	echo "# Q2_K.q2lut: the q2lut group kernel alone, 16 rows per call (the activation row's tables built before);"
	echo "#   Q2_K.q2lut+tables: one token through a $q2lutRows-row q2lut matrix per call (matmulQ2LUT, one thread:"
	echo "#   the tables built once, then $((q2lutRows / 16)) groups). TBL, ARMv8.0 only: the same code under neon and dotprod."
	echo "#   Both against ggml's Q2_K kernel (ggml has no such layout)."
	echo "# Q1_0.q1lut: the Q1_0 lookup kernel (kernels/q1lut.go: 16 rows repacked at Open, TBL) alone, 16 rows per"
	echo "#   call (tables built before); Q1_0.q1lut+tables: one token through a $q2lutRows-row repacked matrix per call"
	echo "#   (matmulQ1LUT, one thread, the tables built once). Against ggml's Q1_0 kernel."
	echo "# TYPE.groups: one call of the set's group kernel (kernels/repack.go: 8 rows interleaved at load, SDOT by"
	echo "#   element under dotprod, Q4_0 under neon with SMLAL), against ggml's vec_dot of the type (its own"
	echo "#   repacked gemv kernels, which llama.cpp uses for Q4_0 on arm64, are not counted)."
	echo "# TQ1_0, TQ2_0 and TYPE.LAYOUT (a ternary layout, kernels/ternary.go, of a TYPE tensor): one row product of"
	echo "#   BenchmarkTernaryKernels, against ggml's kernel of the original type (TQ1_0.ter3 against TQ1_0's,"
	echo "#   TQ2_0.ter2 and TQ2_0.ter2s128 against TQ2_0's, Q2_0's layouts against Q2_0's)."
	echo "# ggml: ggml_vec_dot_* of Debian sid libggml0 $(basename "$(ls "$glib"/libggml-base.so.0.*)" | sed 's/libggml-base.so.//') arm64 via bench/icount-ggml.c; neon rows"
	echo "#   against libggml-cpu-armv8.0_1.so (-march=armv8-a), dotprod rows against libggml-cpu-armv8.2_1.so"
	echo "#   (-march=armv8.2-a+dotprod); the function's own code counted."
	echo "# ratio = ours/weight / ggml/weight. Instruction counts track time on an in-order core (Cortex-A55) but not"
	echo "# exactly: memory stalls, dual issue and per-instruction latencies are not counted. ggml's counts repeat"
	echo "# exactly; ours vary by up to about 0.002 per weight from run to run (a multi-threaded Go runtime under qemu)."
	printf '# kernel\tset\trows\tours_R\tours_2R\tasm_R\tasm_2R\tours/weight\tasm/weight\tggml_symbol\tggml_R\tggml_2R\tggml/weight\tratio\n'
	# KERNEL BENCHMARK REPS ROWS-PER-CALL SYMBOL WEIGHT-ROW-BYTES
	# ACTIVATION-ROW-BYTES [SETS] (rows of 4096 elements; SETS: those that
	# have the kernel, default both)
	while read -r kern bench kreps per sym wb ab sets; do
		for set in ${sets:-neon dotprod}; do
			lib=libggml-cpu-armv8.0_1.so
			[ "$set" = dotprod ] && lib=libggml-cpu-armv8.2_1.so
			read -r o1 o2 a1 a2 <<<"$(ours "$bench" "$kern" "$set" "$kreps")"
			read -r g1 g2 <<<"$(ggml "$lib" "$sym" "$wb" "$ab")"
			awk -v k="$kern" -v s="$set" -v sym="$sym" -v o1="$o1" -v o2="$o2" -v a1="$a1" -v a2="$a2" \
				-v g1="$g1" -v g2="$g2" -v rows=$((kreps * per)) -v n=$n -v reps=$reps 'BEGIN {
				if (o2 <= o1 || g2 <= g1) { print "icount: no instructions counted for " k "/" s > "/dev/stderr"; exit 1 }
				ow = (o2 - o1) / (rows * n); aw = (a2 - a1) / (rows * n); gw = (g2 - g1) / (reps * n)
				printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.4f\t%s\t%d\t%d\t%.4f\t%.3f\n", k, s, rows, o1, o2, a1, a2, ow, aw, sym, g1, g2, gw, ow / gw
			}'
		done
	done <<EOF
F32 BenchmarkKernelSets $reps 1 ggml_vec_dot_f32 $((4 * n)) $((4 * n))
F16 BenchmarkArm64Kernels $reps 1 ggml_vec_dot_f16 $((2 * n)) $((2 * n))
Q8_0 BenchmarkKernelSets $reps 1 ggml_vec_dot_q8_0_q8_0 $((n / 32 * 34)) $((n / 32 * 34))
Q4_K BenchmarkKernelSets $reps 1 ggml_vec_dot_q4_K_q8_K $((n / 256 * 144)) $((n / 256 * 292))
Q6_K BenchmarkKernelSets $reps 1 ggml_vec_dot_q6_K_q8_K $((n / 256 * 210)) $((n / 256 * 292))
Q2_K BenchmarkKernelSets $reps 1 ggml_vec_dot_q2_K_q8_K $((n / 256 * 84)) $((n / 256 * 292))
Q2_K.q2lut BenchmarkArm64Kernels $reps 16 ggml_vec_dot_q2_K_q8_K $((n / 256 * 84)) $((n / 256 * 292))
Q2_K.q2lut+tables BenchmarkArm64Kernels 2 $q2lutRows ggml_vec_dot_q2_K_q8_K $((n / 256 * 84)) $((n / 256 * 292))
Q4_0.groups BenchmarkArm64Kernels $reps 8 ggml_vec_dot_q4_0_q8_0 $((n / 32 * 18)) $((n / 32 * 34))
Q8_0.groups BenchmarkArm64Kernels $reps 8 ggml_vec_dot_q8_0_q8_0 $((n / 32 * 34)) $((n / 32 * 34)) dotprod
Q4_K.groups BenchmarkArm64Kernels $reps 8 ggml_vec_dot_q4_K_q8_K $((n / 256 * 144)) $((n / 256 * 292)) dotprod
Q6_K.groups BenchmarkArm64Kernels $reps 8 ggml_vec_dot_q6_K_q8_K $((n / 256 * 210)) $((n / 256 * 292)) dotprod
Q1_0 BenchmarkKernelSets $reps 1 ggml_vec_dot_q1_0_q8_0 $((n / 128 * 18)) $((n / 32 * 34))
Q1_0.q1lut BenchmarkArm64Kernels $reps 16 ggml_vec_dot_q1_0_q8_0 $((n / 128 * 18)) $((n / 32 * 34))
Q1_0.q1lut+tables BenchmarkArm64Kernels 2 $q2lutRows ggml_vec_dot_q1_0_q8_0 $((n / 128 * 18)) $((n / 32 * 34))
Q2_0 BenchmarkKernelSets $reps 1 ggml_vec_dot_q2_0_q8_0 $((n / 64 * 18)) $((n / 32 * 34))
TQ1_0 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_tq1_0_q8_K $((n / 256 * 54)) $((n / 256 * 292))
TQ2_0 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_tq2_0_q8_K $((n / 256 * 66)) $((n / 256 * 292))
TQ1_0.ter3 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_tq1_0_q8_K $((n / 256 * 54)) $((n / 256 * 292))
TQ2_0.ter2 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_tq2_0_q8_K $((n / 256 * 66)) $((n / 256 * 292))
TQ2_0.ter2s128 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_tq2_0_q8_K $((n / 256 * 66)) $((n / 256 * 292))
Q2_0.ter3 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_q2_0_q8_0 $((n / 64 * 18)) $((n / 32 * 34))
Q2_0.ter2 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_q2_0_q8_0 $((n / 64 * 18)) $((n / 32 * 34))
Q2_0.ter2s128 BenchmarkTernaryKernels $reps 1 ggml_vec_dot_q2_0_q8_0 $((n / 64 * 18)) $((n / 32 * 34))
EOF
} >"$out"
cat "$out"
ref=$root/kernels/testdata/icount-arm64.txt
if [ "$update" = 1 ]; then
	cp "$out" "$ref"
	echo "wrote $ref"
	exit 0
fi
[ -f "$ref" ] || { echo "icount: no $ref (bench/icount.sh --update writes it)"; exit 1; }
# Per (kernel, set): the per-weight figures and the ratio against the
# committed ones, within the noise allowed above.
if ! awk -F'\t' '
	/^#/ { next }
	FNR == NR { old[$1 "/" $2] = $8 " " $9 " " $13 " " $14; next }
	{
		k = $1 "/" $2
		if (!(k in old)) { print "icount: " k " is not in the committed table"; bad = 1; next }
		split(old[k], o, " "); delete old[k]
		d1 = $8 - o[1]; d2 = $9 - o[2]; d3 = $13 - o[3]; d4 = $14 - o[4]
		if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2; if (d3 < 0) d3 = -d3; if (d4 < 0) d4 = -d4
		if (d1 > 0.005 || d2 > 0.005 || d3 > 0.005 || d4 > 0.01) {
			printf "icount: %s: ours %s asm %s ggml %s ratio %s, committed %s %s %s %s\n", k, $8, $9, $13, $14, o[1], o[2], o[3], o[4]
			bad = 1
		}
	}
	END { for (k in old) { print "icount: " k " is no longer counted"; bad = 1 } exit bad }' "$ref" "$out"; then
	echo "icount: the counts differ from $ref (bench/icount.sh --update rewrites it)"
	exit 1
fi
echo "icount: the counts agree with $ref"
