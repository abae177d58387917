# A backend that cannot run is "skipped" (exit 77) on a developer's machine, but under CI
# (CI=true) it fails the run: lib.sh's PostgreSQL setup without a server, and
# scripts/with-postgres without PostgreSQL's server binaries.
. "$WAKEQ_TESTS/conformance/lib.sh"

printf '. "$WAKEQ_TESTS/conformance/lib.sh"\necho probe ran\n' >"$T/probe.sh"
run_probe() { env -u WAKEQ_TEST_PG_URL WAKEQ_TEST_BACKEND=postgres "$@" sh "$T/probe.sh"; }

expect_exit 77 run_probe env -u CI
grep -q "SKIP" "$T/last.err" || fail "no SKIP line: $(cat "$T/last.err")"
expect_exit 77 run_probe CI=false
set +e
run_probe CI=true >"$T/last.out" 2>"$T/last.err"
got=$?
set -e
[ "$got" -ne 0 ] && [ "$got" -ne 77 ] || fail "CI=true: a skipped PostgreSQL backend exited $got"
grep -q "CI=true" "$T/last.err" || fail "the CI failure does not say why: $(cat "$T/last.err")"
grep -q "probe ran" "$T/last.out" && fail "the test body ran without a server"

# scripts/with-postgres with no server binaries under WAKEQ_TEST_PG_ROOT
WP="$WAKEQ_TESTS/../scripts/with-postgres"
mkdir "$T/no-postgres"
expect_exit 0 env -u CI WAKEQ_TEST_PG_ROOT="$T/no-postgres" sh "$WP" true
grep -q "skipped" "$T/last.err" || fail "with-postgres does not say the tests will be skipped"
set +e
env CI=true WAKEQ_TEST_PG_ROOT="$T/no-postgres" sh "$WP" sh -c 'echo ran' >"$T/last.out" 2>"$T/last.err"
got=$?
set -e
[ "$got" -ne 0 ] || fail "CI=true: with-postgres ran its command without PostgreSQL"
grep -q "ran" "$T/last.out" && fail "CI=true: with-postgres ran its command without PostgreSQL"
true
