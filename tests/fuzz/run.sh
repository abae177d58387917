#!/bin/sh
# run.sh SECONDS [BUILD-DIR]: builds the libFuzzer targets with clang (a build directory
# of its own, WQ_FUZZ=ON) and runs each for SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/<target>; new inputs go to the copy, the seeds stay as they are).
# A crash or a broken property (abort) fails it; the input is kept in the build
# directory. Without clang: skipped (exit 77), a failure under CI=true.
set -eu
secs=${1:-20}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${2:-$src/build-fuzz}
if ! command -v clang >/dev/null 2>&1; then
	case "${CI:-}" in
	"" | false | 0) echo "SKIP: clang is not installed (scripts/deps installs it)" >&2; exit 77 ;;
	*) echo "FAIL: CI=$CI and clang is missing: the fuzz targets cannot run" >&2; exit 1 ;;
	esac
fi
# serialised: two ctest entries must not configure the same directory at once
mkdir -p "$build"
exec 9>"$build/.lock"
flock 9
CC=clang cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DWQ_FUZZ=ON -DWQ_FAILPOINTS=OFF >/dev/null
cmake --build "$build" -j2 >"$build/build.log" 2>&1 || { tail -n 30 "$build/build.log" >&2; exit 1; }
flock -u 9
targets=${FUZZ_TARGETS:-"json config time cron argv"}
for t in $targets; do
	work="$build/corpus-$t"
	mkdir -p "$work" "$build/crashes-$t"
	out=$("$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$build/crashes-$t/" -print_final_stats=1 "$work" "$here/corpus/$t" 2>&1) || {
		printf '%s\n' "$out" | tail -n 40 >&2
		echo "FAIL: fuzz_$t (inputs in $build/crashes-$t)" >&2
		exit 1
	}
	runs=$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
	echo "ok fuzz_$t: ${runs:-?} executions in ${secs}s"
done
