/*
 * dialect_sqlite.c — the SQLite text of every statement: statements.h with SQLite's
 * fragments, and the few statements written differently as a whole.
 */
#include "sql.h"
#include "statements.h"

#include <stddef.h>

#define D_FOR_UPDATE ""
#define D_FOR_SHARE ""
#define D_SKIP_LOCKED ""
#define D_PICK(sub) "id IN (" sub ")"
#define D_UNINDEXED(col) "+" col
#define D_UNINDEXED_NUM(col) "+" col
#define D_TEXTS(p) "(SELECT value FROM json_each(" p "))"
#define D_IDS(p) "(SELECT value FROM json_each(" p "))"
#define D_ID_IN(p) "id IN " D_IDS(p)
#define D_RETURNING_ID ""
/* wave7 drain: one lookup of the member by a quoted label in the parse SQLite keeps of p
 * across the statement's rows, where a json_each subquery opened a virtual table per
 * claimed row. Quoted, a kind's '.' and '-' (wq__check_kind allows no '"' or '\\')
 * stay one label, never a path. */
#define D_MEMBER_INT(p, k) "json_extract(" p ", '$.' || json_quote(" k "))"
/* A rowid would be max(rowid) + 1: the id of a pruned newest row would come back. */
#define D_ID_COL "id, "
#define D_NEXT_ID(tbl)                                                                     \
	"max(coalesce((SELECT max(id) FROM " tbl "), 0), coalesce((SELECT id FROM id_floor " \
	"WHERE tbl = '" tbl "'), 0)) + 1, "

/* The store's clock in µs (issue 15: leases are aged on one clock). SQLite's database
 * is on this host, so this is the host's clock, read by SQLite (ms precision). */
#define D_NOW_US "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"

/* wave6 claimk: the claim's pick per kind (statements.h, D_PER_KIND). CROSS JOIN keeps
 * the kinds outside; each kind's correlated IN (... LIMIT n) reads the first n of its own
 * range of tasks_claim (state, kind, order_at, id) and its ids are looked up by rowid;
 * the merge sorts at most n per kind. */
#define D_TEXT_ROWS(p) "json_each(" p ")"
#define D_PER_KIND(kinds, where, n)                                                        \
	"SELECT c.id FROM " kinds " AS k CROSS JOIN tasks c WHERE c.id IN (SELECT p.id "   \
	"FROM tasks p WHERE p.kind = k.value AND " where " ORDER BY p.order_at, p.id LIMIT " \
	n ") ORDER BY c.order_at, c.id LIMIT " n

#define WQ__FLOOR(tbl) "SELECT '" tbl "', coalesce(max(id), 0) FROM " tbl

WQ__SQL_TEXTS;

/* wave5 enq: SQL_ENQ_TASKS_VALUES*, 32, 4, 1 rows of 18 parameters each; anonymous "?"
 * are numbered in order of appearance (as SQLite numbers them). OR ROLLBACK: a failed
 * row rolls the whole transaction back (the caller does so anyway, then goes item by
 * item), so SQLite keeps no statement journal of every page a multi-row insert touches
 * (a temporary file beyond 64 KiB; tasks has no foreign key, the other reason for one). */
#define ENQ_TASKS_INSERT                                                                   \
	"INSERT OR ROLLBACK INTO tasks (id, kind, tenant, scope, operation, payload, "       \
	"payload_size, payload_sha256, payload_version, priority, state, due_at, order_at, " \
	"created_at, updated_at, max_attempts, keyed, fingerprint, notify) VALUES "
#define ENQ_EVENTS_INSERT                                                                  \
	"INSERT INTO events (id, task_id, at, attempt, type, instance, detail) VALUES "
#define ENQ_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)"
#define ENQ_ROWS4 ENQ_ROW ", " ENQ_ROW ", " ENQ_ROW ", " ENQ_ROW
#define ENQ_ROWS16 ENQ_ROWS4 ", " ENQ_ROWS4 ", " ENQ_ROWS4 ", " ENQ_ROWS4
#define ENQ_ROWS32 ENQ_ROWS16 ", " ENQ_ROWS16
/* SQL_ENQ_ACCEPTED_VALUES*: 32, 4, 1 rows of 4 parameters */
#define ENQ_EVENT "(?, ?, ?, 0, 'accepted', '', ?)"
#define ENQ_EVENTS4 ENQ_EVENT ", " ENQ_EVENT ", " ENQ_EVENT ", " ENQ_EVENT
#define ENQ_EVENTS16 ENQ_EVENTS4 ", " ENQ_EVENTS4 ", " ENQ_EVENTS4 ", " ENQ_EVENTS4
#define ENQ_EVENTS32 ENQ_EVENTS16 ", " ENQ_EVENTS16

/* wave7 drain: SQL_EVENTS_INSERT_AT4/8/32, 7 parameters a row (SQL_EVENT_INSERT_AT's) */
#define EVQ_ROW "(?, ?, ?, ?, ?, ?, ?)"
#define EVQ_ROWS4 EVQ_ROW ", " EVQ_ROW ", " EVQ_ROW ", " EVQ_ROW
#define EVQ_ROWS8 EVQ_ROWS4 ", " EVQ_ROWS4
#define EVQ_ROWS32 EVQ_ROWS8 ", " EVQ_ROWS8 ", " EVQ_ROWS8 ", " EVQ_ROWS8
/* wave7 drain: SQL_ATTEMPTS_INSERT_AT4/8/32, 4 parameters a row (SQL_ATTEMPT_INSERT's) */
#define ATT_INSERT "INSERT INTO attempts (task_id, attempt, instance, started_at) VALUES "
#define ATT_ROW "(?, ?, ?, ?)"
#define ATT_ROWS4 ATT_ROW ", " ATT_ROW ", " ATT_ROW ", " ATT_ROW
#define ATT_ROWS8 ATT_ROWS4 ", " ATT_ROWS4
#define ATT_ROWS32 ATT_ROWS8 ", " ATT_ROWS8 ", " ATT_ROWS8 ", " ATT_ROWS8
/* wave8 sqlw2: SQL_FINISH_SUCCEEDED_ROWS16/32: SQL_FINISH_SUCCEEDED's SET and fence per
 * row r of ($1 id, $2 attempt, $3 instance, $4 now, $5 outcome, $6 result, $7 its size,
 * $8 its sha256, $9 has result, $10 exit status). */
#define FIN_UPDATE                                                                         \
	"UPDATE tasks SET " WQ__SUCCEEDED_SET("r.column4", "r.column5", "r.column6",        \
					      "r.column7", "r.column8", "r.column9",         \
					      "r.column10") " FROM (VALUES "
#define FIN_FENCE ") AS r WHERE " WQ__FENCE("r.column1", "r.column2", "r.column3")
#define FIN_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define FIN_ROWS4 FIN_ROW ", " FIN_ROW ", " FIN_ROW ", " FIN_ROW
#define FIN_ROWS8 FIN_ROWS4 ", " FIN_ROWS4
#define FIN_ROWS16 FIN_ROWS8 ", " FIN_ROWS8
#define FIN_ROWS32 FIN_ROWS16 ", " FIN_ROWS16

static const char *sqlite_text(int id)
{
	switch (id) {
	case SQL_HAS_SCHEMA:
		return "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' "
		       "AND name = 'schema_version'), (SELECT count(*) FROM sqlite_master "
		       "WHERE type = 'table' AND name <> 'schema_version' "
		       "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\')";
	case SQL_LAST_ID:
		return "SELECT last_insert_rowid()";
	case SQL_MIGRATE_LOCK: /* BEGIN IMMEDIATE holds the write lock already */
	case SQL_NOTIFY:
		return "SELECT 1";
	/* wave6 chk: SQLite switches enforcement only outside a transaction */
	case SQL_MIGRATE_FK_OFF:
		return "PRAGMA foreign_keys = OFF";
	case SQL_MIGRATE_FK_ON:
		return "PRAGMA foreign_keys = ON";
	case SQL_MIGRATE_FK_DANGLING:
		return "SELECT count(*) FROM pragma_foreign_key_check";
	case SQL_DLV_QUEUE:
		/* Channels in the order given; the id base is read once, j.key keeps them
		 * apart. */
		return "INSERT INTO deliveries (id, task_id, channel, state, max_attempts, "
		       "next_at, created_at, updated_at) SELECT max(coalesce((SELECT max(id) "
		       "FROM deliveries), 0), coalesce((SELECT id FROM id_floor "
		       "WHERE tbl = 'deliveries'), 0)) + j.key + 1, t.id, j.value, 'pending', $3, "
		       "$2, $2, $2 FROM tasks t, json_each(t.notify) j WHERE t.id = $1 "
		       "AND t.notify IS NOT NULL AND json_valid(t.notify) ORDER BY j.key "
		       "ON CONFLICT (task_id, channel) DO NOTHING RETURNING id, channel";
	/* wave8 sqlw2: each id of $1 looked up by rowid in the array's order (the caller's
	 * ids are sorted), where "id IN (json_each) ORDER BY id" built a temporary b-tree
	 * of the ids every run (~4k instructions a task in a drain of 8 a batch) */
	case SQL_TASK_STATES:
		return "SELECT " WQ__TASK_FACTS_COLUMNS " FROM json_each($1) AS j CROSS JOIN "
		       "tasks ON tasks.id = j.value";
	case SQL_PRUNE_FLOOR:
		return "INSERT INTO id_floor (tbl, id) SELECT * FROM (" WQ__FLOOR("tasks")
		       " UNION ALL " WQ__FLOOR("events") " UNION ALL " WQ__FLOOR("deliveries")
		       " UNION ALL " WQ__FLOOR("inbox") ") WHERE true ON CONFLICT (tbl) "
		       "DO UPDATE SET id = max(id_floor.id, excluded.id)";
	/* limits (issue 10): BEGIN IMMEDIATE serialises every writer already */
	case SQL_LIMIT_LOCK:
		return "SELECT length($1)";
	case SQL_KIND_LOCK:
		return "SELECT length($1)";
	/* wave4 batch: multi-row writes (op_rows.c); the id base is read once, j.key
	 * keeps the rows apart and in order */
	case SQL_EVENTS_INSERT_MANY:
		/* wave5 enq: the rows MATERIALIZED first (see SQL_ENQ_OPS_INSERT) */
		return "WITH j (key, value) AS MATERIALIZED (SELECT key, value FROM json_each("
		       "$1)) INSERT INTO events (id, task_id, at, attempt, type, instance, detail) "
		       "SELECT max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT "
		       "id FROM id_floor WHERE tbl = 'events'), 0)) + j.key + 1, json_extract("
		       "j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, "
		       "'$[2]'), json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'), "
		       "json_extract(j.value, '$[5]') FROM j ORDER BY j.key";
	case SQL_ATTEMPTS_INSERT_MANY:
		return "INSERT INTO attempts (task_id, attempt, instance, started_at) SELECT "
		       "json_extract(value, '$[0]'), json_extract(value, '$[1]'), $2, $3 FROM "
		       "json_each($1)";
	case SQL_ATTEMPTS_FINISH_MANY:
		return "UPDATE attempts SET finished_at = r.f, outcome = r.o, reason = r.r, "
		       "exit_status = r.x FROM (SELECT json_extract(value, '$[0]') AS t, "
		       "json_extract(value, '$[1]') AS a, json_extract(value, '$[2]') AS f, "
		       "json_extract(value, '$[3]') AS o, json_extract(value, '$[4]') AS r, "
		       "json_extract(value, '$[5]') AS x FROM json_each($1)) AS r WHERE "
		       "attempts.task_id = r.t AND attempts.attempt = r.a";
	/* wave5 enq: multi-row enqueues (op_enqueue_rows.c). CROSS JOIN keeps the keys
	 * outside, so each key is one lookup in the operations' unique index. */
	case SQL_ENQ_KEYS_GET:
		return "WITH r (k, v) AS MATERIALIZED (SELECT key, value FROM json_each($1)) "
		       "SELECT r.k, o.fingerprint, o.task_id, t.state FROM r CROSS JOIN "
		       "operations o ON o.tenant = json_extract(r.v, '$[0]') AND o.scope = "
		       "json_extract(r.v, '$[1]') AND o.kind = json_extract(r.v, '$[2]') AND "
		       "o.key = json_extract(r.v, '$[3]') LEFT JOIN tasks t ON t.id = o.task_id "
		       "AND t.keyed = 1 AND t.operation = o.key";
	/* The rows as a MATERIALIZED table first: json_each renders a row's text anew
	 * each time `value` is named, once per column otherwise (3x the cost). */
	case SQL_ENQ_OPS_INSERT:
		return "WITH r (v) AS MATERIALIZED (SELECT value FROM json_each($1)) INSERT INTO "
		       "operations (tenant, scope, kind, key, fingerprint, payload_version, "
		       "task_id, created_at) SELECT json_extract(v, '$[0]'), json_extract(v, "
		       "'$[1]'), json_extract(v, '$[2]'), json_extract(v, '$[3]'), json_extract(v, "
		       "'$[4]'), json_extract(v, '$[5]'), json_extract(v, '$[6]'), json_extract(v, "
		       "'$[7]') FROM r WHERE true ON CONFLICT (tenant, scope, kind, key) DO NOTHING";
	case SQL_ENQ_TASKS_VALUES:
		return ENQ_TASKS_INSERT ENQ_ROWS32;
	case SQL_ENQ_TASKS_VALUES4:
		return ENQ_TASKS_INSERT ENQ_ROWS4;
	case SQL_ENQ_TASKS_VALUES1:
		return ENQ_TASKS_INSERT ENQ_ROW;
	case SQL_ENQ_EVENT_BASE:
		return "SELECT max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT "
		       "id FROM id_floor WHERE tbl = 'events'), 0))";
	case SQL_ENQ_ACCEPTED_VALUES:
		return ENQ_EVENTS_INSERT ENQ_EVENTS32;
	case SQL_ENQ_ACCEPTED_VALUES4:
		return ENQ_EVENTS_INSERT ENQ_EVENTS4;
	case SQL_ENQ_ACCEPTED_VALUES1:
		return ENQ_EVENTS_INSERT ENQ_EVENT;
	/* wave6 sqcpu: the base of a batch's task ids, read once */
	case SQL_ENQ_TASK_BASE:
		return "SELECT max(coalesce((SELECT max(id) FROM tasks), 0), coalesce((SELECT "
		       "id FROM id_floor WHERE tbl = 'tasks'), 0))";
	/* wave6 sqcpu: an event whose id the caller counted (sql.c event_counted) */
	case SQL_EVENT_INSERT_AT:
		return "INSERT INTO events (id, task_id, at, attempt, type, instance, detail) "
		       "VALUES ($1, $2, $3, $4, $5, $6, $7)";
	case SQL_EVENTS_INSERT_AT4:
		return ENQ_EVENTS_INSERT EVQ_ROWS4;
	case SQL_EVENTS_INSERT_AT8:
		return ENQ_EVENTS_INSERT EVQ_ROWS8;
	case SQL_EVENTS_INSERT_AT32:
		return ENQ_EVENTS_INSERT EVQ_ROWS32;
	case SQL_ATTEMPTS_INSERT_AT4:
		return ATT_INSERT ATT_ROWS4;
	case SQL_ATTEMPTS_INSERT_AT8:
		return ATT_INSERT ATT_ROWS8;
	case SQL_ATTEMPTS_INSERT_AT32:
		return ATT_INSERT ATT_ROWS32;
	case SQL_FINISH_SUCCEEDED_ROWS16:
		return FIN_UPDATE FIN_ROWS16 FIN_FENCE;
	case SQL_FINISH_SUCCEEDED_ROWS32:
		return FIN_UPDATE FIN_ROWS32 FIN_FENCE;
	default:
		return id >= 0 && id < WQ__SQL_COUNT ? texts[id] : 0;
	}
}

const struct wq__dialect wq__sqlite_dialect = {
	.variant = sqlite_text,
	.migrations = wq__sqlite_migrations,
	.nmigrations = &wq__sqlite_nmigrations,
};
