/*
 * dialect_sqlite.c — the SQLite text of every statement: statements.h with SQLite's
 * fragments, and the few statements written differently as a whole.
 */
#include "sql.h"
#include "statements.h"

#include <stddef.h>

#define D_FOR_UPDATE ""
#define D_SKIP_LOCKED ""
#define D_PICK(sub) "id IN (" sub ")"
#define D_UNINDEXED(col) "+" col
#define D_TEXTS(p) "(SELECT value FROM json_each(" p "))"
#define D_IDS(p) "(SELECT value FROM json_each(" p "))"
#define D_RETURNING_ID ""
#define D_MEMBER_INT(p, k) "(SELECT value FROM json_each(" p ") WHERE key = " k ")"
/* A rowid would be max(rowid) + 1: the id of a pruned newest row would come back. */
#define D_ID_COL "id, "
#define D_NEXT_ID(tbl)                                                                     \
	"max(coalesce((SELECT max(id) FROM " tbl "), 0), coalesce((SELECT id FROM id_floor " \
	"WHERE tbl = '" tbl "'), 0)) + 1, "

/* The store's clock in µs (issue 15: leases are aged on one clock). SQLite's database
 * is on this host, so this is the host's clock, read by SQLite (ms precision). */
#define D_NOW_US "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"

#define WQ__FLOOR(tbl) "SELECT '" tbl "', coalesce(max(id), 0) FROM " tbl

WQ__SQL_TEXTS;

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
		return "INSERT INTO events (id, task_id, at, attempt, type, instance, detail) "
		       "SELECT max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT "
		       "id FROM id_floor WHERE tbl = 'events'), 0)) + j.key + 1, json_extract("
		       "j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, "
		       "'$[2]'), json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'), "
		       "json_extract(j.value, '$[5]') FROM json_each($1) j ORDER BY j.key";
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
	default:
		return id >= 0 && id < WQ__SQL_COUNT ? texts[id] : 0;
	}
}

const struct wq__dialect wq__sqlite_dialect = {
	.variant = sqlite_text,
	.migrations = wq__sqlite_migrations,
	.nmigrations = &wq__sqlite_nmigrations,
};
