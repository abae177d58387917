# wakeq lock run KEY --ttl DUR -- CMD (issue 10): holds KEY while CMD runs, renews the
# lease (every DUR/3) so it outlives its first TTL, refuses another holder meanwhile,
# releases at the end and exits with CMD's status. A held key: exit 5, CMD not run.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
export WQ
cat >"$T/cmd.sh" <<'EOF'
# the lease's expiry now, as the store lists it
expiry() { "$WQ" lock list --json | python3 -c 'import json,sys; print([l["expires_at"] for l in json.load(sys.stdin) if l["key"]=="turn:1"][0])'; }
first=$(expiry)
i=0
while [ $i -lt 200 ]; do
	now=$(expiry)
	[ "$now" != "$first" ] && break
	sleep 0.05
	i=$((i + 1))
done
[ "$now" != "$first" ] || exit 9
"$WQ" lock acquire turn:1 --holder other --ttl 1s 2>/dev/null
echo $? >"$WAKEQ_TEST_DIR/other.rc"
exit 3
EOF
expect_exit 3 wq lock run turn:1 --ttl 900ms --holder runner -- sh "$T/cmd.sh"
expect_eq "$(cat "$T/other.rc")" 5 "another holder while the command runs"
expect_eq "$(wq lock list)" "no lock is held" "locks after the command"

expect_exit 0 wq lock acquire turn:1 --holder chat --ttl 60s
expect_exit 5 wq lock run turn:1 --ttl 1s -- touch "$T/ran"
grep -q "held by 'chat'" "$T/last.err" || fail "exit 5 names the holder: $(cat "$T/last.err")"
[ ! -e "$T/ran" ] || fail "the command ran without the key"
