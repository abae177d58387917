# Turn-lock leases and schedule owner leases are measured on one clock, the store's
# (issue 15), like instance leases (t_clock_skew). Two "hosts" are processes whose clocks
# ($WAKEQ_TEST_CLOCK_OFFSET, test builds) are 10 minutes apart, far more than any lease:
#  1. a lock renewed by its holder (clock +0, `wakeq lock run`, ttl 3s) is refused to a
#     host 10 minutes ahead for as long as the holder renews (watched until the lease
#     was renewed past two of its lengths); once the holder is killed, the other host
#     gets it only after the last lease expired on the store's clock;
#  2. a lease taken by a host 10 minutes ahead and never renewed does not keep a host
#     10 minutes behind it waiting: it is taken once it expired on the store's clock;
#  3. a schedule owned by a live worker (clock +0, schedule_lease 2s) is not taken over
#     by a worker 10 minutes ahead while the owner heartbeats (watched for three
#     leases of the second worker's heartbeats); once the owner is killed it is.
# Every wait is on a state (the lock list, the schedule's owner, the heartbeats), polled
# with a bound. 3's workers start first and run through 1 and 2 (other keys; the owner
# is checked at every poll of 1), so that its three leases of watching overlap their
# waits instead of following them.
. "$WAKEQ_TESTS/conformance/lib.sh"

AHEAD=10m
ttl_secs=3

# lock_field KEY FIELD: the field of KEY's hold in `lock list` ("" when not held)
lock_field() {
	wq lock list --json | python3 -c '
import json, sys
for l in json.load(sys.stdin):
    if l["key"] == sys.argv[1]:
        print(l[sys.argv[2]] or "")
' "$1" "$2"
}
# later A B: RFC 3339 UTC time A is at or after B (one format: the text order is the time order)
later() { python3 -c 'import sys; sys.exit(0 if sys.argv[1] >= sys.argv[2] else 1)' "$1" "$2"; }
# plus_secs TIME N: TIME + N seconds, in the same format
plus_secs() {
	python3 -c '
import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ") + datetime.timedelta(seconds=int(sys.argv[2]))
print(t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000))
' "$1" "$2"
}

wq init >/dev/null

# ---- 3. a schedule of a live owner is not taken over by a worker whose clock runs ahead ----
HEARTBEAT=100ms config "$T/w.ini" <<EOF
schedule_lease = 2s
[kind.tick]
command = $HANDLERS/handler.sh ok
EOF
wq schedule add tick --every 1s tick --catch-up latest >/dev/null
WAKEQ_TEST_CLOCK_OFFSET=0 start_worker a "$T/w.ini"
instance_of() { sed -n 's/^.*wakeq: info: instance \([^ ]*\) started (pid.*/\1/p' "$T/$1.log" | tail -n 1; }
owner() { json_field "$(wq schedule show tick --json)" 'd["owner"] or ""'; }
wait_until 30 eval '[ -n "$(instance_of a)" ]'
aid=$(instance_of a)
owned_by_a() { [ "$(owner)" = "$aid" ]; }
wait_until 30 owned_by_a

WAKEQ_TEST_CLOCK_OFFSET=$AHEAD start_worker b "$T/w.ini"
wait_until 30 eval '[ -n "$(instance_of b)" ]'
bid=$(instance_of b)
# b's heartbeat as b's own clock wrote it, in µs (each heartbeat also renews or tries
# the schedule leases)
beat_of_b() {
	wq workers --json | python3 -c '
import datetime, json, sys
for w in json.load(sys.stdin):
    if w["id"] == sys.argv[1]:
        t = datetime.datetime.strptime(w["heartbeat_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
        print(int((t - datetime.datetime(1970, 1, 1)).total_seconds() * 1000000))
' "$bid"
}
wait_until 30 eval '[ -n "$(beat_of_b)" ]'
b_first=$(beat_of_b)
a_owns() {
	o=$(owner)
	[ "$o" = "$aid" ] || fail "the schedule went to '$o' while its owner $aid was alive (b: $bid)"
}
# (3 goes on below, after 2)

# ---- 1. a renewed lock is not taken by a host whose clock runs ahead ----
WAKEQ_TEST_CLOCK_OFFSET=0 "$WQ" lock run K --ttl ${ttl_secs}s --holder chat -- \
	sh -c 'while [ ! -f "$1" ]; do sleep 0.05; done' sh "$T/stop" >"$T/run.log" 2>&1 &
runpid=$!
BG_PIDS="$BG_PIDS $runpid"
held_by_chat() { [ "$(lock_field K holder)" = chat ]; }
wait_until 30 held_by_chat
first=$(lock_field K expires_at)
past=$(plus_secs "$first" $((2 * ttl_secs)))
thief_tries=0
# every poll: the host 10 minutes ahead is refused (exit 5, held by chat)
refused_until_renewed_past() {
	set +e
	WAKEQ_TEST_CLOCK_OFFSET=$AHEAD "$WQ" lock acquire K --ttl ${ttl_secs}s --holder thief \
		>"$T/thief.out" 2>"$T/thief.err"
	got=$?
	set -e
	thief_tries=$((thief_tries + 1))
	[ "$got" -eq 5 ] || fail "a host 10 minutes ahead took a renewed lease (exit $got: $(cat "$T/thief.out" "$T/thief.err"))"
	a_owns # (3)
	# done once renewed past two lengths, and tried at least 3 times (a slow build
	# may renew past them before its third try)
	[ "$thief_tries" -ge 3 ] && later "$(lock_field K expires_at)" "$past"
}
# (a plain loop: wait_until would hide the fail inside its condition)
end=$(( $(date +%s) + 60 ))
until refused_until_renewed_past; do
	[ "$(date +%s)" -lt "$end" ] || fail "the holder did not renew past $past (lease $(lock_field K expires_at))"
	sleep 0.1
done
held_by_chat || fail "the lock is not chat's after the renewals"

# the holder stops renewing (killed: it never releases); its child is told to end
kill -KILL "$runpid"
wait "$runpid" 2>/dev/null || true
: >"$T/stop"
last=$(lock_field K expires_at)
[ -n "$last" ] || fail "the killed holder's lease is not listed"
taken() { WAKEQ_TEST_CLOCK_OFFSET=$AHEAD wq lock acquire K --ttl 60s --holder thief; }
wait_until 30 taken
acquired=$(lock_field K acquired_at)
later "$acquired" "$last" || fail "taken over at $acquired, before the lease's end $last (store clock)"
expect_eq "$(lock_field K holder)" thief "K after the takeover"

# ---- 2. an expired lease of a host ahead does not block a host behind ----
WAKEQ_TEST_CLOCK_OFFSET=$AHEAD wq lock acquire L --ttl 1s --holder ahead >/dev/null
behind_takes() { WAKEQ_TEST_CLOCK_OFFSET=-$AHEAD wq lock acquire L --ttl 60s --holder behind; }
# (before issue 15 this waited 20 minutes: the lease ran out on the first host's clock)
wait_until 30 behind_takes
expect_eq "$(lock_field L holder)" behind "L after the expired lease"

# ---- 3, continued ----
# every poll: a still owns the schedule; until b has heartbeaten for 3 leases (6 s: by
# now, after 1 and 2, usually at the first poll)
a_kept_it() {
	a_owns
	[ "$(beat_of_b)" -ge $((b_first + 6000000)) ]
}
end=$(( $(date +%s) + 60 ))
until a_kept_it; do
	[ "$(date +%s)" -lt "$end" ] || fail "b did not heartbeat for 6 s"
	sleep 0.1
done

# the owner dies: b takes the schedule over once a's lease expired on the store's clock
kill -KILL "$(cat "$T/a.pid")"
wait "$(cat "$T/a.pid")" 2>/dev/null || true
owned_by_b() { [ "$(owner)" = "$bid" ]; }
wait_until 30 owned_by_b

# no slot enqueued twice across the two clocks
wq list --kind tick --limit 100000 --json | python3 -c '
import json, sys, collections
ops = [x["operation"] for x in json.load(sys.stdin)]
dup = [k for k, n in collections.Counter(ops).items() if n > 1]
assert not dup, "slot enqueued twice: %r" % dup
' || fail "slot keys"
echo ok
