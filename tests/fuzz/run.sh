#!/bin/sh
# run.sh SECONDS|build [BUILD-DIR]: builds the libFuzzer targets with clang (a build
# directory of its own, WQ_FUZZ=ON) and runs each for SECONDS on a copy of its seed
# corpus (tests/fuzz/corpus/<target>; new inputs go to the copy, the seeds stay as they
# are); `build` only builds. FUZZ_TARGETS narrows the list (tests/fuzz/targets.cmake);
# FUZZ_JOBS targets run at once (default 2: each is one process on one core). A crash,
# a leak or a broken property (abort) fails it; the input is kept in the build
# directory. Without clang: skipped (exit 77), a failure under CI=true.
set -eu
secs=${1:-20}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${2:-$src/build-fuzz}
jobs=${FUZZ_JOBS:-2}
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
[ "$secs" = build ] && { echo "ok: fuzz targets built in $build"; exit 0; }
targets=${FUZZ_TARGETS:-$(sed -n 's/^set(WQ_FUZZ_TARGETS \(.*\))$/\1/p' "$here/targets.cmake")}

# run_one TARGET: one target for $secs; its report into $build/report-TARGET
run_one() {
	t=$1
	rm -f "$build/report-$t"
	work="$build/corpus-$t"
	mkdir -p "$work" "$build/crashes-$t"
	if out=$("$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$build/crashes-$t/" -print_final_stats=1 "$work" "$here/corpus/$t" 2>&1); then
		runs=$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
		echo "ok fuzz_$t: ${runs:-?} executions in ${secs}s" >"$build/report-$t"
	else
		{ printf '%s\n' "$out" | tail -n 40; echo "FAIL: fuzz_$t (inputs in $build/crashes-$t)"; } >"$build/report-$t"
		return 1
	fi
}

failed=0
set -- $targets
while [ $# -gt 0 ]; do
	pids=""
	i=0
	while [ $i -lt "$jobs" ] && [ $# -gt 0 ]; do
		run_one "$1" &
		pids="$pids $!"
		shift
		i=$((i + 1))
	done
	for p in $pids; do wait "$p" || failed=1; done
done
for t in $targets; do
	case $(tail -n 1 "$build/report-$t") in
	ok*) cat "$build/report-$t" ;;
	*) cat "$build/report-$t" >&2 ;;
	esac
done
exit $failed
