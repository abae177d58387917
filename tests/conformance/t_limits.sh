# [limits] max_active per (tenant, scope) (issue 10): an enqueue beyond it exits 5 naming
# the limit, its value, the tenant and the scope; [limits.TENANT] overrides [limits]; a
# keyed replay is never refused; room comes back when tasks end; concurrent enqueues can
# never exceed it together.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
[limits]
max_active = 2
[limits.acme]
max_active = 1
EOF

expect_exit 0 wq enqueue job --config "$T/w.ini" --key k1
expect_exit 0 wq enqueue job --config "$T/w.ini"
expect_exit 5 wq enqueue job --config "$T/w.ini"
grep -q "max_active = 2 (\[limits\]) for tenant '' scope ''" "$T/last.err" \
	|| fail "message: $(cat "$T/last.err")"
# a replay of an accepted keyed task is not a new task
expect_exit 0 wq enqueue job --config "$T/w.ini" --key k1
# another scope has room of its own; a tenant's own section applies to it
expect_exit 0 wq enqueue job --config "$T/w.ini" --scope other
export WAKEQ_CONFIG="$T/w.ini"
expect_exit 0 wq enqueue job --tenant acme
expect_exit 5 wq enqueue job --tenant acme
grep -q "max_active = 1 (\[limits.acme\]) for tenant 'acme' scope ''" "$T/last.err" \
	|| fail "message: $(cat "$T/last.err")"
unset WAKEQ_CONFIG
# without a configuration there is no limit
expect_exit 0 wq enqueue job --tenant acme

# finished tasks no longer count
run_worker "$T/w.ini"
expect_exit 0 wq enqueue job --config "$T/w.ini" --tenant acme

# concurrent enqueues into one (tenant, scope) with max_active = 3: exactly 3 get in
config "$T/c.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
[limits.race]
max_active = 3
EOF
i=0
pids=""
while [ $i -lt 8 ]; do
	( rc=0; "$WQ" enqueue job --config "$T/c.ini" --tenant race >/dev/null 2>&1 || rc=$?
	  echo $rc >"$T/rc.$i" ) &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p" || true; done
expect_eq "$(cat "$T"/rc.* | grep -c '^0$')" 3 "enqueues accepted under max_active = 3"
expect_eq "$(cat "$T"/rc.* | grep -c '^5$')" 5 "enqueues refused (exit 5)"
