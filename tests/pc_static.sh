#!/bin/sh
# wakeq.pc links a program against libwakeq.a: its Requires.private names every library
# libwakeq.a needs (libpq among them when the PostgreSQL backend is built in). Those are
# linked as shared libraries here (Debian ships few static archives of their own deps).
# Usage: pc_static.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat >"$t/prog.c" <<'C'
#include <stdio.h>
#include <wakeq.h>
int main(void)
{
	wq_db *db = NULL;
	wq_error e;
	/* opening touches the store code, so the backends' libraries must be linked */
	if (wq_db_open("", 0, &db, &e) == WQ_OK)
		return 1;
	printf("%s\n", wq_strerror(WQ_EINVAL));
	return 0;
}
C
pc="pkg-config --define-variable=libdir=$build --define-variable=includedir=$src/include"
export PKG_CONFIG_PATH="$build"
reqs=$($pc --print-requires-private wakeq | awk '{print $1}')
# shellcheck disable=SC2046,SC2086
cc -o "$t/prog" "$t/prog.c" $($pc --cflags wakeq) $($pc --libs-only-L wakeq) \
	-Wl,-Bstatic -lwakeq -Wl,-Bdynamic $(pkg-config --libs $reqs) -lm
"$t/prog" | grep -q "invalid argument"
echo "ok: a static program links with wakeq.pc"
