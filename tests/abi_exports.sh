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
