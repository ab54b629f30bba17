#!/usr/bin/env bash
# scale.sh runs BenchmarkScale from prebuilt test binaries, one after the
# other, round after round, so that a noisy or borrowed machine treats them
# alike: build them where Go is (go test -c -o DIR/NAME.test ./bench, one
# per commit to compare), copy this script into DIR, carry DIR to the
# machine (it needs no Go), and run
#
#	OUT=results DIR/scale.sh DIR [CPUS] [ROUNDS] [BENCHTIME]
#
# Each binary's rows go to $OUT/NAME.txt, ready for
# benchstat -col /peer $OUT/NAME.txt, or benchstat $OUT/base.txt $OUT/new.txt.
# CPUS is the -cpu list (1,2,4,8,16), ROUNDS how many times each binary
# runs (2), BENCHTIME each row's time (500ms). SHAPES narrows the run to
# some shapes, a regexp for the second level of Scale's names (.). A round
# of one binary is about a second per row: 42 rows (-cpu 1,2) took 41 s on
# 2 cores, and -cpu 1,2,4,8,16 makes 105, so two binaries of two rounds
# each fit in about seven minutes.
set -euo pipefail

dir=${1:?usage: OUT=dir scale.sh DIR [CPUS] [ROUNDS] [BENCHTIME]}
cpus=${2:-1,2,4,8,16}
rounds=${3:-2}
benchtime=${4:-500ms}
shapes=${SHAPES:-.}
out=${OUT:?set OUT to the directory for the results}
mkdir -p "$out"

bins=("$dir"/*.test)
[ -e "${bins[0]}" ] || { echo "scale.sh: no *.test binaries in $dir" >&2; exit 2; }

{
	date -u
	nproc
	uname -a
} >"$out/machine.txt"
for round in $(seq "$rounds"); do
	for bin in "${bins[@]}"; do
		name=$(basename "$bin" .test)
		echo "round $round: $name" >&2
		"$bin" -test.run '^$' -test.bench "^BenchmarkScale\$/$shapes" -test.benchmem \
			-test.cpu "$cpus" -test.count 1 -test.benchtime "$benchtime" -test.timeout 30m \
			>>"$out/$name.txt" 2>>"$out/$name.stderr"
	done
done
