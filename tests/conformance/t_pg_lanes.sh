# A worker on PostgreSQL holds three connections: its loop's and two store lanes' on
# which claims and outcome batches commit (README "PostgreSQL", Connections). A server
# that refuses some of them (here a role's connection limit) leaves the worker fewer
# lanes, or none (the loop then commits itself): it says so in its log and drains on
# what it has; every task runs once and succeeds.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "connection limits are PostgreSQL's"
private_pg # roles are the cluster's: a throwaway server of its own

wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
[kind.lane]
command = sh $HANDLERS/handler.sh ok
EOF
line_of() { printf '{"kind":"lane","payload":{"n":%d}}\n' "$1"; }
# the worker's connections under role $1 (the CLI's are the superuser's)
connections() {
	psql -At "$WAKEQ_DB" -c "SELECT count(*) FROM pg_stat_activity WHERE usename = '$1'"
}

done_so_far=0
# drain LIMIT LOG_PATTERN: 40 tasks drained by a worker whose role may open LIMIT
# connections; its log matches LOG_PATTERN (a refused lane), or has no lane warning
# when the pattern is empty.
drain() {
	role=wq_lanes_$1
	psql -q "$WAKEQ_DB" -c "CREATE ROLE $role LOGIN CONNECTION LIMIT $1" \
		-c "GRANT ALL ON ALL TABLES IN SCHEMA public TO $role" \
		-c "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO $role" >/dev/null
	WAKEQ_DB=$(echo "$WAKEQ_DB" | sed "s|//[^@/]*@|//$role@|") \
		start_worker "w$1" "$T/w.ini"
	wait_until 30 grep -q "started" "$T/w$1.log"
	enqueue_in_batches 40 line_of "l$1" || fail "a batch of tasks was not accepted whole"
	done_so_far=$((done_so_far + 40))
	wait_all_succeeded "$done_so_far" 120
	if [ -n "$2" ]; then
		grep -q "$2" "$T/w$1.log" || fail "limit $1: no '$2' in the worker's log"
	else
		expect_eq "$(connections "$role")" 3 "the worker's connections (loop and two lanes)"
		! grep -q "store lane" "$T/w$1.log" || fail "limit $1: a lane was refused"
	fi
	kill -TERM "$(cat "$T/w$1.pid")"
	wait "$(cat "$T/w$1.pid")" || fail "the worker (limit $1) exited $? after its drain"
}

drain 3 ""
drain 2 "store lane 1: cannot open a connection"
drain 1 "no store lane: the event loop records outcomes itself"
expect_eq "$(lines "$T/runs")" 120 "handler runs"
expect_eq "$(sort -u "$T/runs" | wc -l | tr -d ' ')" 120 "distinct tasks run"
