/*
 * statements.h — every SQL statement of the store, once, with $N placeholders.
 *
 * X(ID, TEXT): TEXT is the statement for both dialects, or NULL when the dialects differ
 * as a whole; then dialect_sqlite.c and dialect_postgres.c each give their variant. A
 * TEXT may use the dialect fragments below (D_...), which each dialect file defines
 * before it expands this list; nothing else expands TEXT (enum wq__sql_id ignores it).
 *
 *   D_FOR_UPDATE      " FOR UPDATE" (PostgreSQL row lock; SQLite's write lock covers it)
 *   D_SKIP_LOCKED     " FOR UPDATE SKIP LOCKED" in a claim's pick
 *   D_FOR_SHARE       " FOR SHARE" (PostgreSQL: a row another statement reads as evidence
 *                     stays as it is until this transaction ends; SQLite: "")
 *   D_PICK(sub)       "id IN (sub)"; PostgreSQL "id = ANY (ARRAY (sub))", evaluated once
 *                     (an IN over SKIP LOCKED may be re-run per row and claim too much)
 *   D_TEXTS(p)        the strings of JSON array text p, as a sub-select
 *   D_IDS(p)          the integers of JSON array text p, as a sub-select
 *   D_ID_IN(p)        "id IN " D_IDS(p); PostgreSQL "id = ANY (p as a bigint[])": the
 *                     array bound once, looked up in tasks_pkey (wave 7 pg)
 *   D_RETURNING_ID    " RETURNING id" of an insert; SQLite: "" (RETURNING costs it a
 *                     temporary table), the id then comes from SQL_LAST_ID
 *   D_MEMBER_INT(p, k) the integer member named by text k of JSON object text p, as a
 *                     scalar expression (NULL when absent); no table function per row
 *   D_UNINDEXED(col)  col, written so SQLite uses no index for it ("+col"): the claim's
 *                     outer re-check of state would otherwise make SQLite walk every
 *                     pending row of tasks_claim instead of looking the picked ids up
 *                     (O(pending) per claim). PostgreSQL: (col || ''), likewise.
 *   D_UNINDEXED_NUM(col) a number col, written so SQLite uses no index for it: the
 *                     claim's "due" test would otherwise lead SQLite to tasks_due
 *                     (kind, due_at), read every due task of the kind and sort them,
 *                     instead of walking tasks_claim in order up to its LIMIT.
 *                     PostgreSQL: col (its planner weighs the LIMIT's order itself).
 *   D_TEXT_ROWS(p)    the strings of JSON array text p as a FROM item whose one column
 *                     is named `value` (wave 6: WQ__SERVED)
 *   D_PER_KIND(kinds, where, n)
 *                     wave 6: the ids of the claim's pick, each kind's own range read
 *                     apart and merged. For each row k of `kinds` (a FROM item with
 *                     column k.value), the first n tasks p of kind k.value matching
 *                     `where` in (order_at, id) order, from tasks_claim (state, kind,
 *                     order_at, id); of all of them the first n in (order_at, id) order.
 *                     SQLite: a correlated "IN (... LIMIT n)" per kind; PostgreSQL: a
 *                     CROSS JOIN LATERAL per kind, each row locked FOR UPDATE SKIP
 *                     LOCKED inside it (so a kind may lock up to n rows it then does
 *                     not hand out, until the claim's transaction ends).
 *   D_ID_COL, D_NEXT_ID(tbl)
 *                     SQLite names the id of a new task, event, delivery or inbox row:
 *                     above every id the table ever had (id_floor keeps the highest id
 *                     prune removed), so an id that left the store is never reused.
 *                     PostgreSQL: identity columns ("" for both).
 *
 * Rules: bound parameters only (never a value spliced into text); $N numbered from 1,
 * each number one argument; RETURNING and ON CONFLICT on both (SQLite >= 3.35, checked at
 * open). No booleans are read back: EXISTS is written CASE WHEN ... THEN 1 ELSE 0 END.
 */
#ifndef WQ_STATEMENTS_H
#define WQ_STATEMENTS_H

/* The columns of a wq_task, in the order of op_task.c's task_cols. */
#define WQ__TASK_COLUMNS                                                                   \
	"id, kind, tenant, scope, operation, state, priority, payload_version, payload_size, " \
	"payload_sha256, attempt, max_attempts, created_at, updated_at, due_at, started_at, " \
	"finished_at, instance, reason, reason_detail, outcome, cancel_requested, "           \
	"has_result, result_size, result_sha256, keyed, fingerprint"

/* The columns claim hands out, in the order op_claim.c reads them. */
#define WQ__CLAIM_COLUMNS                                                                  \
	"id, attempt, kind, tenant, scope, operation, payload_version, max_attempts, "        \
	"payload, order_at, keyed, lock_key"

/* SQL_TASK_STATES: a task of a batch with what its finish may touch besides the task
 * row (op_rows.c facts_cols): notify channels, a turn lock row, an intake record. */
#define WQ__TASK_FACTS_COLUMNS                                                             \
	"tasks.id, tasks.state, tasks.attempt, tasks.instance, tasks.cancel_requested, "    \
	"tasks.uncertain_effect, CASE WHEN tasks.notify IS NOT NULL THEN 1 ELSE 0 END, "     \
	"CASE WHEN EXISTS (SELECT 1 FROM locks l WHERE l.task_id = tasks.id) THEN 1 ELSE 0 " \
	"END, CASE WHEN EXISTS (SELECT 1 FROM intake i WHERE i.task_id = tasks.id) THEN 1 "  \
	"ELSE 0 END"

#define WQ__INSTANCE_COLUMNS "id, host, host_id, pid, proc_start, started_at, heartbeat_at"

/* The fencing condition of SPEC §3 for the task of (id, attempt, instance): shared by
 * the five finish statements (WQ__OWNED, their $1 $2 $3) and SQLite's multi-row finish
 * (dialect_sqlite.c, one row of bound values each). */
#define WQ__FENCE(id, attempt, instance)                                                   \
	"id = " id " AND state = 'running' AND attempt = " attempt " AND instance = " instance
#define WQ__OWNED " WHERE " WQ__FENCE("$1", "$2", "$3")

/* What recording a success writes (SQL_FINISH_SUCCEEDED, $4..$10; SQLite's multi-row
 * finish, the columns of its rows of values). */
#define WQ__SUCCEEDED_SET(now, outcome, result, size, sha, has_result, exit_status)        \
	"state = 'succeeded', finished_at = " now ", updated_at = " now ", outcome = "      \
	outcome ", result = " result ", result_size = " size ", result_sha256 = " sha          \
	", has_result = " has_result ", last_exit_status = " exit_status                    \
	", reason = '', reason_detail = ''"

/* The fencing condition of a delivery attempt. */
#define WQ__DLV_OWNED " WHERE id = $1 AND state = 'sending' AND attempts = $2 AND instance = $3"

/* The columns of a wq_schedule, in the order of op_schedule.c's sched_cols (issue 12). */
#define WQ__SCHED_COLUMNS                                                                  \
	"id, name, cron, every_us, tz, kind, tenant, scope, overlap, catch_up, paused, "      \
	"next_slot, last_slot, last_task, owner, lease_until, created_at, payload_size, "     \
	"payload_sha256"

/* The columns of a wq_intake, in the order of op_intake.c's intake_cols (issue 13); the
 * handouts are the attempts its task has been given (claims), once it has a task. */
#define WQ__INTAKE_COLUMNS                                                                 \
	"i.id, i.source, i.key, i.uidvalidity, i.uid, i.state, i.outcome, i.task_id, "        \
	"coalesce((SELECT t.attempt FROM tasks t WHERE t.id = i.task_id), i.handouts), "      \
	"i.max_handouts, i.size, i.ack_attempts, i.ack_next_at, i.ack_error, i.created_at, "  \
	"i.updated_at, i.handled_at, i.acked_at"

#define WQ__TERMINAL "(state = 'succeeded' OR state = 'failed' OR state = 'cancelled')"

/* A finished task prune may delete: terminal, finished before $1, and none of its
 * deliveries still owed (pending or sending): deleting the task would take the
 * notification with it (deliveries go with their task). */
#define WQ__PRUNABLE                                                                       \
	WQ__TERMINAL " AND finished_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d "    \
		     "WHERE d.task_id = tasks.id AND d.state IN ('pending', 'sending'))"
/* Turn locks (issue 10): a pending task p (due, of a kind the worker runs) is claimable
 * only when, with a lock key, the key is free (no row, or an external lease that expired
 * on the store's clock: a lease's expiry is written on that clock, op_lock.c) and p is
 * the oldest due pending task of its key, whatever its kind (FIFO within a key: one per
 * key in any batch). "o.lock_key <> ''" (implied) lets the partial index tasks_lock serve
 * it (wave 5), and "(order_at, id) before p's" is written as a range on order_at and a
 * filter, not an OR of two ranges (which SQLite planned on tasks_claim: every pending
 * task before p). wave6 claimk: the rule is a filter inside each kind's own LIMIT
 * (D_PER_KIND), as it was inside the one LIMIT before: a kind whose oldest tasks are
 * all blocked still yields its later claimable ones. */
#define WQ__KEY_FREE(now)                                                                  \
	" AND (p.lock_key = '' OR (NOT "                                                   \
	"EXISTS (SELECT 1 FROM locks l WHERE l.key = p.lock_key AND (l.expires_at = 0 OR "  \
	"l.expires_at > " D_NOW_US ")) AND NOT EXISTS (SELECT 1 FROM tasks o WHERE "       \
	"o.lock_key = "                                                                    \
	"p.lock_key AND o.lock_key <> '' AND o.state = 'pending' AND o.due_at <= " now     \
	" AND o.order_at <= p.order_at AND (o.order_at < p.order_at OR o.id < p.id))))"

/* The start of the error SQL_FINISH_SUCCEEDED_MANY fails with when it did not change
 * every row it was given (op_claim.c then records each outcome of the batch alone). */
#define WQ__FIN_MANY_MISMATCH "wakeq: a fenced multi-row finish changed "

/* Held (wave 12): a pending task that waits behind an earlier task of its turn-lock key
 * is marked held = 1 and leaves the claim's range (tasks_claim is keyed (state, kind,
 * held, order_at, id)), so a claim no longer steps through a key's whole queue, once
 * per claim, to find it blocked (100,000 tasks queued on one key made 500 others take
 * 6.9 s instead of 1.4 s: docs/performance.md). held = 0 claims nothing by itself:
 * WQ__KEY_FREE still decides; held = 1 only keeps a task out of the walk, so it must
 * never outlive its reason. The invariant, kept by the three places below and nothing else:
 *
 *   a held task is due and has an earlier (order_at, id) pending task of its key that
 *   was due when it was marked (its evidence), so WQ__KEY_FREE refuses it.
 *
 * - marking (WQ__HELD, only when its key is set at the enqueue, SQL_TASK_SET_LOCK):
 *   held when the task is due and an evidence exists; on PostgreSQL the evidence row is
 *   locked FOR SHARE until the enqueue commits, so it cannot leave pending unseen by
 *   the unholding below (a claim skips it, a cancel waits for it);
 * - unholding (SQL_KEY_UNHOLD, op_lock.c wq__key_unhold): whenever a keyed task leaves
 *   pending (its claim, a cancel), the first held task of its key in (order_at, id)
 *   order is held no longer. Every other held task of the key then has that one (due,
 *   pending, earlier) as its evidence;
 * - held is 1 only on a pending task: a claim takes only held = 0 tasks and a cancel
 *   writes held = 0, so every other way into pending (a retry, a deferral, an unclaim,
 *   an operator's retry or resolve) starts from 0 without writing it.
 * Time only makes more tasks due, and no statement moves a pending task's due_at or
 * order_at, so neither breaks the invariant. */
#define WQ__HELD(key, now)                                                                 \
	"CASE WHEN tasks.due_at <= " now " THEN (SELECT count(*) FROM (SELECT 1 FROM tasks " \
	"o WHERE o.lock_key = " key " AND o.lock_key <> '' AND o.state = 'pending' AND "    \
	"o.due_at <= " now " AND o.order_at <= tasks.order_at AND (o.order_at < "            \
	"tasks.order_at OR o.id < tasks.id) LIMIT 1" D_FOR_SHARE ") AS e) ELSE 0 END"

/* The most a task's order_at lies after its due_at, in microseconds: the head start of
 * the lowest priority (task.c: order_at = due_at - priority x WQ__PRIORITY_STEP_US;
 * op_claim.c checks the figure against those constants at compile time). A retry or a
 * deferral moves both by the same amount. */
#define WQ__ORDER_AFTER_DUE_MAX "60000000000"

/* A pending task p is claimable at `now`: not held, due, and its turn-lock key free
 * (WQ__KEY_FREE). The one rule of the claim, its one-kind form and the probe (wave 6:
 * each reads it within one kind's range). Wave 12: "order_at <= now + the most order_at
 * lies after due_at" follows from "due_at <= now" and bounds the walk of the range:
 * tasks due more than 16.7 hours from now (tomorrow's schedule) are never stepped over
 * (100,000 of them made 500 others take 4.3 s instead of 1.3 s). */
#define WQ__CLAIMABLE(now)                                                                 \
	"p.state = 'pending' AND p.held = 0 AND p.order_at <= " now " + "                    \
	WQ__ORDER_AFTER_DUE_MAX " AND " D_UNINDEXED_NUM("p.due_at") " <= " now               \
	WQ__KEY_FREE(now)

/* The least of `expr` over the served kinds of JSON text `kinds`, `expr` read from each
 * kind's own pending tasks p that match `cond` ("" for none; it may end in a LIMIT),
 * never another kind's (WQ__SERVED); NULL when none. */
#define WQ__SERVED_LEAST(kinds, expr, cond)                                                \
	"(SELECT min(d.m) FROM (SELECT (SELECT " expr " FROM tasks p WHERE p.state = "       \
	"'pending' AND p.kind = k.value" cond ") AS m FROM " WQ__SERVED(kinds) " AS k) AS d)"

/* tasks_due's predicate beyond state (schema_*.c, step 4): a task not due at its
 * enqueue. A statement repeats it to let the planner use the index. */
#define WQ__DUE_LATER "p.due_at > p.created_at"

/* The earliest due_at of the served kinds' pending tasks in tasks_due that also match
 * `cond` ("" or " AND ..."). A task due at its enqueue (not in tasks_due) is never due
 * after its enqueue, so a search for times past now misses none. */
#define WQ__SERVED_MIN_DUE_LATER(kinds, cond)                                              \
	WQ__SERVED_LEAST(kinds, "min(p.due_at)", " AND " WQ__DUE_LATER cond)

/* The next due time of the served kinds' pending tasks for an idle check: the due time
 * of one that was due at its enqueue (past: due now; the first of tasks_claim's range
 * that is, not necessarily the earliest), else the earliest of tasks_due's. */
#define WQ__SERVED_NEXT_DUE(kinds)                                                         \
	"coalesce(" WQ__SERVED_LEAST(kinds, "p.due_at",                                    \
				     " AND NOT " WQ__DUE_LATER " LIMIT 1")                   \
	", " WQ__SERVED_MIN_DUE_LATER(kinds, "") ")"

/* wave6 claimk: kind k (an expression) is not paused (issue 10: a paused kind's tasks
 * are not due for anyone). Tested once per kind, never per task: a paused kind's
 * backlog is not walked. */
#define WQ__UNPAUSED(k) " NOT EXISTS (SELECT 1 FROM paused_kinds pk WHERE pk.kind = " k ")"

/* wave6 claimk: the kinds a claim (or an idle worker's next-due read) serves, from the
 * JSON array text p: each once, not paused. A FROM item with column value. */
#define WQ__SERVED(p)                                                                      \
	"(SELECT DISTINCT value FROM " D_TEXT_ROWS(p) " WHERE" WQ__UNPAUSED("value") ")"

/* wave6 claimk: the SET of a claim's UPDATE, its outer re-check after the pick, and what
 * it hands out ($1 instance, $2 now, $5 {"kind": limit}). */
#define WQ__CLAIM_SET                                                                      \
	"UPDATE tasks SET state = 'running', attempt = attempt + 1, instance = $1, "        \
	"started_at = $2, updated_at = $2, cancel_requested = 0, reason = '', "             \
	"reason_detail = '', uncertain_effect = '', max_attempts = coalesce(retry_base + "  \
	D_MEMBER_INT("$5", "tasks.kind") ", max_attempts) WHERE "
#define WQ__CLAIM_CHECK                                                                    \
	" AND " D_UNINDEXED("state") " = 'pending' AND due_at <= $2 AND EXISTS (SELECT 1 "  \
	"FROM instances WHERE id = $1) RETURNING " WQ__CLAIM_COLUMNS

#define WQ__LOCK_COLUMNS "key, holder, task_id, attempt, acquired_at, expires_at"

#define WQ__SQL_STATEMENTS(X)                                                               \
	/* ---- schema (op_schema.c) ---- */                                                \
	/* has schema_version (0/1), and how many other tables there are */                 \
	X(SQL_HAS_SCHEMA, NULL)                                                             \
	X(SQL_SCHEMA_VERSION, "SELECT coalesce(max(version), 0) FROM schema_version")       \
	X(SQL_SET_VERSION, "INSERT INTO schema_version (version) VALUES ($1)")              \
	/* script text run before each migration step, in its transaction */                \
	X(SQL_MIGRATE_LOCK, NULL)                                                           \
	X(SQL_NOTIFY, NULL)                                                                 \
	/* the id of the row an insert without D_RETURNING_ID made */                       \
	X(SQL_LAST_ID, NULL)                                                                \
	/* ---- tasks (op_task.c) ---- */                                                   \
	X(SQL_EVENT_INSERT, "INSERT INTO events (" D_ID_COL "task_id, at, attempt, type, "  \
	  "instance, detail) VALUES (" D_NEXT_ID("events") "$1, $2, $3, $4, $5, $6)")       \
	X(SQL_TASK_INSERT, "INSERT INTO tasks (" D_ID_COL "kind, tenant, scope, "           \
	  "operation, payload, payload_size, payload_sha256, payload_version, priority, "   \
	  "state, due_at, order_at, created_at, updated_at, max_attempts, keyed, "          \
	  "fingerprint, notify) VALUES (" D_NEXT_ID("tasks") "$1, $2, $3, $4, $5, $6, "     \
	  "$7, $8, $9, 'pending', $10, $11, $12, $12, $13, $14, $15, $16)" D_RETURNING_ID)  \
	X(SQL_TASK_GET, "SELECT " WQ__TASK_COLUMNS " FROM tasks WHERE id = $1")             \
	X(SQL_TASK_STATE, "SELECT state, attempt, instance, cancel_requested, "             \
	  "uncertain_effect FROM tasks WHERE id = $1" D_FOR_UPDATE)                         \
	X(SQL_TASK_EXISTS, "SELECT 1 FROM tasks WHERE id = $1")                             \
	/* $1 state or '', $2 kind or '', $3 limit */                                       \
	X(SQL_TASK_LIST, "SELECT " WQ__TASK_COLUMNS " FROM tasks WHERE ($1 = '' OR state "  \
	  "= $1) AND ($2 = '' OR kind = $2) ORDER BY id LIMIT $3")                          \
	X(SQL_RESULT, "SELECT has_result, result FROM tasks WHERE id = $1")                 \
	X(SQL_EVENTS, "SELECT id, task_id, at, attempt, type, instance, detail FROM "       \
	  "events WHERE task_id = $1 ORDER BY id")                                          \
	/* held = 0: held is only ever 1 on a pending task (WQ__HELD) */                    \
	X(SQL_CANCEL_PENDING, "UPDATE tasks SET state = 'cancelled', held = 0, finished_at " \
	  "= $2, updated_at = $2 WHERE id = $1 AND state = 'pending'")                      \
	X(SQL_CANCEL_REQUEST, "UPDATE tasks SET cancel_requested = 1, updated_at = $2 "     \
	  "WHERE id = $1 AND state = 'running' AND attempt = $3 AND cancel_requested = 0")  \
	X(SQL_RESOLVE_RETRY, "UPDATE tasks SET state = 'pending', due_at = $2, " \
	  "order_at = $2 - (due_at - order_at), updated_at = $2, reason = '', "            \
	  "reason_detail = '' "                                                            \
	  "WHERE id = $1 AND state = 'interrupted'")                                        \
	X(SQL_RESOLVE_END, "UPDATE tasks SET state = $3, finished_at = $2, updated_at = "   \
	  "$2 WHERE id = $1 AND state = 'interrupted'")                                     \
	X(SQL_CANCEL_REQUESTS, "SELECT id FROM tasks WHERE state = 'running' AND "          \
	  "instance = $1 AND cancel_requested = 1 ORDER BY id")                             \
	/* An uncertain effect is never decided by the on_interrupt=retry policy. */        \
	X(SQL_INTERRUPTED_OF_KIND, "SELECT id FROM tasks WHERE state = 'interrupted' AND "  \
	  "kind = $1 AND reason <> 'uncertain-effect' ORDER BY id LIMIT $2")                \
	/* a paused kind's tasks are not due for anyone (issue 10); wave6 claimk: each     \
	 * served kind's own pending range, never other kinds' (WQ__SERVED) */              \
	X(SQL_NEXT_DUE, "SELECT " WQ__SERVED_NEXT_DUE("$1") ", CASE WHEN EXISTS (SELECT "    \
	  "1 FROM tasks WHERE "                                                             \
	  "state = 'running') THEN 1 ELSE 0 END")                                           \
	/* The operation identity is claimed by the unique index, never by a read first. */ \
	X(SQL_OP_INSERT, "INSERT INTO operations (tenant, scope, kind, key, fingerprint, "  \
	  "payload_version, task_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7) "   \
	  "ON CONFLICT (tenant, scope, kind, key) DO NOTHING" D_RETURNING_ID)               \
	X(SQL_OP_SET_TASK, "UPDATE operations SET task_id = $2 WHERE id = $1 AND task_id "  \
	  "= 0")                                                                            \
	X(SQL_OP_GET, "SELECT o.fingerprint, o.task_id, t.state FROM operations o LEFT "    \
	  "JOIN tasks t ON t.id = o.task_id AND t.keyed = 1 AND t.operation = o.key "       \
	  "WHERE o.tenant = $1 AND o.scope = $2 AND o.kind = $3 AND o.key = $4")            \
	X(SQL_OP_FIND, "SELECT o.kind, o.task_id, CASE WHEN t.id IS NULL THEN 0 ELSE 1 "    \
	  "END FROM operations o LEFT JOIN tasks t ON t.id = o.task_id AND t.keyed = 1 "    \
	  "AND t.operation = o.key WHERE o.tenant = $1 AND o.scope = $2 AND o.key = $3 "    \
	  "AND (CAST($4 AS text) IS NULL OR o.kind = $4) ORDER BY o.kind LIMIT 9")          \
	/* ---- claim, finish (op_claim.c) ---- */                                          \
	/* wave6 claimk: the probe and the pick read each served kind's own range of      \
	 * tasks_claim (state, kind, order_at, id), never other kinds' backlog */          \
	X(SQL_CLAIM_PROBE, "SELECT 1 FROM " WQ__SERVED("$2") " AS k WHERE EXISTS (SELECT 1 " \
	  "FROM tasks p WHERE p.kind = k.value AND " WQ__CLAIMABLE("$1") ") LIMIT 1")       \
	/* an instance declared lost (its row deleted) can no longer claim */               \
	/* $5: {"kind": limit} of the kinds whose max_attempts overrides the task's */      \
	X(SQL_CLAIM, WQ__CLAIM_SET D_PICK(D_PER_KIND(WQ__SERVED("$3"), WQ__CLAIMABLE("$2"),  \
	  "$4")) WQ__CLAIM_CHECK)                                                           \
	/* the tasks that claims with a lost COMMIT answer took ($2: their times) */        \
	X(SQL_RECLAIM, "SELECT " WQ__CLAIM_COLUMNS " FROM tasks WHERE state = 'running' "   \
	  "AND instance = $1 AND started_at IN " D_IDS("$2") D_FOR_UPDATE)                  \
	X(SQL_ATTEMPT_INSERT, "INSERT INTO attempts (task_id, attempt, instance, "          \
	  "started_at) VALUES ($1, $2, $3, $4)")                                            \
	X(SQL_ATTEMPT_FINISH, "UPDATE attempts SET finished_at = $3, outcome = $4, "        \
	  "reason = $5, exit_status = $6 WHERE task_id = $1 AND attempt = $2")              \
	/* whether this very outcome was recorded already (a finish retried) */             \
	X(SQL_ATTEMPT_RECORDED, "SELECT 1 FROM attempts WHERE task_id = $1 AND attempt = "  \
	  "$2 AND instance = $3 AND finished_at = $4 AND ((outcome = $5 AND reason = $6) "  \
	  "OR (outcome = 'interrupted' AND reason = 'uncertain-effect'))")                  \
	X(SQL_FINISH_SUCCEEDED, "UPDATE tasks SET " WQ__SUCCEEDED_SET("$4", "$5", "$6",     \
	  "$7", "$8", "$9", "$10") WQ__OWNED)                                               \
	/* The priority head start (due_at - order_at) carries over to the new due time. */ \
	X(SQL_FINISH_RETRY, "UPDATE tasks SET state = 'pending', updated_at = "  \
	  "$4, due_at = $5, order_at = $5 - (due_at - order_at), reason = $6, "            \
	  "reason_detail = $7, "                                                           \
	  "last_exit_status = $8" WQ__OWNED)                                                \
	/* failed, interrupted, cancelled: $5 state, $6 reason, $7 detail, $8 exit status */ \
	X(SQL_FINISH_END, "UPDATE tasks SET state = $5, updated_at = $4, finished_at = "    \
	  "CASE WHEN $5 = 'interrupted' THEN finished_at ELSE $4 END, reason = $6, "        \
	  "reason_detail = $7, last_exit_status = $8" WQ__OWNED)                            \
	/* ---- instances, recovery (op_instance.c) ---- */                                 \
	X(SQL_INSTANCE_INSERT, "INSERT INTO instances (id, host, host_id, pid, "            \
	  "proc_start, started_at, heartbeat_at, seen_at) VALUES ($1, $2, $3, $4, $5, $6, " \
	  "$7, " D_NOW_US ")")                                                              \
	/* seen_at: the heartbeat on the store's clock, so that a lease's age is never a   \
	 * difference of two hosts' clocks (issue 15) */                                    \
	X(SQL_INSTANCE_HEARTBEAT, "UPDATE instances SET heartbeat_at = $2, seen_at = "      \
	  D_NOW_US " WHERE id = $1")                                                        \
	X(SQL_INSTANCE_DELETE, "DELETE FROM instances WHERE id = $1")                       \
	X(SQL_INSTANCE_LIST, "SELECT " WQ__INSTANCE_COLUMNS ", " D_NOW_US " - seen_at "     \
	  "FROM instances "                                                                 \
	  "ORDER BY "                                                                       \
	  "started_at, id")                                                                 \
	X(SQL_INSTANCE_GET, "SELECT " WQ__INSTANCE_COLUMNS " FROM instances WHERE id = $1") \
	X(SQL_INSTANCE_REAP, "DELETE FROM instances WHERE id = $1 AND heartbeat_at = $2")   \
	X(SQL_INTERRUPT_INSTANCE, "UPDATE tasks SET state = 'interrupted', reason = $2, "   \
	  "reason_detail = '', updated_at = $3 WHERE state = 'running' AND instance = $1 "  \
	  "RETURNING id, attempt, instance")                                                \
	X(SQL_INTERRUPT_ORPHANS, "UPDATE tasks SET state = 'interrupted', reason = $1, "    \
	  "reason_detail = '', updated_at = $2 WHERE state = 'running' AND instance NOT "   \
	  "IN (SELECT id FROM instances) RETURNING id, attempt, instance")                  \
	X(SQL_SET_DETAIL, "UPDATE tasks SET reason_detail = $3 WHERE id = $1 AND attempt "  \
	  "= $2 AND state = 'interrupted'")                                                 \
	/* ---- effects (op_effect.c) ---- */                                               \
	X(SQL_ATTEMPTS, "SELECT attempt, instance, started_at, finished_at, outcome, "      \
	  "reason, exit_status FROM attempts WHERE task_id = $1 ORDER BY attempt")          \
	/* the first uncertain effect of an attempt is the one its outcome names */         \
	X(SQL_SET_UNCERTAIN, "UPDATE tasks SET uncertain_effect = $3 WHERE id = $1 AND "    \
	  "state = 'running' AND attempt = $2 AND uncertain_effect = ''")                   \
	X(SQL_EFFECT_GET, "SELECT state, attempt, last_attempt, result FROM effects "       \
	  "WHERE task_id = $1 AND name = $2")                                               \
	X(SQL_EFFECT_INSERT, "INSERT INTO effects (task_id, name, state, attempt, "         \
	  "last_attempt, begun_attempts, begun_at) VALUES ($1, $2, 'begun', $3, $3, 1, "    \
	  "$4)")                                                                            \
	/* an attempt that found it uncertain: noted, not counted as beginning it (only  \
	 * `new` answers count in begun_attempts); a new finding after any resolution */    \
	X(SQL_EFFECT_AGAIN, "UPDATE effects SET last_attempt = $3, resolved_at = 0 WHERE "  \
	  "task_id = $1 AND name = $2 AND state = 'begun' AND last_attempt < $3")           \
	/* a resolution answers the task's effect findings so far (doctor) */               \
	X(SQL_EFFECT_RESOLVE, "UPDATE effects SET resolved_at = $2 WHERE task_id = $1 AND " \
	  "resolved_at = 0")                                                                \
	X(SQL_EFFECT_DONE, "UPDATE effects SET state = 'done', result = $4, done_at = $5 "  \
	  "WHERE task_id = $1 AND name = $2 AND state = 'begun' AND attempt = $3")          \
	/* an effect this attempt began (first), or found uncertain, never confirmed */     \
	X(SQL_EFFECT_OPEN, "SELECT name, attempt FROM effects WHERE task_id = $1 AND "      \
	  "state = 'begun' AND (attempt = $2 OR last_attempt = $2) ORDER BY (attempt = "    \
	  "$2) DESC, begun_at, name LIMIT 1")                                               \
	/* ---- retention, doctor (op_upkeep.c) ---- */                                     \
	/* "task_id <> 0" (implied) lets the partial index operations_task serve it */     \
	X(SQL_PRUNE_MARK, "UPDATE operations SET finished_at = (SELECT t.finished_at "      \
	  "FROM tasks t WHERE t.id = operations.task_id) WHERE task_id <> 0 AND task_id "   \
	  "IN (SELECT id FROM tasks WHERE " WQ__PRUNABLE ")")                               \
	/* the highest ids so far stay taken (SQLite; nothing on PostgreSQL) */             \
	X(SQL_PRUNE_FLOOR, NULL)                                                            \
	X(SQL_PRUNE_TASKS, "DELETE FROM tasks WHERE " WQ__PRUNABLE)                         \
	X(SQL_PRUNE_OPERATIONS, "DELETE FROM operations WHERE finished_at IS NOT NULL "     \
	  "AND finished_at < $1 AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = "        \
	  "operations.task_id)")                                                            \
	/* rows by kind (1-4: enum wq__doctor_kind), task id and effect name; 4: tasks    \
	 * running since before $1 (0: none) */                                           \
	/* effect rows an operator's resolution answered (resolved_at) are left out */     \
	X(SQL_DOCTOR, "SELECT 1, e.task_id, t.operation, e.name, e.state, e.attempt, "      \
	  "e.begun_attempts, '', '', '', 0 FROM effects e JOIN tasks t ON t.id = "          \
	  "e.task_id WHERE e.begun_attempts >= 2 AND e.resolved_at = 0 UNION ALL SELECT "   \
	  "2, e.task_id, t.operation, e.name, e.state, e.attempt, e.begun_attempts, '', "   \
	  "'', '', 0 FROM effects e JOIN tasks t ON t.id = e.task_id WHERE e.state = "      \
	  "'begun' AND e.resolved_at = 0 AND NOT (t.state = 'running' AND t.attempt = "     \
	  "e.attempt) UNION ALL SELECT 3, id, operation, '', '', 0, 0, reason, "            \
	  "reason_detail, '', 0 FROM tasks WHERE state = 'interrupted' UNION ALL SELECT "   \
	  "4, id, operation, '', '', attempt, 0, '', '', instance, started_at FROM tasks "  \
	  "WHERE state = 'running' AND started_at < $1 ORDER BY 1, 2, 4")                   \
	/* ---- outbox (op_outbox.c) ---- */                                                \
	X(SQL_DLV_QUEUE, NULL)                                                              \
	X(SQL_DLV_CLAIM, "UPDATE deliveries SET state = 'sending', attempts = attempts + "  \
	  "1, instance = $1, updated_at = $2 WHERE "                                        \
	  D_PICK("SELECT id FROM deliveries WHERE state = 'pending' AND next_at <= $2 "     \
		 "ORDER BY next_at, id LIMIT $3" D_SKIP_LOCKED)                             \
	  " AND state = 'pending' AND next_at <= $2 AND EXISTS (SELECT 1 FROM instances "   \
	  "WHERE id = $1) RETURNING id, task_id, channel, attempts, retry_base")            \
	X(SQL_DLV_TASK, "SELECT kind, operation, state, outcome, has_result, "              \
	  "result_size, result_sha256 FROM tasks WHERE id = $1")                            \
	X(SQL_DLV_STATE, "SELECT task_id, channel, state, attempts, instance FROM "         \
	  "deliveries WHERE id = $1" D_FOR_UPDATE)                                          \
	X(SQL_DLV_DELIVERED, "UPDATE deliveries SET state = 'delivered', delivered_at = "   \
	  "$4, updated_at = $4, last_error = ''" WQ__DLV_OWNED " RETURNING task_id, "       \
	  "channel")                                                                        \
	X(SQL_DLV_RETRY, "UPDATE deliveries SET state = 'pending', updated_at = $4, "       \
	  "last_error = $5, max_attempts = $6, next_at = $7" WQ__DLV_OWNED " RETURNING "    \
	  "task_id, channel")                                                               \
	X(SQL_DLV_DEAD, "UPDATE deliveries SET state = 'dead', updated_at = $4, "           \
	  "last_error = $5, max_attempts = $6" WQ__DLV_OWNED " RETURNING task_id, channel") \
	X(SQL_DLV_RECOVER, "UPDATE deliveries SET state = 'pending', next_at = $3, "        \
	  "updated_at = $3, last_error = 'outcome unknown: the sending worker stopped' "    \
	  "WHERE state = 'sending' AND (instance NOT IN (SELECT id FROM instances) OR "     \
	  "(instance = $1 AND id NOT IN " D_IDS("$2") ")) RETURNING id, task_id, "          \
	  "channel, attempts, instance")                                                    \
	X(SQL_DLV_NEXT, "SELECT min(next_at) FROM deliveries WHERE state = 'pending'")      \
	/* reads before a write transaction: most polls find nothing to do */               \
	X(SQL_DLV_ANY_DUE, "SELECT CASE WHEN EXISTS (SELECT 1 FROM deliveries WHERE "       \
	  "state = 'pending' AND next_at <= $1) THEN 1 ELSE 0 END")                         \
	X(SQL_DLV_ANY_SENDING, "SELECT CASE WHEN EXISTS (SELECT 1 FROM deliveries WHERE "   \
	  "state = 'sending') THEN 1 ELSE 0 END")                                           \
	X(SQL_DLV_LIST, "SELECT id, task_id, channel, state, attempts, max_attempts, "      \
	  "created_at, updated_at, next_at, delivered_at, last_error FROM deliveries "      \
	  "WHERE $1 = '' OR state = $1 ORDER BY id")                                        \
	/* a new round: the attempt budget counts again from here */                        \
	X(SQL_DLV_RETRY_DEAD, "UPDATE deliveries SET state = 'pending', next_at = $2, "     \
	  "updated_at = $2, retry_base = attempts, max_attempts = attempts + "              \
	  "(max_attempts - retry_base) WHERE id = $1 AND state = 'dead'")                   \
	X(SQL_INBOX_INSERT, "INSERT INTO inbox (" D_ID_COL "recipient, notice_key, "        \
	  "delivery_id, task_id, kind, operation, subject, result_size, result_sha256, "    \
	  "created_at) SELECT " D_NEXT_ID("inbox") "$1, $2, $3, t.id, t.kind, "             \
	  "t.operation, $4, CASE WHEN t.has_result <> 0 THEN t.result_size ELSE -1 END, "   \
	  "CASE WHEN t.has_result <> 0 THEN t.result_sha256 ELSE '' END, $5 FROM tasks t "  \
	  "WHERE t.id = $6 ON CONFLICT (notice_key) DO NOTHING")                            \
	X(SQL_INBOX_LIST, "SELECT id, recipient, delivery_id, task_id, kind, operation, "   \
	  "subject, result_size, result_sha256, created_at, read_at FROM inbox WHERE "      \
	  "recipient = $1 AND ($2 = 0 OR read_at = 0) ORDER BY id")                         \
	X(SQL_INBOX_READ, "UPDATE inbox SET read_at = $2 WHERE id = $1 AND read_at = 0")    \
	X(SQL_INBOX_EXISTS, "SELECT 1 FROM inbox WHERE id = $1")                            \
	/* ---- operator retry (issue 14, op_retry.c) ---- */                               \
	/* failed|cancelled -> pending, due now ($2), fenced by the attempt read ($3): a    \
	 * new round whose budget (max_attempts - retry_base) counts from the attempts    \
	 * used. SET reads the old row, so max_attempts uses the old retry_base. */       \
	X(SQL_RETRY, "UPDATE tasks SET state = 'pending', due_at = $2, "         \
	  "order_at = $2 - (due_at - order_at), updated_at = $2, finished_at = 0, "        \
	  "reason = '', "                                                                  \
	  "reason_detail = '', outcome = '', cancel_requested = 0, uncertain_effect = '', " \
	  "max_attempts = attempt + (max_attempts - retry_base), retry_base = attempt "     \
	  "WHERE id = $1 AND state IN ('failed', 'cancelled') AND attempt = $3")            \
	/* stats, workers (op_stats.c); $1: now */                                         \
	X(SQL_STATS_TASKS, "SELECT state, kind, count(*), coalesce(min(CASE WHEN state = "  \
	  "'pending' AND due_at <= $1 THEN due_at END), 0) FROM tasks GROUP BY state, "     \
	  "kind ORDER BY state, kind")                                                      \
	X(SQL_STATS_RUNNING, "SELECT instance, count(*) FROM tasks WHERE state = "         \
	  "'running' GROUP BY instance ORDER BY instance")                                  \
	X(SQL_STATS_DELIVERIES, "SELECT state, count(*) FROM deliveries GROUP BY state "    \
	  "ORDER BY state")                                                                 \
	X(SQL_STATS_INSTANCES, "SELECT i.id, i.host, i.pid, i.started_at, "                \
	  "i.heartbeat_at, (SELECT count(*) FROM tasks t WHERE t.state = 'running' AND "    \
	  "t.instance = i.id) FROM instances i ORDER BY i.id")                              \
	/* list with a query: $1 states, $2 kinds (JSON arrays, '[]': any), $3 tenant,   \
	 * $4 scope (NULL: any), created_at in [$5, $6) ($6 = 0: no bound), $7 limit */   \
	X(SQL_TASK_QUERY, "SELECT " WQ__TASK_COLUMNS " FROM tasks WHERE ($1 = '[]' OR "     \
	  "state IN " D_TEXTS("$1") ") AND ($2 = '[]' OR kind IN " D_TEXTS("$2") ") AND "   \
	  "(CAST($3 AS text) IS NULL OR tenant = $3) AND (CAST($4 AS text) IS NULL OR "     \
	  "scope = $4) AND created_at >= $5 AND (created_at < $6 OR $6 = 0) ORDER BY id "   \
	  "LIMIT $7")                                                                     \
	/* ---- schedules (issue 12; op_schedule.c) ---- */                                 \
	X(SQL_SCHED_INSERT, "INSERT INTO schedules (name, cron, every_us, tz, kind, tenant, " \
	  "scope, payload, payload_version, payload_size, payload_sha256, fingerprint, "     \
	  "notify, max_attempts, overlap, catch_up, next_slot, created_at) VALUES ($1, $2, " \
	  "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "       \
	  "ON CONFLICT (name) DO NOTHING")                                                   \
	X(SQL_SCHED_LIST, "SELECT " WQ__SCHED_COLUMNS " FROM schedules ORDER BY name")      \
	X(SQL_SCHED_GET, "SELECT " WQ__SCHED_COLUMNS " FROM schedules WHERE name = $1")     \
	X(SQL_SCHED_EVENTS, "SELECT e.at, e.slot, e.type, e.task_id, e.count, e.instance "  \
	  "FROM schedule_events e JOIN schedules s ON s.id = e.schedule_id WHERE "          \
	  "s.name = $1 ORDER BY e.id DESC LIMIT 50")                                         \
	X(SQL_SCHED_PAUSE, "UPDATE schedules SET paused = 1, owner = '', lease_until = 0 "   \
	  "WHERE name = $1")                                                                 \
	X(SQL_SCHED_RESUME, "UPDATE schedules SET paused = 0, next_slot = $2 WHERE name = $1") \
	X(SQL_SCHED_RM_EVENTS, "DELETE FROM schedule_events WHERE schedule_id IN "           \
	  "(SELECT id FROM schedules WHERE name = $1)")                                      \
	X(SQL_SCHED_RM, "DELETE FROM schedules WHERE name = $1")                             \
	/* the owner lease: mine, nobody's, or expired (lease times: the store's clock) */  \
	X(SQL_SCHED_LEASE, "UPDATE schedules SET owner = $1, lease_until = $2 WHERE "        \
	  "paused = 0 AND (owner = $1 OR owner = '' OR lease_until < $3)")                   \
	/* the same rows, counted first (a read): no write lock when there is nothing */    \
	X(SQL_SCHED_LEASABLE, "SELECT count(*) FROM schedules WHERE paused = 0 AND "         \
	  "(owner = $1 OR owner = '' OR lease_until < $2)")                                  \
	X(SQL_SCHED_OWNED, "SELECT count(*), coalesce(min(next_slot), 0) FROM schedules "   \
	  "WHERE owner = $1 AND paused = 0 AND lease_until >= $2")                           \
	X(SQL_SCHED_RELEASE, "UPDATE schedules SET owner = '', lease_until = 0 WHERE "       \
	  "owner = $1")                                                                      \
	/* slots due by $2 (the owner's clock), the lease live at $3 (the store's) */       \
	X(SQL_SCHED_DUE, "SELECT name FROM schedules WHERE owner = $1 AND paused = 0 AND "  \
	  "lease_until >= $3 AND next_slot <= $2 ORDER BY name")                             \
	/* the schedule to fire, still mine (row-locked where the dialect locks rows) */    \
	X(SQL_SCHED_LOCK, "SELECT id, name, cron, every_us, tz, kind, tenant, scope, "      \
	  "payload, payload_version, payload_sha256, fingerprint, notify, max_attempts, "   \
	  "overlap, catch_up, next_slot, last_slot, last_task, created_at FROM schedules "       \
	  "WHERE name = $1 AND owner = $2 AND paused = 0 AND lease_until >= $3" D_FOR_UPDATE)      \
	X(SQL_SCHED_TASK_STATE, "SELECT state FROM tasks WHERE id = $1")                     \
	X(SQL_SCHED_ADVANCE, "UPDATE schedules SET next_slot = $2, last_slot = $3, "        \
	  "last_task = $4 WHERE id = $1")                                                    \
	X(SQL_SCHED_EVENT, "INSERT INTO schedule_events (schedule_id, at, slot, type, "     \
	  "task_id, count, instance) VALUES ($1, $2, $3, $4, $5, $6, $7)")                  \
	/* ---- turn locks, paused kinds (issue 10; op_lock.c) ---- */                      \
	/* $3: the enqueue's now; held: WQ__HELD */                                         \
	X(SQL_TASK_SET_LOCK, "UPDATE tasks SET lock_key = $2, held = " WQ__HELD("$2", "$3") \
	  " WHERE id = $1")                                                                 \
	/* wave 12: task $1 left pending; the first held task of its key is held no longer  \
	 * (WQ__HELD says why) */                                                          \
	X(SQL_KEY_UNHOLD, "UPDATE tasks SET held = 0 WHERE id = (SELECT h.id FROM tasks h " \
	  "WHERE h.lock_key = (SELECT c.lock_key FROM tasks c WHERE c.id = $1) AND "        \
	  "h.lock_key <> '' AND h.state = 'pending' AND h.held = 1 ORDER BY h.order_at, "   \
	  "h.id LIMIT 1)")                                                                  \
	/* The primary key is the arbiter: a held key (a task's hold, a live lease) is      \
	 * taken over only once expired; the same external holder renews its own lease.     \
	 * $1 key, $2 holder, $3 task id (0: external), $4 attempt, $5 now, $6 expiry. */    \
	X(SQL_LOCK_TAKE, "INSERT INTO locks (" WQ__LOCK_COLUMNS ") VALUES ($1, $2, $3, "    \
	  "$4, $5, $6) ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, task_id = " \
	  "excluded.task_id, attempt = excluded.attempt, acquired_at = excluded."           \
	  "acquired_at, expires_at = excluded.expires_at WHERE (locks.expires_at <> 0 AND "  \
	  "locks.expires_at <= excluded.acquired_at) OR (locks.task_id = 0 AND "            \
	  "excluded.task_id = 0 AND locks.holder = excluded.holder)")                       \
	X(SQL_LOCK_DROP_TASK, "DELETE FROM locks WHERE task_id = $1 AND attempt = $2 "      \
	  "RETURNING key")                                                                  \
	X(SQL_LOCK_RELEASE, "DELETE FROM locks WHERE key = $1 AND holder = $2 AND "         \
	  "task_id = 0")                                                                    \
	X(SQL_LOCK_RENEW, "UPDATE locks SET expires_at = $4 WHERE key = $1 AND holder = "   \
	  "$2 AND task_id = 0 AND expires_at > $3")                                         \
	X(SQL_LOCK_GET, "SELECT " WQ__LOCK_COLUMNS " FROM locks WHERE key = $1 AND "        \
	  "(expires_at = 0 OR expires_at > $2)")                                            \
	X(SQL_LOCK_LIST, "SELECT " WQ__LOCK_COLUMNS " FROM locks WHERE expires_at = 0 OR "  \
	  "expires_at > $1 ORDER BY key")                                                   \
	X(SQL_KIND_PAUSE, "INSERT INTO paused_kinds (kind, paused_at) VALUES ($1, $2) ON "  \
	  "CONFLICT (kind) DO NOTHING")                                                     \
	X(SQL_KIND_RESUME, "DELETE FROM paused_kinds WHERE kind = $1")                      \
	X(SQL_KINDS_PAUSED, "SELECT kind, paused_at FROM paused_kinds ORDER BY kind")      \
	/* ---- limits (issue 10; op_limit.c) ---- */                                       \
	/* serialises enqueues of one (tenant, scope) ($1) until the transaction ends */    \
	X(SQL_LIMIT_LOCK, NULL)                                                             \
	/* wave7 drain: the states as the first two ORs of tasks_claim's WHERE on SQLite   \
	 * (schema_sqlite.c), so that the partial index may serve it */                   \
	X(SQL_ACTIVE_COUNT, "SELECT count(*) FROM tasks WHERE tenant = $1 AND scope = $2 "  \
	  "AND (state = 'pending' OR state = 'running')")                                   \
	/* per-kind concurrency: serialises claims of one kind ($1) until the transaction \
	 * ends (PostgreSQL; SQLite's write lock already does), then counts its running */ \
	X(SQL_KIND_LOCK, NULL)                                                              \
	X(SQL_KIND_RUNNING, "SELECT count(*) FROM tasks WHERE state = 'running' AND kind "  \
	  "= $1")                                                                           \
	/* one start of (tenant $1, scope $2) on UTC day $3 while fewer than $4: a row   \
	 * comes back only when the start was counted */                                  \
	X(SQL_STARTS_TAKE, "INSERT INTO start_counts (tenant, scope, day, starts) VALUES "  \
	  "($1, $2, $3, 1) ON CONFLICT (tenant, scope, day) DO UPDATE SET starts = "        \
	  "start_counts.starts + 1 WHERE start_counts.starts < $4 RETURNING starts")        \
	X(SQL_STARTS_PRUNE, "DELETE FROM start_counts WHERE tenant = $1 AND scope = $2 "    \
	  "AND day < $3")                                                                   \
	/* undoes a claim in its own transaction (nobody saw attempt $2): pending again,   \
	 * due $4, the previous attempt's instance and start back from its attempts row */ \
	X(SQL_CLAIM_DEFER, "UPDATE tasks SET state = 'pending', attempt = "      \
	  "attempt - 1, "                                                                  \
	  "due_at = $4, order_at = $4 - (due_at - order_at), updated_at = $5, reason = "    \
	  "'deferred', reason_detail = $6, instance = coalesce((SELECT a.instance FROM "    \
	  "attempts a WHERE a.task_id = tasks.id AND a.attempt = tasks.attempt - 1), ''), " \
	  "started_at = coalesce((SELECT a.started_at FROM attempts a WHERE a.task_id = "   \
	  "tasks.id AND a.attempt = tasks.attempt - 1), 0)" WQ__OWNED)                      \
	/* ---- follow-ups (issue 10; op_followup.c) ---- */                                \
	X(SQL_FOLLOWUP_PARENT, "SELECT tenant, scope, kind, operation, depth FROM "         \
	  "tasks WHERE id = $1")                                                            \
	X(SQL_FOLLOWUP_OP_FP, "SELECT fingerprint FROM operations WHERE tenant = $1 AND "   \
	  "scope = $2 AND kind = $3 AND key = $4")                                          \
	X(SQL_FOLLOWUP_SET_PARENT, "UPDATE tasks SET parent_id = $2, depth = $3 WHERE id "  \
	  "= $1 AND parent_id = 0")                                                         \
	X(SQL_FOLLOWUP_CHILDREN, "SELECT id FROM tasks WHERE parent_id = $1 ORDER BY id")   \
	X(SQL_FOLLOWUP_FAMILY_PARENT, "SELECT parent_id FROM tasks WHERE id = $1")          \
	/* ---- intake (issue 13; op_intake.c) ---- */                                      \
	/* which of the keys $2 (JSON array) source $1 has recorded (any state) */          \
	X(SQL_INTAKE_KNOWN, "SELECT key FROM intake WHERE source = $1 AND key IN "          \
	  D_TEXTS("$2"))                                                                    \
	X(SQL_INTAKE_INSERT, "INSERT INTO intake (source, key, uidvalidity, uid, state, "   \
	  "max_handouts, size, operators, created_at, updated_at) VALUES ($1, $2, $3, $4, " \
	  "'pending', $5, $6, $7, $8, $8) ON CONFLICT (source, key) DO NOTHING"             \
	  D_RETURNING_ID)                                                                   \
	X(SQL_INTAKE_SET_TASK, "UPDATE intake SET task_id = $2 WHERE id = $1")              \
	/* records of another UIDVALIDITY that still wait for something */                  \
	X(SQL_INTAKE_STALE_ANY, "SELECT 1 FROM intake WHERE source = $1 AND uidvalidity "   \
	  "<> $2 AND state IN ('pending', 'handled', 'giving-up') LIMIT 1")                 \
	X(SQL_INTAKE_RETIRE, "UPDATE intake SET state = 'retired', updated_at = $3, "       \
	  "ack_instance = '' WHERE source = $1 AND uidvalidity <> $2 AND state IN "         \
	  "('pending', 'handled', 'giving-up') RETURNING id, task_id, key")                 \
	X(SQL_INTAKE_OF_TASK, "SELECT id, source, key, state FROM intake WHERE task_id = "  \
	  "$1 AND state = 'pending'" D_FOR_UPDATE)                                          \
	/* pending → handled | giving-up ($3), the acknowledgement due now ($5) */           \
	X(SQL_INTAKE_HANDLED, "UPDATE intake SET state = $3, outcome = $4, handouts = $6, " \
	  "handled_at = $5, updated_at = $5, ack_next_at = $5, ack_attempts = 0, "          \
	  "ack_instance = '', ack_error = '' WHERE id = $1 AND task_id = $2 AND state = "   \
	  "'pending'")                                                                      \
	X(SQL_INTAKE_HANDOUTS, "UPDATE intake SET handouts = $2, updated_at = $3 WHERE id " \
	  "= $1 AND state = 'pending'")                                                     \
	/* acknowledgements of source $3 due now ($2): unowned, or their owner's lease or   \
	 * row gone; the lease (ack_until) on the store's clock (ACK_ANY $3, CLAIM $6:     \
	 * issue 15), the due time on the caller's */                                       \
	X(SQL_INTAKE_ACK_ANY, "SELECT 1 FROM intake p WHERE p.source = $1 AND p.state IN "  \
	  "('handled', 'giving-up') AND p.ack_next_at <= $2 AND (p.ack_instance = '' OR "   \
	  "p.ack_until <= $3 OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = "        \
	  "p.ack_instance)) LIMIT 1")                                                       \
	X(SQL_INTAKE_ACK_CLAIM, "UPDATE intake SET ack_attempts = ack_attempts + 1, "       \
	  "ack_instance = $1, ack_until = $4, updated_at = $2 WHERE "                       \
	  D_PICK("SELECT p.id FROM intake p WHERE p.source = $3 AND p.state IN ('handled', " \
		 "'giving-up') AND p.ack_next_at <= $2 AND (p.ack_instance = '' OR "       \
		 "p.ack_until <= $6 OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = " \
		 "p.ack_instance)) ORDER BY p.ack_next_at, p.id LIMIT $5" D_SKIP_LOCKED)   \
	  " AND state IN ('handled', 'giving-up') AND ack_next_at <= $2 AND EXISTS "        \
	  "(SELECT 1 FROM instances WHERE id = $1) RETURNING id, key, uidvalidity, uid, "   \
	  "state, ack_attempts, task_id")                                                   \
	/* the source took the acknowledgement: handled → acknowledged, giving-up →         \
	 * abandoned, fenced by the claim ($2 attempts, $3 instance) */                     \
	X(SQL_INTAKE_ACKED, "UPDATE intake SET state = CASE WHEN state = 'giving-up' THEN " \
	  "'abandoned' ELSE 'acknowledged' END, acked_at = $4, updated_at = $4, "           \
	  "ack_instance = '', ack_error = '' WHERE id = $1 AND ack_attempts = $2 AND "      \
	  "ack_instance = $3 AND state IN ('handled', 'giving-up') RETURNING source, key, " \
	  "state, outcome, task_id, operators, handouts")                                   \
	X(SQL_INTAKE_ACK_RETRY, "UPDATE intake SET ack_next_at = $4, ack_error = $5, "      \
	  "ack_instance = '', updated_at = $6 WHERE id = $1 AND ack_attempts = $2 AND "     \
	  "ack_instance = $3 AND state IN ('handled', 'giving-up') RETURNING source, key, " \
	  "state, outcome, task_id, operators, handouts")                                   \
	X(SQL_INTAKE_ROW, "SELECT source, key, state, outcome, task_id, operators, "        \
	  "handouts, ack_attempts, acked_at FROM intake WHERE id = $1")                     \
	X(SQL_INTAKE_LIST, "SELECT " WQ__INTAKE_COLUMNS " FROM intake i WHERE ($1 = '' OR " \
	  "i.source = $1) AND ($2 = '' OR i.state = $2) AND ($3 = '' OR i.key = $3) ORDER " \
	  "BY i.id")                                                                        \
	/* acknowledgements queued or in flight ($1: a source, '' any) */                   \
	X(SQL_INTAKE_ACKS_WAITING, "SELECT count(*) FROM intake WHERE ($1 = '' OR source "  \
	  "= $1) AND state IN ('handled', 'giving-up')")                                 \
	/* ---- kept stderr (issue 14; op_stderr.c) ---- */                                 \
	X(SQL_ATTEMPT_STDERR_SET, "UPDATE attempts SET stderr_tail = $3 WHERE task_id = $1 " \
	  "AND attempt = $2")                                                               \
	X(SQL_ATTEMPT_STDERR_GET, "SELECT stderr_tail FROM attempts WHERE task_id = $1 AND " \
	  "attempt = $2 AND stderr_tail IS NOT NULL")                                      \
	/* ---- wake-ups (issues 11, 12; op_wake.c) ---- */                                 \
	/* the earliest time after $2 a pending task of the kinds $1 (not paused) or a      \
	 * pending delivery is due: when an idle worker sets its timer */                   \
	/* wave6 claimk: each served kind's own pending range (WQ__SERVED) */              \
	X(SQL_WAKE_NEXT, "SELECT " WQ__SERVED_MIN_DUE_LATER("$1", " AND p.due_at > $2") ", " \
	  "(SELECT min(next_at) FROM deliveries "                                           \
	  "WHERE state = 'pending' AND next_at > $2)")                                     \
	/* wave4 batch: multi-row writes, one statement per kind of row per transaction   \
	 * (op_rows.c). $1 is ONE JSON array of rows, each a JSON array; only the dialect \
	 * text differs. */                                                                \
	/* rows [task_id, at, attempt, type, instance, detail text], ids in array order */ \
	X(SQL_EVENTS_INSERT_MANY, NULL)                                                     \
	/* rows [task_id, attempt]; $2 instance, $3 started_at */                          \
	X(SQL_ATTEMPTS_INSERT_MANY, NULL)                                                   \
	/* rows [task_id, attempt, finished_at, outcome, reason, exit_status] */            \
	X(SQL_ATTEMPTS_FINISH_MANY, NULL)                                                   \
	/* the tasks of the ids $1 (locked where the dialect locks rows, in id order) with \
	 * what their finish may touch besides the task row: notify channels, a turn lock \
	 * row, an intake record */                                                        \
	/* (columns: WQ__TASK_FACTS_COLUMNS; wave8 sqlw2: SQLite reads them in the order of \
	 * the ids given, PostgreSQL in id order, locked) */                              \
	X(SQL_TASK_STATES, NULL)                                                            \
	/* a prefetched task given back unstarted, fenced on its attempt: pending again in \
	 * its place, the attempt not counted against its limit */                        \
	X(SQL_TASK_UNCLAIM, "UPDATE tasks SET state = 'pending', updated_at = "  \
	  "$4, reason "                                                                    \
	  "= 'prefetch-returned', reason_detail = '', retry_base = retry_base + 1, "        \
	  "max_attempts = max_attempts + 1" WQ__OWNED)                                      \
	/* wave4 enqueue: group commit (op_enqueue_group.c): one savepoint per item of a    \
	 * shared transaction, so one item's failure undoes only that item */               \
	X(SQL_ENQ_SAVEPOINT, "SAVEPOINT wq_enqueue_item")                                   \
	X(SQL_ENQ_RELEASE, "RELEASE SAVEPOINT wq_enqueue_item")                             \
	X(SQL_ENQ_ROLLBACK_TO, "ROLLBACK TO SAVEPOINT wq_enqueue_item")                     \
	/* wave4 enqueue: a new task in one statement, one round trip (PostgreSQL only:     \
	 * dialect_postgres.c; op_enqueue_one.c). $1..$16 as SQL_TASK_INSERT, $17 the       \
	 * `accepted` detail; the keyed one inserts nothing when the key exists */          \
	X(SQL_ENQ_ONE, NULL)                                                                \
	X(SQL_ENQ_ONE_KEYED, NULL)                                                          \
	/* ---- wave4 clock: the store's clock (issue 15; op_clock.c) ---- */              \
	/* leases written by one process and judged by another are measured on this one  \
	 * clock, never on the writers' (µs since the epoch; see D_NOW_US) */            \
	X(SQL_STORE_NOW, "SELECT " D_NOW_US)                                               \
	/* prune (op_upkeep.c): external lock leases that expired by $1 (the store's clock: \
	 * the same rule as SQL_LOCK_TAKE's takeover; a task's hold, expires_at 0, stays    \
	 * until its attempt ends) and the starts-per-day counters of days before $1 (UTC   \
	 * day numbers, op_limit.c) */                                                     \
	X(SQL_PRUNE_LOCKS, "DELETE FROM locks WHERE task_id = 0 AND expires_at <> 0 AND "   \
	  "expires_at <= $1")                                                               \
	X(SQL_PRUNE_STARTS, "DELETE FROM start_counts WHERE day < $1")                    \
	/* wave5 enq: multi-row enqueues (op_enqueue_rows.c); $1 one JSON array of rows.   \
	 * The stored operations of the keys [tenant, scope, kind, key]: (index in $1,     \
	 * fingerprint, task_id, the task's state or NULL when pruned) */                   \
	X(SQL_ENQ_KEYS_GET, NULL)                                                           \
	/* $1 new task ids: PostgreSQL only (SQLite: SQL_ENQ_TASK_BASE) */                  \
	X(SQL_ENQ_TASK_IDS, NULL)                                                           \
	/* rows [tenant, scope, kind, key, fingerprint, payload_version, task_id, now] */   \
	X(SQL_ENQ_OPS_INSERT, NULL)                                                         \
	/* rows [id, kind, tenant, scope, operation, payload, payload_size, payload_sha256, \
	 * payload_version, priority, due_at, order_at, now, max_attempts, keyed,           \
	 * fingerprint, notify or ""], in array order (PostgreSQL; SQLite binds them) */    \
	X(SQL_ENQ_TASKS_INSERT, NULL)                                                       \
	/* SQLite only: 32, 4, 1 task rows as bound parameters, 18 per row: the columns of  \
	 * a row of SQL_ENQ_TASKS_INSERT, `now` twice (created_at, updated_at), notify or   \
	 * NULL */                                                                          \
	X(SQL_ENQ_TASKS_VALUES, NULL)                                                       \
	X(SQL_ENQ_TASKS_VALUES4, NULL)                                                      \
	X(SQL_ENQ_TASKS_VALUES1, NULL)                                                      \
	/* SQLite only: the id above every id events ever had (as D_NEXT_ID, minus one),   \
	 * and 32, 4, 1 `accepted` events as bound parameters [id, task_id, at, detail] */  \
	X(SQL_ENQ_EVENT_BASE, NULL)                                                         \
	X(SQL_ENQ_ACCEPTED_VALUES, NULL)                                                    \
	X(SQL_ENQ_ACCEPTED_VALUES4, NULL)                                                   \
	X(SQL_ENQ_ACCEPTED_VALUES1, NULL)                                                   \
	/* wave5 pgw: the `succeeded` outcomes of a batch recorded by one fenced multi-row  \
	 * UPDATE (op_finish_many.c), where a statement is a round trip: PostgreSQL only  \
	 * (dialect_postgres.c; NULL in SQLite, which keeps SQL_FINISH_SUCCEEDED per row).  \
	 * $1 a JSON array of [task id, attempt, instance, now, outcome, result as hex,     \
	 * result size, result sha256, has result, exit status]; wave7 pg: $2 the rows it \
	 * must change, else it fails with WQ__FIN_MANY_MISMATCH in its message */      \
	X(SQL_FINISH_SUCCEEDED_MANY, NULL)                                                  \
	/* wave7 pg: around SQL_ATTEMPTS_FINISH_MANY (op_rows.c): plans made while they run \
	 * by index only, then the session's setting again; PostgreSQL only (NULL in SQLite) */ \
	X(SQL_PLAN_BY_INDEX, NULL)                                                          \
	X(SQL_PLAN_DEFAULT, NULL)                                                           \
	/* wave6 chk: foreign keys while migration steps run (op_store.c migrate()): script  \
	 * texts run outside any transaction before the first step and after the last, and \
	 * the number of rows whose reference dangles, read inside each step before its     \
	 * commit */                                                                        \
	X(SQL_MIGRATE_FK_OFF, NULL)                                                         \
	X(SQL_MIGRATE_FK_ON, NULL)                                                          \
	X(SQL_MIGRATE_FK_DANGLING, NULL)                                                    \
	/* wave6 sqcpu: SQLite only: the id above every id tasks ever had (as D_NEXT_ID,    \
	 * minus one): a batch's new task ids are the next ones, counted in C (instead of   \
	 * a recursive CTE). NULL on PostgreSQL (its identity sequence). */                 \
	X(SQL_ENQ_TASK_BASE, NULL)                                                          \
	/* SQLite only: an event with its id given ($1), counted on in C within one         \
	 * transaction from SQL_ENQ_EVENT_BASE (sql.c event_counted); the other columns as  \
	 * SQL_EVENT_INSERT's $1..$6. NULL on PostgreSQL. */                                \
	X(SQL_EVENT_INSERT_AT, NULL)                                                        \
	/* wave6 claimk: SQL_CLAIM for one kind ($3: its name, not JSON), the common case:  \
	 * its own range read in order, no merge (SQL_CLAIM's per-kind pick and sort cost a \
	 * claim of 8 about 15% more instructions on SQLite). The paused test decides the   \
	 * kind the index is searched for (NULL: none), once: as a filter beside the kind   \
	 * SQLite walked the paused kind's whole range, testing it on every task */         \
	X(SQL_CLAIM_KIND, WQ__CLAIM_SET D_PICK("SELECT p.id FROM tasks p WHERE p.kind = "    \
	  "(SELECT CAST($3 AS text) WHERE" WQ__UNPAUSED("$3") ") AND " WQ__CLAIMABLE("$2")  \
	  " ORDER BY p.order_at, p.id LIMIT $4" D_SKIP_LOCKED) WQ__CLAIM_CHECK)             \
	/* wave7 drain: SQLite only: 4, 8, 32 events of SQL_EVENT_INSERT_AT's columns, 7    \
	 * bound parameters a row, their ids counted (sql.c: a transaction's events are    \
	 * queued and written many rows per statement). NULL on PostgreSQL. */             \
	X(SQL_EVENTS_INSERT_AT4, NULL)                                                      \
	X(SQL_EVENTS_INSERT_AT8, NULL)                                                      \
	X(SQL_EVENTS_INSERT_AT32, NULL)                                                     \
	/* wave7 drain: SQLite only: 4, 8, 32 attempts rows of SQL_ATTEMPT_INSERT's          \
	 * columns, 4 bound parameters a row (a claim's new attempts; PostgreSQL writes     \
	 * them as one SQL_ATTEMPTS_INSERT_MANY). NULL on PostgreSQL. */                    \
	X(SQL_ATTEMPTS_INSERT_AT4, NULL)                                                    \
	X(SQL_ATTEMPTS_INSERT_AT8, NULL)                                                    \
	X(SQL_ATTEMPTS_INSERT_AT32, NULL)                                                   \
	/* wave8 sqlw2: SQLite only: SQL_FINISH_SUCCEEDED for 16, 32 tasks, its 10 bound     \
	 * parameters a row (wq__succeeded_args), one UPDATE of tasks joined with the rows;   \
	 * the caller checks that every row changed (op_finish_many.c). NULL on PostgreSQL    \
	 * (SQL_FINISH_SUCCEEDED_MANY). */                                                   \
	X(SQL_FINISH_SUCCEEDED_ROWS16, NULL)                                                \
	X(SQL_FINISH_SUCCEEDED_ROWS32, NULL)

/* The statements that insert rows into events, on either dialect, other than
 * SQL_EVENT_INSERT_AT and SQL_EVENTS_INSERT_AT4/8/32 (the ones whose ids sql.c's
 * event_counted counts): running one of these inside a transaction writes the queued
 * events first, then makes event_counted read the events' highest id again.
 * tests/unit/test_statements.c checks the list against every dialect's text. */
#define WQ__SQL_EVENT_WRITERS(X)                                                           \
	X(SQL_EVENT_INSERT)                                                                \
	X(SQL_EVENTS_INSERT_MANY)                                                          \
	X(SQL_ENQ_ONE)                                                                     \
	X(SQL_ENQ_ONE_KEYED)                                                               \
	X(SQL_ENQ_ACCEPTED_VALUES)                                                         \
	X(SQL_ENQ_ACCEPTED_VALUES4)                                                        \
	X(SQL_ENQ_ACCEPTED_VALUES1)

/* wave7 drain: the other statements before which the events a transaction queued
 * (sql.c event_counted, SQLite) must be in the table: those that read events (rows, or
 * the highest id), delete tasks (their events go with them, ON DELETE CASCADE), or set,
 * release or roll back to a savepoint (the queued events belong to what it covers).
 * tests/unit/test_statements.c checks that every statement doing one of these is here
 * or in WQ__SQL_EVENT_WRITERS. */
#define WQ__SQL_EVENT_BARRIERS(X)                                                          \
	X(SQL_EVENTS)                                                                      \
	X(SQL_ENQ_EVENT_BASE)                                                              \
	X(SQL_PRUNE_FLOOR)                                                                 \
	X(SQL_PRUNE_TASKS)                                                                 \
	X(SQL_ENQ_SAVEPOINT)                                                               \
	X(SQL_ENQ_RELEASE)                                                                 \
	X(SQL_ENQ_ROLLBACK_TO)

/* The texts of all statements, in a dialect file that defined the D_ fragments. */
#define WQ__SQL_TEXT(id, text) [id] = text,
#define WQ__SQL_TEXTS                                                                      \
	static const char *const texts[WQ__SQL_COUNT] = {WQ__SQL_STATEMENTS(WQ__SQL_TEXT)}

enum wq__sql_id {
#define WQ__SQL_ENUM(id, text) id,
	WQ__SQL_STATEMENTS(WQ__SQL_ENUM)
#undef WQ__SQL_ENUM
	WQ__SQL_COUNT
};

#endif /* WQ_STATEMENTS_H */
