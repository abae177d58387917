# build_deps.sh SRCDIR (issue 14): `make` needs the build dependencies only. The lists of
# scripts/deps put cmocka, PostgreSQL and the test tools under --test alone, and the
# project configures and builds the tool and the library with cmocka hidden from
# pkg-config (the tests are left out, saying so). Release build only (it builds again).
set -eu
SRC=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d /tmp/wakeq-deps.XXXXXX)
trap 'rm -rf "$T"' EXIT

build=$(sh "$SRC/scripts/deps" --list)
all=$(sh "$SRC/scripts/deps" --list --test)
demo=$(sh "$SRC/scripts/deps" --list --demo)
echo "$demo" | grep -qx python3 || fail "python3 (examples/demo.sh) is not in scripts/deps --demo"
echo "$demo" | grep -qx postgresql-15 && fail "scripts/deps --demo installs the test server"
for p in libcmocka-dev postgresql-15 python3; do
	! echo "$build" | grep -qx "$p" || fail "$p is a build dependency in scripts/deps"
	echo "$all" | grep -qx "$p" || fail "$p is not in scripts/deps --test"
done
for p in libsqlite3-dev libuv1-dev libjansson-dev nettle-dev libpq-dev libcurl4-openssl-dev cmake; do
	echo "$build" | grep -qx "$p" || fail "$p is missing from the build dependencies"
done

# every .pc file pkg-config knows, but cmocka's
mkdir "$T/pc"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	[ -d "$d" ] || continue
	for f in "$d"/*.pc; do
		[ -e "$f" ] || continue
		case "$(basename "$f")" in cmocka.pc) ;; *) [ -e "$T/pc/$(basename "$f")" ] || ln -s "$f" "$T/pc/" ;; esac
	done
done
! PKG_CONFIG_LIBDIR="$T/pc" pkg-config --exists cmocka || fail "cmocka still visible"
PKG_CONFIG_LIBDIR="$T/pc" cmake -S "$SRC" -B "$T/b" -DCMAKE_BUILD_TYPE=Release >"$T/configure.log" 2>&1 \
	|| fail "configure without cmocka failed: $(tail -n 20 "$T/configure.log")"
grep -q "tests not built" "$T/configure.log" || fail "configure does not say the tests are left out"
PKG_CONFIG_LIBDIR="$T/pc" cmake --build "$T/b" -j 2 >"$T/build.log" 2>&1 \
	|| fail "build without cmocka failed: $(tail -n 20 "$T/build.log")"
"$T/b/wakeq" --version | grep -q "^wakeq " || fail "the built wakeq does not run"
[ -e "$T/b/libwakeq.so" ] || fail "no libwakeq.so"
exit 0
