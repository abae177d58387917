# A worker on PostgreSQL holds three connections: its loop's and two store lanes' on
# which claims and outcome batches commit (README "PostgreSQL", Connections). A server
# that refuses some of them (here a role's connection limit) leaves the worker fewer
# lanes, or none (the loop then commits itself): it says so in its log and drains on
# what it has; every task runs once and succeeds. `store_connections = 1` in [worker]
# asks for one lane: two connections, and nothing refused or logged.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "connection limits are PostgreSQL's"
private_pg # roles are the cluster's: a throwaway server of its own

wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
[kind.lane]
command = sh $HANDLERS/handler.sh ok
EOF
CONCURRENCY=4 config "$T/one.ini" <<EOF
store_connections = 1
[kind.lane]
command = sh $HANDLERS/handler.sh ok
EOF
line_of() { printf '{"kind":"lane","payload":{"n":%d}}\n' "$1"; }
# the worker's connections under role $1 (the CLI's are the superuser's)
connections() {
	psql -At "$WAKEQ_DB" -c "SELECT count(*) FROM pg_stat_activity WHERE usename = '$1'"
}

done_so_far=0
# drain NAME LIMIT LOG_PATTERN [CONFIG]: 40 tasks drained by worker NAME (configured by
# CONFIG, else w.ini) whose role may open LIMIT connections; its log matches LOG_PATTERN
# (a refused lane), or, when the pattern is empty, the worker holds LIMIT connections
# and its log has no lane warning.
drain() {
	role=wq_lanes_$1
	psql -q "$WAKEQ_DB" -c "CREATE ROLE $role LOGIN CONNECTION LIMIT $2" \
		-c "GRANT ALL ON ALL TABLES IN SCHEMA public TO $role" \
		-c "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO $role" >/dev/null
	WAKEQ_DB=$(echo "$WAKEQ_DB" | sed "s|//[^@/]*@|//$role@|") \
		start_worker "$1" "${4:-$T/w.ini}"
	wait_until 30 grep -q "started" "$T/$1.log"
	enqueue_in_batches 40 line_of "$1" || fail "a batch of tasks was not accepted whole"
	done_so_far=$((done_so_far + 40))
	wait_all_succeeded "$done_so_far" 120
	if [ -n "$3" ]; then
		grep -q "$3" "$T/$1.log" || fail "$1: no '$3' in the worker's log"
	else
		expect_eq "$(connections "$role")" "$2" "$1: the worker's connections"
		! grep -q "store lane" "$T/$1.log" || fail "$1: a lane was refused"
	fi
	kill -TERM "$(cat "$T/$1.pid")"
	wait "$(cat "$T/$1.pid")" || fail "the worker $1 exited $? after its drain"
}

drain three 3 ""
drain two 2 "store lane 1: cannot open a connection"
drain one 1 "no store lane: the event loop records outcomes itself"
drain asked_one 2 "" "$T/one.ini"
expect_eq "$(lines "$T/runs")" 160 "handler runs"
expect_eq "$(sort -u "$T/runs" | wc -l | tr -d ' ')" 160 "distinct tasks run"
