# deb_package.sh SRCDIR (issue 14): `make deb` (scripts/make-deb) builds a Debian package
# holding the tool, the library, the header, the pc file, the man pages, the completions
# and the systemd unit, with Depends from the linked shared libraries; unpacked into a
# scratch root, its wakeq runs (--version, and a task end to end) and its unit starts
# that binary. Run on the release build only (like abi/exports). Needs dpkg-deb,
# dpkg-shlibdeps and cpack: without them it is skipped (77), under CI it fails.
set -eu
SRC=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
for c in dpkg-deb dpkg-shlibdeps cpack; do
	if ! command -v $c >/dev/null 2>&1; then
		case "${CI:-}" in "" | false | 0) echo "SKIP: no $c" >&2; exit 77 ;; esac
		fail "CI=$CI and $c is missing"
	fi
done
T=$(mktemp -d /tmp/wakeq-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT

deb=$(JOBS=2 "$SRC/scripts/make-deb" "$T/build" | tail -n 1)
[ -f "$deb" ] || fail "no package: $deb"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$T/contents"
for f in /usr/bin/wakeq /usr/include/wakeq.h /usr/share/man/man1/wakeq.1 \
	/usr/share/man/man5/wakeq.conf.5 /usr/share/bash-completion/completions/wakeq \
	/usr/share/zsh/vendor-completions/_wakeq /usr/lib/systemd/system/wakeq-worker@.service; do
	grep -qx "$f" "$T/contents" || fail "the package lacks $f: $(cat "$T/contents")"
done
grep -Eq '^/usr/lib/([^/]+/)?libwakeq\.so\.0$' "$T/contents" || fail "no libwakeq.so.0"
grep -Eq '^/usr/lib/([^/]+/)?pkgconfig/wakeq\.pc$' "$T/contents" || fail "no wakeq.pc"
expect() { [ "$(dpkg-deb -f "$deb" "$1")" = "$2" ] || fail "$1 is '$(dpkg-deb -f "$deb" "$1")', not '$2'"; }
expect Package wakeq
expect Version "$(sed -n 's/^project(wakeq VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")"
deps=$(dpkg-deb -f "$deb" Depends)
for d in libc6 libsqlite3-0 libuv1 libjansson4 libcurl4 libpq5; do
	echo "$deps" | grep -q "\\b$d\\b" || fail "Depends lacks $d: $deps"
done
! echo "$deps" | grep -q "cmocka\|postgresql-[0-9]" || fail "a test dependency in Depends: $deps"

# unpacked into a scratch root: the installed files work
dpkg-deb -x "$deb" "$T/root"
W="$T/root/usr/bin/wakeq"
"$W" --version | grep -q "^wakeq " || fail "wakeq --version"
grep -q '^ExecStart=/usr/bin/wakeq worker ' "$T/root/usr/lib/systemd/system/wakeq-worker@.service" \
	|| fail "the unit does not start /usr/bin/wakeq"
grep -qx 'prefix=/usr' "$T/root"/usr/lib/*/pkgconfig/wakeq.pc "$T/root"/usr/lib/pkgconfig/wakeq.pc 2>/dev/null \
	|| fail "wakeq.pc's prefix is not /usr"
export WAKEQ_DB="$T/demo.db"
printf '[kind.hello]\ncommand = /bin/cat\n' >"$T/w.ini"
"$W" init >/dev/null
id=$("$W" enqueue hello --payload '{"hi":1}')
"$W" worker --config "$T/w.ini" --until-idle 2>/dev/null
"$W" show "$id" | grep -q "^state: *succeeded" || fail "the task did not succeed: $("$W" show "$id")"
exit 0
