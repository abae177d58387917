/*
 * dialect_postgres.c — the PostgreSQL text of every statement: statements.h with
 * PostgreSQL's fragments, and the few statements written differently as a whole.
 */
#include "sql.h"
#include "statements.h"

#include <stddef.h>

/* Rows read to choose a transition are locked, so they cannot move before the write. */
#define D_FOR_UPDATE " FOR UPDATE"
#define D_FOR_SHARE " FOR SHARE"
#define D_SKIP_LOCKED " FOR UPDATE SKIP LOCKED"
/* An ARRAY(...) sub-select is evaluated exactly once (an InitPlan). */
#define D_PICK(sub) "id = ANY (ARRAY (" sub "))"
/* wave5 pgw: the claim's outer re-check of state, kept off the indexes here too. With
 * stale statistics (a burst of enqueues not yet analyzed: "pending" looks rare) the
 * planner looked the picked ids up through tasks_claim (state, order_at, id), reading
 * every pending entry of it per claim (85 ms of a 128 ms claim of 64 with 20k pending);
 * written so, only tasks_pkey serves "id = ANY (...)". Same rows. */
#define D_UNINDEXED(col) "(" col " || '')"
#define D_UNINDEXED_NUM(col) col
#define D_TEXTS(p) "(SELECT json_array_elements_text(CAST(" p " AS json)))"
#define D_IDS(p) "(SELECT CAST(json_array_elements_text(CAST(" p " AS json)) AS bigint))"
/* wave7 pg: the JSON array of integers p read as an array literal ("[1,2]" -> "{1,2}"):
 * no JSON parse, and no sub-select planned as a join (a hash of the ids, a probe of
 * tasks_pkey per id, then a sort by id); "id = ANY (array)" is one scan of tasks_pkey in
 * id order (the facts of 40 tasks: 0.23 -> 0.11 ms). */
#define D_ID_IN(p) "id = ANY (CAST(translate(" p ", '[]', '{}') AS bigint[]))"
#define D_RETURNING_ID " RETURNING id"
/* wave7 drain: the member by its key (->>), not a json_each_text set per claimed row */
#define D_MEMBER_INT(p, k) "CAST(CAST(" p " AS json) ->> " k " AS integer)"
/* Identity columns never hand out an id twice. */
#define D_ID_COL ""
/* The store's clock in µs (issue 15: leases are aged on one clock, the server's, never
 * compared across the workers' hosts). */
#define D_NOW_US "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS bigint)"
#define D_NEXT_ID(tbl) ""

/* wave6 claimk: the claim's pick per kind (statements.h, D_PER_KIND): a LATERAL per
 * kind reads the first n of its own range of tasks_claim (state, kind, order_at, id),
 * locked SKIP LOCKED as it reads them, so a row another claim holds is passed over and
 * the kind's next one taken (locked after the merge instead, a held row would just
 * drop out and the claim get fewer than n); the merge keeps the first n. */
#define D_TEXT_ROWS(p) "json_array_elements_text(CAST(" p " AS json)) AS j (value)"
#define D_PER_KIND(kinds, where, n)                                                        \
	"SELECT c.id FROM " kinds " AS k CROSS JOIN LATERAL (SELECT p.id, p.order_at FROM " \
	"tasks p WHERE p.kind = k.value AND " where " ORDER BY p.order_at, p.id LIMIT " n   \
	D_SKIP_LOCKED ") AS c ORDER BY c.order_at, c.id LIMIT " n

WQ__SQL_TEXTS;

/* wave4 enqueue (op_enqueue_one.c): the task insert of SQL_ENQ_ONE*, its values between
 * pre and post (the keyed one also sets the id: idcol); then the `accepted` event and the
 * NOTIFY, answering the task's id. Casts: parameters in a SELECT list have no type from
 * their column. */
#define ENQ_ONE_TASK(idcol, pre, post)                                                     \
	"INSERT INTO tasks (" idcol "kind, tenant, scope, operation, payload, "  \
	"payload_size, payload_sha256, payload_version, priority, state, due_at, order_at, " \
	"created_at, updated_at, max_attempts, keyed, fingerprint, notify)" pre             \
	"CAST($1 AS text), CAST($2 AS text), CAST($3 AS text), CAST($4 AS text), "         \
	"CAST($5 AS text), CAST($6 AS bigint), CAST($7 AS text), CAST($8 AS integer), "    \
	"CAST($9 AS integer), 'pending', CAST($10 AS bigint), CAST($11 AS bigint), "       \
	"CAST($12 AS bigint), CAST($12 AS bigint), CAST($13 AS integer), "                 \
	"CAST($14 AS integer), CAST($15 AS text), CAST($16 AS text)" post " RETURNING id"
#define ENQ_ONE_REST                                                                       \
	"e AS (INSERT INTO events (task_id, at, attempt, type, instance, detail) SELECT "   \
	"id, CAST($12 AS bigint), 0, 'accepted', '', CAST($17 AS text) FROM t) SELECT t.id " \
	"FROM t CROSS JOIN (SELECT pg_notify('" WQ__SQL_NOTIFY_CHANNEL "', '')) AS n"

static const char *postgres_text(int id)
{
	switch (id) {
	case SQL_HAS_SCHEMA: /* the first schema in search_path, where ours are created */
		return "SELECT (SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
		       "current_schema() AND tablename = 'schema_version'), (SELECT count(*) "
		       "FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
		       "AND tablename <> 'schema_version')";
	case SQL_MIGRATE_LOCK: /* concurrent migrations queue on the lock */
		return "CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL); "
		       "LOCK TABLE schema_version IN EXCLUSIVE MODE";
	/* wave6 chk: PostgreSQL enforces foreign keys throughout; its steps alter tables in
	 * place and never need a rebuild */
	case SQL_MIGRATE_FK_OFF:
	case SQL_MIGRATE_FK_ON:
		return "SELECT 1";
	case SQL_MIGRATE_FK_DANGLING:
		return "SELECT 0";
	case SQL_NOTIFY: /* delivered when the transaction commits */
		return "SELECT pg_notify('" WQ__SQL_NOTIFY_CHANNEL "', '')";
	case SQL_DLV_QUEUE:
		return "INSERT INTO deliveries (task_id, channel, state, max_attempts, next_at, "
		       "created_at, updated_at) SELECT t.id, c.value, 'pending', $3, $2, $2, $2 "
		       "FROM tasks t CROSS JOIN LATERAL json_array_elements_text(CAST(t.notify "
		       "AS json)) WITH ORDINALITY AS c (value, n) WHERE t.id = $1 "
		       "AND t.notify IS NOT NULL ORDER BY c.n ON CONFLICT (task_id, channel) "
		       "DO NOTHING RETURNING id, channel";
	case SQL_TASK_STATES: /* locked in id order: two batches lock tasks in one order */
		return "SELECT " WQ__TASK_FACTS_COLUMNS " FROM tasks WHERE " D_ID_IN("$1")
		       " ORDER BY id FOR UPDATE";
	case SQL_LAST_ID: /* (unused: inserts return their id) */
		return "SELECT lastval()";
	case SQL_PRUNE_FLOOR: /* identities never go back */
		return "SELECT 1";
	/* limits (issue 10): READ COMMITTED lets two enqueues count the same tasks; a
	 * transaction lock per (tenant, scope) makes the second count after the first
	 * committed. */
	case SQL_LIMIT_LOCK:
		return "SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended(CAST($1 AS text), "
		       "7710))) AS l";
	/* per-kind concurrency (issue 10): as SQL_LIMIT_LOCK, per kind (another seed) */
	case SQL_KIND_LOCK:
		return "SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended(CAST($1 AS text), "
		       "7711))) AS l";
	/* wave4 batch: multi-row writes (op_rows.c); identities in array order. The
	 * planner guesses 100 rows for a JSON array: the attempts update names its task ids
	 * as an array (evaluated once) so that it looks them up by index, not by a hash
	 * join over every attempts row. wave7 pg: the rows read as jsonb, parsed once (json
	 * parses an element's text again for each ->>: about 1 us more per row of six), and
	 * the two readings of $1 one materialized CTE. Their rows are small (no payload or
	 * result): far below jsonb's 256 MB. */
	case SQL_EVENTS_INSERT_MANY:
		return "INSERT INTO events (task_id, at, attempt, type, instance, detail) SELECT "
		       "CAST(e.v->>0 AS bigint), CAST(e.v->>1 AS bigint), CAST(e.v->>2 AS "
		       "integer), e.v->>3, e.v->>4, e.v->>5 FROM jsonb_array_elements(CAST($1 AS "
		       "jsonb)) WITH ORDINALITY AS e (v, n) ORDER BY e.n";
	case SQL_ATTEMPTS_INSERT_MANY:
		return "INSERT INTO attempts (task_id, attempt, instance, started_at) SELECT "
		       "CAST(e.v->>0 AS bigint), CAST(e.v->>1 AS integer), $2, $3 FROM "
		       "jsonb_array_elements(CAST($1 AS jsonb)) AS e (v)";
	case SQL_ATTEMPTS_FINISH_MANY:
		return "WITH r AS MATERIALIZED (SELECT CAST(e.v->>0 AS bigint) AS t, "
		       "CAST(e.v->>1 AS integer) AS a, CAST(e.v->>2 AS bigint) AS f, e.v->>3 AS "
		       "o, e.v->>4 AS r, CAST(e.v->>5 AS integer) AS x FROM "
		       "jsonb_array_elements(CAST($1 AS jsonb)) AS e (v)) UPDATE attempts SET "
		       "finished_at = r.f, outcome = r.o, reason = r.r, exit_status = r.x FROM r "
		       "WHERE attempts.task_id = ANY (ARRAY (SELECT t FROM r)) AND "
		       "attempts.task_id = r.t AND attempts.attempt = r.a";
	/* wave7 pg: SQL_ATTEMPTS_FINISH_MANY's plan by index, whatever the statistics. Its
	 * prepared statement keeps the generic plan made at its sixth run: on a store whose
	 * attempts were few then (a first drain), a hash join over a sequential scan of
	 * every attempt, kept while the table grows (4.8 ms of 64 rows at 20k attempts, the
	 * largest statement of a W2 drain) until an ANALYZE. Transaction-local, set back
	 * right after the statement; both ride in the pipeline (no round trip). */
	case SQL_PLAN_BY_INDEX:
		return "SET LOCAL enable_seqscan = off";
	case SQL_PLAN_DEFAULT:
		return "SET LOCAL enable_seqscan TO DEFAULT";
	/* wave4 enqueue: one round trip per new task (op_enqueue_one.c) */
	case SQL_ENQ_ONE:
		return "WITH t AS (" ENQ_ONE_TASK("", " VALUES (", ")") "), " ENQ_ONE_REST;
	case SQL_ENQ_ONE_KEYED: /* the operation row names the task id drawn first */
		return "WITH i AS (SELECT nextval(pg_get_serial_sequence('tasks', 'id')) AS id), "
		       "o AS (INSERT INTO operations (tenant, scope, kind, key, fingerprint, "
		       "payload_version, task_id, created_at) SELECT CAST($2 AS text), "
		       "CAST($3 AS text), CAST($1 AS text), CAST($4 AS text), CAST($15 AS text), "
		       "CAST($8 AS integer), i.id, CAST($12 AS bigint) FROM i ON CONFLICT "
		       "(tenant, scope, kind, key) DO NOTHING RETURNING task_id), "
		       "t AS (" ENQ_ONE_TASK("id, ", " OVERRIDING SYSTEM VALUE SELECT o.task_id, ", " FROM o") "), " ENQ_ONE_REST;
	/* wave5 enq: multi-row enqueues (op_enqueue_rows.c) */
	case SQL_ENQ_KEYS_GET:
		return "SELECT e.n - 1, o.fingerprint, o.task_id, t.state FROM "
		       "json_array_elements(CAST($1 AS json)) WITH ORDINALITY AS e (v, n) JOIN "
		       "operations o ON o.tenant = e.v->>0 AND o.scope = e.v->>1 AND o.kind = "
		       "e.v->>2 AND o.key = e.v->>3 LEFT JOIN tasks t ON t.id = o.task_id AND "
		       "t.keyed = 1 AND t.operation = o.key";
	case SQL_ENQ_TASK_IDS:
		return "SELECT nextval(pg_get_serial_sequence('tasks', 'id')) FROM "
		       "generate_series(1, CAST($1 AS integer))";
	case SQL_ENQ_OPS_INSERT:
		return "INSERT INTO operations (tenant, scope, kind, key, fingerprint, "
		       "payload_version, task_id, created_at) SELECT e.v->>0, e.v->>1, e.v->>2, "
		       "e.v->>3, e.v->>4, CAST(e.v->>5 AS integer), CAST(e.v->>6 AS bigint), "
		       "CAST(e.v->>7 AS bigint) FROM json_array_elements(CAST($1 AS json)) AS e "
		       "(v) ON CONFLICT (tenant, scope, kind, key) DO NOTHING";
	case SQL_ENQ_TASKS_INSERT:
		return "INSERT INTO tasks (id, kind, tenant, scope, operation, payload, "
		       "payload_size, payload_sha256, payload_version, priority, state, due_at, "
		       "order_at, created_at, updated_at, max_attempts, keyed, fingerprint, "
		       "notify) OVERRIDING SYSTEM VALUE SELECT CAST(e.v->>0 AS bigint), e.v->>1, "
		       "e.v->>2, e.v->>3, e.v->>4, e.v->>5, CAST(e.v->>6 AS bigint), e.v->>7, "
		       "CAST(e.v->>8 AS integer), CAST(e.v->>9 AS integer), 'pending', "
		       "CAST(e.v->>10 AS bigint), CAST(e.v->>11 AS bigint), CAST(e.v->>12 AS "
		       "bigint), CAST(e.v->>12 AS bigint), CAST(e.v->>13 AS integer), "
		       "CAST(e.v->>14 AS integer), e.v->>15, NULLIF(e.v->>16, '') FROM "
		       "json_array_elements(CAST($1 AS json)) WITH ORDINALITY AS e (v, n) "
		       "ORDER BY e.n";
	/* wave5 pgw (op_finish_many.c): SQL_FINISH_SUCCEEDED's SET and fence (WQ__OWNED) for
	 * each row of $1. The rows are looked up by an array of their ids (evaluated once,
	 * an index scan of tasks_pkey in id order, so the rows are locked in task order like
	 * the per-row statements did) and joined to their values by id. The state is
	 * compared as (state || ''): else, with "running" rare in the statistics, the
	 * planner read every running task through an index on state (then
	 * tasks_running_instance; tasks_claim's `running` prefix since wave 11) instead.
	 * wave7 pg: the rows read as jsonb, once (a materialized CTE); op_finish_many.c
	 * keeps large results out of it (jsonb holds at most 256 MB). It is sent without
	 * waiting (op_finish_many.c), so it checks itself: $2 rows must change, else it
	 * fails (a cast of the message to bigint) and the transaction with it — a row
	 * fenced off is never skipped unseen. */
	case SQL_FINISH_SUCCEEDED_MANY:
		return "WITH r AS MATERIALIZED (SELECT CAST(e.v->>0 AS bigint) AS t, "
		       "CAST(e.v->>1 AS integer) AS a, e.v->>2 AS i, CAST(e.v->>3 AS bigint) AS f, "
		       "e.v->>4 AS o, e.v->>5 AS res, CAST(e.v->>6 AS bigint) AS rs, e.v->>7 AS "
		       "sha, CAST(e.v->>8 AS integer) AS hr, CAST(e.v->>9 AS integer) AS x FROM "
		       "jsonb_array_elements(CAST($1 AS jsonb)) AS e (v)), u AS (UPDATE tasks SET "
		       "state = 'succeeded', finished_at = r.f, updated_at = r.f, outcome = r.o, "
		       "result = "
		       "CASE WHEN r.hr <> 0 THEN decode(r.res, 'hex') END, result_size = r.rs, "
		       "result_sha256 = r.sha, has_result = r.hr, last_exit_status = r.x, reason "
		       "= '', reason_detail = '' FROM r WHERE tasks.id = ANY (ARRAY (SELECT t FROM "
		       "r)) AND tasks.id = r.t AND (tasks.state || '') = 'running' AND "
		       "tasks.attempt = r.a AND tasks.instance = r.i RETURNING tasks.id) "
		       "SELECT CAST(CASE WHEN count(*) = CAST($2 AS bigint) THEN CAST(count(*) "
		       "AS text) ELSE '" WQ__FIN_MANY_MISMATCH "' || count(*) || "
		       "' of ' || $2 || ' rows' END AS bigint) FROM u";
	default:
		return id >= 0 && id < WQ__SQL_COUNT ? texts[id] : 0;
	}
}

const struct wq__dialect wq__postgres_dialect = {
	.variant = postgres_text,
	.migrations = wq__postgres_migrations,
	.nmigrations = &wq__postgres_nmigrations,
};
