# $WAKEQ_IDEMPOTENCY_KEY (README "Command handlers") and the effect key printed by
# `wakeq effect begin` (README "The effect journal"): one key per operation identity,
# the same in every attempt, different for any two identities however their fields are
# spelled, and [A-Za-z0-9-]{1,255} (safe as an HTTP header value).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
# The handler records "<task> <attempt n> <operation key> <effect key>" in $T/keys. Its
# first attempt exits 75 (retry) before any effect, its second begins the effect `pay`
# and confirms it. For operations named uncertain-*, the first attempt begins the effect
# and exits 75 without confirming it: the second finds it uncertain, with the same key.
cat >"$T/h.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
n=${WAKEQ_ATTEMPT_ID#*.}
begin() { "$WAKEQ_BIN" effect begin pay | sed -n 's/^key //p'; }
case "$WAKEQ_OPERATION" in
uncertain-*)
	ek=$(begin)
	echo "$WAKEQ_TASK_ID $n ${WAKEQ_IDEMPOTENCY_KEY-unset} ${ek:-none}" >>"$WAKEQ_TEST_DIR/keys"
	[ "$n" -ge 2 ] || exit 75 ;;
*)
	if [ "$n" -lt 2 ]; then
		echo "$WAKEQ_TASK_ID $n ${WAKEQ_IDEMPOTENCY_KEY-unset} none" >>"$WAKEQ_TEST_DIR/keys"
		exit 75
	fi
	ek=$(begin)
	"$WAKEQ_BIN" effect done pay || exit 1
	echo "$WAKEQ_TASK_ID $n ${WAKEQ_IDEMPOTENCY_KEY-unset} ${ek:-none}" >>"$WAKEQ_TEST_DIR/keys" ;;
esac
exit 0
EOF
config "$T/w.ini" <<EOF
[kind.pay]
command = sh $T/h.sh
max_attempts = 3
retry_backoff = 10ms
EOF
export WAKEQ_BIN="$WQ"
acme=$(wq enqueue pay --tenant acme --key order-1)
globex=$(wq enqueue pay --tenant globex --key order-1)
unkeyed=$(wq enqueue pay --tenant acme --json)
generated=$(json_field "$unkeyed" 'd["operation"]')
unkeyed=$(json_field "$unkeyed" 'd["id"]')
# a caller's key that spells another task's generated id is still another operation
copy=$(wq enqueue pay --tenant acme --key "$generated")
# separators inside the fields cannot make two identities equal
sep1=$(wq enqueue pay --tenant 'x:y' --scope 'z' --key k)
sep2=$(wq enqueue pay --tenant 'x' --scope 'y:z' --key k)
sep3=$(wq enqueue pay --tenant 'x' --scope 'y' --key 'z:k')
unc=$(wq enqueue pay --tenant acme --key uncertain-1)
run_worker "$T/w.ini"

for id in $acme $globex $unkeyed $copy $sep1 $sep2 $sep3; do
	expect_eq "$(state_of "$id")" succeeded "task $id (75, then 0)"
done
expect_eq "$(state_of "$unc")" interrupted "the task that found its effect uncertain"

# key_of TASK ATTEMPT [FIELD]: the recorded operation key (3) or effect key (4)
key_of() { awk -v t="$1" -v n="$2" -v f="${3:-3}" '$1 == t && $2 == n { print $f }' "$T/keys"; }
valid() { printf '%s' "$1" | grep -Eq '^[A-Za-z0-9-]{1,255}$'; }

all=""
for id in $acme $globex $unkeyed $copy $sep1 $sep2 $sep3 $unc; do
	k1=$(key_of "$id" 1)
	k2=$(key_of "$id" 2)
	[ -n "$k1" ] && [ "$k1" != unset ] || fail "task $id attempt 1 got no WAKEQ_IDEMPOTENCY_KEY"
	valid "$k1" || fail "task $id: WAKEQ_IDEMPOTENCY_KEY '$k1' is not [A-Za-z0-9-]{1,255}"
	expect_eq "$k2" "$k1" "task $id: the key of attempt 2 equals attempt 1's"
	all="$all $k1"
done
[ "$(echo $all | tr ' ' '\n' | sort -u | wc -l)" -eq 8 ] ||
	fail "two operations got the same WAKEQ_IDEMPOTENCY_KEY: $all"
[ "$(key_of "$acme" 1)" != "$(key_of "$globex" 1)" ] || fail "acme and globex share a key"
# $WAKEQ_OPERATION stays the human-readable name
grep -q "^$acme " "$T/keys" && [ "$(key_of "$acme" 1)" != "order-1" ] ||
	fail "the idempotency key is the bare operation key"

# effect keys: printed on `new` and `uncertain`, one per (operation, effect)
effects=""
for id in $acme $globex $unkeyed $copy $sep1 $sep2 $sep3; do
	e=$(key_of "$id" 2 4)
	valid "$e" || fail "task $id: effect key '$e' is not [A-Za-z0-9-]{1,255}"
	[ "$e" != "$(key_of "$id" 2)" ] || fail "task $id: the effect key is the operation key"
	effects="$effects $e"
done
eu1=$(key_of "$unc" 1 4)
eu2=$(key_of "$unc" 2 4)
valid "$eu1" || fail "effect key on new: '$eu1'"
expect_eq "$eu2" "$eu1" "the effect key printed with 'uncertain' equals the one printed with 'new'"
effects="$effects $eu1"
[ "$(echo $effects | tr ' ' '\n' | sort -u | wc -l)" -eq 8 ] ||
	fail "two operations got the same effect key: $effects"

