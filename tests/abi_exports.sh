#!/bin/sh
# libwakeq.so exports the public API only: every defined dynamic symbol is wq_ + a letter,
# and the public entry points a program needs are there.
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
bad=$(printf '%s\n' "$syms" | grep -v '^wq_[a-z]' || true)
if [ -n "$bad" ]; then
	echo "FAIL: libwakeq.so exports symbols outside the public API:" >&2
	printf '%s\n' "$bad" | head -20 >&2
	exit 1
fi
for want in wq_db_open wq_enqueue wq_strerror; do
	printf '%s\n' "$syms" | grep -qx "$want" || { echo "FAIL: $want is not exported" >&2; exit 1; }
done
echo "ok: $(printf '%s\n' "$syms" | wc -l) public symbols"

# Failpoints and the test clock (src/failpoint.h) exist in test builds only. $2 is the
# build's WQ_FAILPOINTS (ON in Debug/RelWithDebInfo, OFF in Release): without them the
# library holds no failpoint symbol and none of their strings; with them both are there
# (so that this check is known to see them when they are present).
fp=${2:-}
if [ -n "$fp" ]; then
	found=$( { nm "$lib" 2>/dev/null; nm -D "$lib"; } | grep -c 'failpoint\|clock_set_offset' || true)
	strs=$(strings -a "$lib" | grep -c 'WAKEQ_FAILPOINT\|WAKEQ_TEST_CLOCK_OFFSET\|commit-lost\|claim-committed' || true)
	case "$fp" in
	ON | on | 1 | TRUE | true)
		[ "$found" -gt 0 ] && [ "$strs" -gt 0 ] ||
			{ echo "FAIL: a WQ_FAILPOINTS=ON build has no failpoints ($found symbols, $strs strings)" >&2; exit 1; } ;;
	*)
		[ "$found" -eq 0 ] && [ "$strs" -eq 0 ] ||
			{ echo "FAIL: a release build contains failpoints ($found symbols, $strs strings)" >&2; exit 1; }
		echo "ok: no failpoint symbol or string in the release library" ;;
	esac
fi
