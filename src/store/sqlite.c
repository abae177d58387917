/*
 * sqlite.c — the SQLite backend of the storage interface (store.h).
 *
 * Several processes share one database file: WAL journal, a busy_timeout, and every write
 * transaction opened with BEGIN IMMEDIATE so a writer takes the write lock up front (a
 * deferred transaction that reads and then writes can deadlock against another one doing
 * the same, and in WAL mode can fail with SQLITE_BUSY_SNAPSHOT without ever waiting).
 *
 * Every statement is a constant string from sql_text[] with bound parameters, prepared
 * once per connection on first use and reset (bindings cleared) right after each use, so
 * no statement keeps a read snapshot open between calls. No SQL is ever built from data.
 *
 * Every state change is a conditional UPDATE whose row count is checked; the method first
 * reads the row (inside the same IMMEDIATE transaction) only to name the current state in
 * its error message, never to decide a write on its own.
 */
#include "internal.h"
#include "evidence.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define BUSY_TIMEOUT_MS 10000
#define NOTE_MAX 200
#define LIST_LIMIT_DEFAULT 100

/* ------------------------------------------------------------------ schema ---- */

/*
 * Forward migrations, in order: step i brings the schema to version migrations[i].version.
 * Each step runs in its own IMMEDIATE transaction together with the schema_version row
 * that records it, so a step is either fully applied or not at all. Append only: a
 * released step never changes (databases in the field already ran it).
 */
struct migration {
	int version;
	const char *sql;
};

static const struct migration migrations[] = {
	{1,
	 "CREATE TABLE schema_version (version INTEGER NOT NULL);\n"
	 "CREATE TABLE tasks (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  kind TEXT NOT NULL,\n"
	 "  tenant TEXT NOT NULL DEFAULT '',\n"
	 "  scope TEXT NOT NULL DEFAULT '',\n"
	 "  operation TEXT NOT NULL,\n"
	 "  payload TEXT NOT NULL,\n"
	 "  payload_size INTEGER NOT NULL,\n"
	 "  payload_sha256 TEXT NOT NULL,\n"
	 "  payload_version INTEGER NOT NULL,\n"
	 "  priority INTEGER NOT NULL,\n"
	 "  state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'succeeded',\n"
	 "                                       'failed', 'interrupted', 'cancelled')),\n"
	 "  due_at INTEGER NOT NULL,\n"
	 "  order_at INTEGER NOT NULL,\n"
	 "  created_at INTEGER NOT NULL,\n"
	 "  updated_at INTEGER NOT NULL,\n"
	 "  started_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  finished_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  attempt INTEGER NOT NULL DEFAULT 0,\n"
	 "  max_attempts INTEGER NOT NULL,\n"
	 "  instance TEXT NOT NULL DEFAULT '',\n"
	 "  reason TEXT NOT NULL DEFAULT '',\n"
	 "  reason_detail TEXT NOT NULL DEFAULT '',\n"
	 "  outcome TEXT NOT NULL DEFAULT '',\n"
	 "  cancel_requested INTEGER NOT NULL DEFAULT 0,\n"
	 "  result BLOB,\n"
	 "  result_size INTEGER NOT NULL DEFAULT 0,\n"
	 "  result_sha256 TEXT NOT NULL DEFAULT '',\n"
	 "  has_result INTEGER NOT NULL DEFAULT 0,\n"
	 "  last_exit_status INTEGER\n"
	 ");\n"
	 "CREATE UNIQUE INDEX tasks_operation ON tasks (operation);\n"
	 "CREATE INDEX tasks_claim ON tasks (state, order_at, id);\n"
	 "CREATE INDEX tasks_running_instance ON tasks (instance) WHERE state = 'running';\n"
	 "CREATE TABLE attempts (\n"
	 "  task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,\n"
	 "  attempt INTEGER NOT NULL,\n"
	 "  instance TEXT NOT NULL,\n"
	 "  started_at INTEGER NOT NULL,\n"
	 "  finished_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  outcome TEXT NOT NULL DEFAULT '',\n"
	 "  reason TEXT NOT NULL DEFAULT '',\n"
	 "  exit_status INTEGER,\n"
	 "  PRIMARY KEY (task_id, attempt)\n"
	 ") WITHOUT ROWID;\n"
	 "CREATE TABLE events (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,\n"
	 "  at INTEGER NOT NULL,\n"
	 "  attempt INTEGER NOT NULL DEFAULT 0,\n"
	 "  type TEXT NOT NULL,\n"
	 "  instance TEXT NOT NULL DEFAULT '',\n"
	 "  detail TEXT NOT NULL DEFAULT '{}'\n"
	 ");\n"
	 "CREATE INDEX events_task ON events (task_id, id);\n"
	 "CREATE TABLE instances (\n"
	 "  id TEXT PRIMARY KEY,\n"
	 "  host TEXT NOT NULL,\n"
	 "  pid INTEGER NOT NULL,\n"
	 "  proc_start INTEGER NOT NULL,\n"
	 "  started_at INTEGER NOT NULL,\n"
	 "  heartbeat_at INTEGER NOT NULL\n"
	 ");\n"},
	/* Operation identities, the effect journal, notify channels (operation.c, effect.c).
	 * A keyed task is unique through `operations` (per tenant, scope, kind, key), which
	 * has no foreign key: it outlives its task row (prune.c). Generated operation ids
	 * stay unique on tasks. */
	{2,
	 "CREATE TABLE operations (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  tenant TEXT NOT NULL,\n"
	 "  scope TEXT NOT NULL,\n"
	 "  kind TEXT NOT NULL,\n"
	 "  key TEXT NOT NULL,\n"
	 "  fingerprint TEXT NOT NULL,\n"
	 "  payload_version INTEGER NOT NULL,\n"
	 "  task_id INTEGER NOT NULL,\n"
	 "  created_at INTEGER NOT NULL,\n"
	 "  finished_at INTEGER,\n"
	 "  UNIQUE (tenant, scope, kind, key)\n"
	 ");\n"
	 "CREATE INDEX operations_task ON operations (task_id);\n"
	 /* A rowid is max(rowid) + 1, so deleting the newest rows (prune) would hand their
	  * ids out again, while an operation record may still name one: new ids start above
	  * the highest id ever pruned (what AUTOINCREMENT does, without rebuilding tasks). */
	 "CREATE TABLE id_floor (tbl TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;\n"
	 "ALTER TABLE tasks ADD COLUMN keyed INTEGER NOT NULL DEFAULT 0;\n"
	 "ALTER TABLE tasks ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';\n"
	 "ALTER TABLE tasks ADD COLUMN notify TEXT;\n"
	 "ALTER TABLE tasks ADD COLUMN uncertain_effect TEXT NOT NULL DEFAULT '';\n"
	 "DROP INDEX tasks_operation;\n"
	 "CREATE UNIQUE INDEX tasks_operation ON tasks (operation) WHERE keyed = 0;\n"
	 "CREATE INDEX tasks_finished ON tasks (finished_at) "
	 "WHERE state IN ('succeeded', 'failed', 'cancelled');\n"
	 "CREATE TABLE effects (\n"
	 "  task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,\n"
	 "  name TEXT NOT NULL,\n"
	 "  state TEXT NOT NULL CHECK (state IN ('begun', 'done')),\n"
	 "  attempt INTEGER NOT NULL,\n"
	 "  last_attempt INTEGER NOT NULL,\n"
	 "  begun_attempts INTEGER NOT NULL DEFAULT 1,\n"
	 "  result TEXT,\n"
	 "  begun_at INTEGER NOT NULL,\n"
	 "  done_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  PRIMARY KEY (task_id, name)\n"
	 ") WITHOUT ROWID;\n"},
	/* The outbox (outbox.c, deliver.c): one delivery per (task, channel), created in the
	 * transaction that marks the task succeeded; the inbox holds each notification once
	 * (notice_key: "delivery:<id>" for a channel, "dead:<id>:<attempts>" for a report to
	 * the operators). Notifications outlive their tasks: no foreign key. */
	{3,
	 "CREATE TABLE deliveries (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,\n"
	 "  channel TEXT NOT NULL,\n"
	 "  state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'delivered', 'dead')),\n"
	 "  attempts INTEGER NOT NULL DEFAULT 0,\n"
	 "  max_attempts INTEGER NOT NULL,\n"
	 "  retry_base INTEGER NOT NULL DEFAULT 0,\n"
	 "  instance TEXT NOT NULL DEFAULT '',\n"
	 "  next_at INTEGER NOT NULL,\n"
	 "  created_at INTEGER NOT NULL,\n"
	 "  updated_at INTEGER NOT NULL,\n"
	 "  delivered_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  last_error TEXT NOT NULL DEFAULT '',\n"
	 "  UNIQUE (task_id, channel)\n"
	 ");\n"
	 "CREATE INDEX deliveries_claim ON deliveries (state, next_at, id);\n"
	 "CREATE TABLE inbox (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  recipient TEXT NOT NULL,\n"
	 "  notice_key TEXT NOT NULL UNIQUE,\n"
	 "  delivery_id INTEGER NOT NULL,\n"
	 "  task_id INTEGER NOT NULL,\n"
	 "  kind TEXT NOT NULL,\n"
	 "  operation TEXT NOT NULL,\n"
	 "  subject TEXT NOT NULL,\n"
	 "  result_size INTEGER NOT NULL DEFAULT -1,\n"
	 "  result_sha256 TEXT NOT NULL DEFAULT '',\n"
	 "  created_at INTEGER NOT NULL,\n"
	 "  read_at INTEGER NOT NULL DEFAULT 0\n"
	 ");\n"
	 "CREATE INDEX inbox_recipient ON inbox (recipient, id);\n"},
};

_Static_assert(WQ__ARRAY_LEN(migrations) == WQ_SCHEMA_VERSION,
	       "one migration step per schema version");

/* ------------------------------------------------------------------ statements ---- */

/* The columns of a wq_task, in the order read_task() reads them. */
#define TASK_COLUMNS                                                                       \
	"id, kind, tenant, scope, operation, state, priority, payload_version, payload_size, " \
	"payload_sha256, attempt, max_attempts, created_at, updated_at, due_at, started_at, " \
	"finished_at, instance, reason, reason_detail, outcome, cancel_requested, "           \
	"has_result, result_size, result_sha256, keyed, fingerprint"

/* Shared by the five finish statements: the fencing condition of SPEC §3. */
#define OWNED_BY_ATTEMPT " WHERE id = ?1 AND state = 'running' AND attempt = ?2 AND instance = ?3"

enum sql {
	SQL_BEGIN_WRITE,
	SQL_BEGIN_READ,
	SQL_COMMIT,
	SQL_ROLLBACK,
	SQL_HAS_SCHEMA,
	SQL_FOREIGN_TABLES,
	SQL_VERSION,
	SQL_SET_VERSION,
	SQL_EVENT_INSERT,
	SQL_TASK_INSERT,
	SQL_TASK_GET,
	SQL_TASK_STATE,
	SQL_LIST_ALL,
	SQL_LIST_STATE,
	SQL_LIST_KIND,
	SQL_LIST_STATE_KIND,
	SQL_RESULT,
	SQL_TASK_EXISTS,
	SQL_EVENTS,
	SQL_CLAIM_PROBE,
	SQL_CLAIM,
	SQL_ATTEMPT_INSERT,
	SQL_ATTEMPT_FINISH,
	SQL_FINISH_SUCCEEDED,
	SQL_FINISH_RETRY,
	SQL_FINISH_FAILED,
	SQL_FINISH_INTERRUPTED,
	SQL_FINISH_CANCELLED,
	SQL_CANCEL_PENDING,
	SQL_CANCEL_REQUEST,
	SQL_RESOLVE_RETRY,
	SQL_RESOLVE_END,
	SQL_CANCEL_REQUESTS,
	SQL_INTERRUPTED_OF_KIND,
	SQL_NEXT_DUE,
	SQL_INSTANCE_INSERT,
	SQL_INSTANCE_HEARTBEAT,
	SQL_INSTANCE_DELETE,
	SQL_INSTANCE_LIST,
	SQL_INSTANCE_REAP,
	SQL_INTERRUPT_INSTANCE,
	SQL_INTERRUPT_ORPHANS,
	/* operations, effects, retention, doctor (schema v2) */
	SQL_OP_INSERT,
	SQL_OP_SET_TASK,
	SQL_OP_GET,
	SQL_OP_FIND,
	SQL_ATTEMPTS,
	SQL_TASK_RUNNING,
	SQL_TASK_UNCERTAIN,
	SQL_SET_UNCERTAIN,
	SQL_SET_DETAIL,
	SQL_EFFECT_GET,
	SQL_EFFECT_INSERT,
	SQL_EFFECT_AGAIN,
	SQL_EFFECT_DONE,
	SQL_EFFECT_OPEN,
	SQL_PRUNE_MARK,
	SQL_PRUNE_FLOOR,
	SQL_PRUNE_TASKS,
	SQL_PRUNE_OPERATIONS,
	SQL_DOCTOR_TWICE,
	SQL_DOCTOR_UNCERTAIN,
	SQL_DOCTOR_INTERRUPTED,
	/* outbox (schema v3) */
	SQL_DLV_QUEUE,
	SQL_DLV_CLAIM,
	SQL_DLV_TASK,
	SQL_DLV_STATE,
	SQL_DLV_DELIVERED,
	SQL_DLV_RETRY,
	SQL_DLV_DEAD,
	SQL_DLV_RECOVER,
	SQL_DLV_NEXT,
	SQL_DLV_ANY_DUE,
	SQL_DLV_ANY_SENDING,
	SQL_DLV_LIST,
	SQL_DLV_RETRY_DEAD,
	SQL_INBOX_INSERT,
	SQL_INBOX_LIST,
	SQL_INBOX_READ,
	SQL_INBOX_EXISTS,
	SQL__COUNT
};

static const char *const sql_text[SQL__COUNT] = {
	[SQL_BEGIN_WRITE] = "BEGIN IMMEDIATE",
	[SQL_BEGIN_READ] = "BEGIN",
	[SQL_COMMIT] = "COMMIT",
	[SQL_ROLLBACK] = "ROLLBACK",
	[SQL_HAS_SCHEMA] = "SELECT count(*) FROM sqlite_master "
			   "WHERE type = 'table' AND name = 'schema_version'",
	[SQL_FOREIGN_TABLES] = "SELECT count(*) FROM sqlite_master "
			       "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
	[SQL_VERSION] = "SELECT max(version) FROM schema_version",
	[SQL_SET_VERSION] = "INSERT INTO schema_version (version) VALUES (?1)",
	[SQL_EVENT_INSERT] = "INSERT INTO events (task_id, at, attempt, type, instance, detail) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[SQL_TASK_INSERT] =
		"INSERT INTO tasks (id, kind, tenant, scope, operation, payload, payload_size, "
		"payload_sha256, payload_version, priority, state, due_at, order_at, created_at, "
		"updated_at, max_attempts, keyed, fingerprint, notify) VALUES ("
		"max(coalesce((SELECT max(id) FROM tasks), 0), "
		"coalesce((SELECT id FROM id_floor WHERE tbl = 'tasks'), 0)) + 1, ?1, ?2, ?3, ?4, ?5, "
		"?6, ?7, ?8, ?9, 'pending', ?10, ?11, ?12, ?12, ?13, ?14, ?15, ?16)",
	[SQL_TASK_GET] = "SELECT " TASK_COLUMNS " FROM tasks WHERE id = ?1",
	[SQL_TASK_STATE] = "SELECT state, attempt, instance, cancel_requested FROM tasks "
			   "WHERE id = ?1",
	[SQL_LIST_ALL] = "SELECT " TASK_COLUMNS " FROM tasks ORDER BY id LIMIT ?3",
	[SQL_LIST_STATE] = "SELECT " TASK_COLUMNS " FROM tasks WHERE state = ?1 "
			   "ORDER BY id LIMIT ?3",
	[SQL_LIST_KIND] = "SELECT " TASK_COLUMNS " FROM tasks WHERE kind = ?2 "
			  "ORDER BY id LIMIT ?3",
	[SQL_LIST_STATE_KIND] = "SELECT " TASK_COLUMNS " FROM tasks "
				"WHERE state = ?1 AND kind = ?2 ORDER BY id LIMIT ?3",
	[SQL_RESULT] = "SELECT has_result, result FROM tasks WHERE id = ?1",
	[SQL_TASK_EXISTS] = "SELECT 1 FROM tasks WHERE id = ?1",
	[SQL_EVENTS] = "SELECT id, task_id, at, attempt, type, instance, detail FROM events "
		       "WHERE task_id = ?1 ORDER BY id",
	/* read-only: is anything claimable? (no write lock for an idle worker's poll) */
	[SQL_CLAIM_PROBE] = "SELECT 1 FROM tasks WHERE state = 'pending' AND due_at <= ?1 "
			    "AND kind IN (SELECT value FROM json_each(?2)) LIMIT 1",
	[SQL_CLAIM] =
		"UPDATE tasks SET state = 'running', attempt = attempt + 1, instance = ?1, "
		"started_at = ?2, updated_at = ?2, cancel_requested = 0, reason = '', "
		"reason_detail = '', uncertain_effect = '' "
		"WHERE id IN (SELECT id FROM tasks WHERE state = 'pending' AND due_at <= ?2 "
		"AND kind IN (SELECT value FROM json_each(?3)) ORDER BY order_at, id LIMIT ?4) "
		"AND state = 'pending' AND due_at <= ?2 "
		/* an instance declared lost (its row reaped) can no longer claim */
		"AND EXISTS (SELECT 1 FROM instances WHERE id = ?1) "
		"RETURNING id, attempt, kind, tenant, scope, operation, payload_version, "
		"max_attempts, payload, order_at, keyed",
	[SQL_ATTEMPT_INSERT] = "INSERT INTO attempts (task_id, attempt, instance, started_at) "
			       "VALUES (?1, ?2, ?3, ?4)",
	[SQL_ATTEMPT_FINISH] = "UPDATE attempts SET finished_at = ?3, outcome = ?4, reason = ?5, "
			       "exit_status = ?6 WHERE task_id = ?1 AND attempt = ?2",
	[SQL_FINISH_SUCCEEDED] =
		"UPDATE tasks SET state = 'succeeded', finished_at = ?4, updated_at = ?4, "
		"outcome = ?5, result = ?6, result_size = ?7, result_sha256 = ?8, "
		"has_result = ?9, last_exit_status = ?10, reason = '', reason_detail = ''"
		OWNED_BY_ATTEMPT,
	/* The priority head start (due_at - order_at) carries over to the new due time. */
	[SQL_FINISH_RETRY] =
		"UPDATE tasks SET state = 'pending', updated_at = ?4, due_at = ?5, "
		"order_at = ?5 - (due_at - order_at), reason = ?6, reason_detail = ?7, "
		"last_exit_status = ?8" OWNED_BY_ATTEMPT,
	[SQL_FINISH_FAILED] =
		"UPDATE tasks SET state = 'failed', finished_at = ?4, updated_at = ?4, "
		"reason = ?5, reason_detail = ?6, last_exit_status = ?7" OWNED_BY_ATTEMPT,
	[SQL_FINISH_INTERRUPTED] =
		"UPDATE tasks SET state = 'interrupted', updated_at = ?4, reason = ?5, "
		"reason_detail = ?6, last_exit_status = ?7" OWNED_BY_ATTEMPT,
	[SQL_FINISH_CANCELLED] =
		"UPDATE tasks SET state = 'cancelled', finished_at = ?4, updated_at = ?4, "
		"reason = ?5, reason_detail = ?6, last_exit_status = ?7" OWNED_BY_ATTEMPT,
	[SQL_CANCEL_PENDING] = "UPDATE tasks SET state = 'cancelled', finished_at = ?2, "
			       "updated_at = ?2 WHERE id = ?1 AND state = 'pending'",
	[SQL_CANCEL_REQUEST] = "UPDATE tasks SET cancel_requested = 1, updated_at = ?2 "
			       "WHERE id = ?1 AND state = 'running' AND attempt = ?3 "
			       "AND cancel_requested = 0",
	[SQL_RESOLVE_RETRY] = "UPDATE tasks SET state = 'pending', due_at = ?2, "
			      "order_at = ?2 - (due_at - order_at), updated_at = ?2, "
			      "reason = '', reason_detail = '' "
			      "WHERE id = ?1 AND state = 'interrupted'",
	[SQL_RESOLVE_END] = "UPDATE tasks SET state = ?3, finished_at = ?2, updated_at = ?2 "
			    "WHERE id = ?1 AND state = 'interrupted'",
	[SQL_CANCEL_REQUESTS] = "SELECT id FROM tasks WHERE state = 'running' AND instance = ?1 "
				"AND cancel_requested = 1 ORDER BY id",
	/* An uncertain effect is never decided by the on_interrupt=retry policy. */
	[SQL_INTERRUPTED_OF_KIND] = "SELECT id FROM tasks WHERE state = 'interrupted' "
				    "AND kind = ?1 AND reason <> 'uncertain-effect' "
				    "ORDER BY id LIMIT ?2",
	[SQL_NEXT_DUE] = "SELECT (SELECT min(due_at) FROM tasks WHERE state = 'pending' "
			 "AND kind IN (SELECT value FROM json_each(?1))), "
			 "EXISTS (SELECT 1 FROM tasks WHERE state = 'running')",
	[SQL_INSTANCE_INSERT] = "INSERT INTO instances (id, host, pid, proc_start, started_at, "
				"heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[SQL_INSTANCE_HEARTBEAT] = "UPDATE instances SET heartbeat_at = ?2 WHERE id = ?1",
	[SQL_INSTANCE_DELETE] = "DELETE FROM instances WHERE id = ?1",
	[SQL_INSTANCE_LIST] = "SELECT id, host, pid, proc_start, started_at, heartbeat_at "
			      "FROM instances ORDER BY started_at, id",
	[SQL_INSTANCE_REAP] = "DELETE FROM instances WHERE id = ?1 AND heartbeat_at = ?2",
	[SQL_INTERRUPT_INSTANCE] = "UPDATE tasks SET state = 'interrupted', reason = ?2, "
				   "reason_detail = '', updated_at = ?3 "
				   "WHERE state = 'running' AND instance = ?1 "
				   "RETURNING id, attempt, instance",
	[SQL_INTERRUPT_ORPHANS] = "UPDATE tasks SET state = 'interrupted', reason = ?1, "
				  "reason_detail = '', updated_at = ?2 "
				  "WHERE state = 'running' "
				  "AND instance NOT IN (SELECT id FROM instances) "
				  "RETURNING id, attempt, instance",
	/* The operation identity is claimed by the unique index, never by a read first. */
	[SQL_OP_INSERT] = "INSERT INTO operations (tenant, scope, kind, key, fingerprint, "
			  "payload_version, task_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7) "
			  "ON CONFLICT (tenant, scope, kind, key) DO NOTHING",
	[SQL_OP_SET_TASK] = "UPDATE operations SET task_id = ?2 WHERE id = ?1 AND task_id = 0",
	[SQL_OP_GET] = "SELECT o.fingerprint, o.task_id, t.state FROM operations o "
		       "LEFT JOIN tasks t ON t.id = o.task_id AND t.keyed = 1 AND t.operation = o.key "
		       "WHERE o.tenant = ?1 AND o.scope = ?2 AND o.kind = ?3 AND o.key = ?4",
	[SQL_OP_FIND] = "SELECT o.kind, o.task_id, t.id IS NOT NULL FROM operations o "
			"LEFT JOIN tasks t ON t.id = o.task_id AND t.keyed = 1 AND t.operation = o.key "
			"WHERE o.tenant = ?1 AND o.scope = ?2 AND o.key = ?3 "
			"AND (?4 IS NULL OR o.kind = ?4) ORDER BY o.kind LIMIT 9",
	[SQL_ATTEMPTS] = "SELECT attempt, instance, started_at, finished_at, outcome, reason, "
			 "exit_status FROM attempts WHERE task_id = ?1 ORDER BY attempt",
	[SQL_TASK_RUNNING] = "SELECT state, attempt, uncertain_effect FROM tasks WHERE id = ?1",
	[SQL_TASK_UNCERTAIN] = "SELECT uncertain_effect FROM tasks" OWNED_BY_ATTEMPT,
	/* The first uncertain effect of an attempt is the one its outcome names. */
	[SQL_SET_UNCERTAIN] = "UPDATE tasks SET uncertain_effect = ?3 WHERE id = ?1 "
			      "AND state = 'running' AND attempt = ?2 AND uncertain_effect = ''",
	[SQL_SET_DETAIL] = "UPDATE tasks SET reason_detail = ?3 WHERE id = ?1 AND attempt = ?2 "
			   "AND state = 'interrupted'",
	[SQL_EFFECT_GET] = "SELECT state, attempt, last_attempt, result FROM effects "
			   "WHERE task_id = ?1 AND name = ?2",
	[SQL_EFFECT_INSERT] = "INSERT INTO effects (task_id, name, state, attempt, last_attempt, "
			      "begun_attempts, begun_at) VALUES (?1, ?2, 'begun', ?3, ?3, 1, ?4)",
	[SQL_EFFECT_AGAIN] = "UPDATE effects SET last_attempt = ?3, "
			     "begun_attempts = begun_attempts + 1 WHERE task_id = ?1 AND name = ?2 "
			     "AND state = 'begun' AND last_attempt < ?3",
	[SQL_EFFECT_DONE] = "UPDATE effects SET state = 'done', result = ?4, done_at = ?5 "
			    "WHERE task_id = ?1 AND name = ?2 AND state = 'begun' AND attempt = ?3",
	/* An effect this attempt began (first), or found uncertain, and never confirmed. */
	[SQL_EFFECT_OPEN] = "SELECT name, attempt FROM effects WHERE task_id = ?1 "
			    "AND state = 'begun' AND (attempt = ?2 OR last_attempt = ?2) "
			    "ORDER BY attempt = ?2 DESC, begun_at, name LIMIT 1",
	[SQL_PRUNE_MARK] = "UPDATE operations SET finished_at = (SELECT t.finished_at "
			   "FROM tasks t WHERE t.id = operations.task_id) "
			   "WHERE task_id IN (SELECT id FROM tasks WHERE state IN ('succeeded', "
			   "'failed', 'cancelled') AND finished_at < ?1)",
	[SQL_PRUNE_FLOOR] = "INSERT INTO id_floor (tbl, id) SELECT 'tasks', coalesce(max(id), 0) "
			    "FROM tasks WHERE state IN ('succeeded', 'failed', 'cancelled') "
			    "AND finished_at < ?1 ON CONFLICT (tbl) DO UPDATE "
			    "SET id = max(id_floor.id, excluded.id)",
	[SQL_PRUNE_TASKS] = "DELETE FROM tasks WHERE state IN ('succeeded', 'failed', "
			    "'cancelled') AND finished_at < ?1",
	[SQL_PRUNE_OPERATIONS] = "DELETE FROM operations WHERE finished_at IS NOT NULL "
				 "AND finished_at < ?1 AND NOT EXISTS (SELECT 1 FROM tasks t "
				 "WHERE t.id = operations.task_id)",
	[SQL_DOCTOR_TWICE] = "SELECT e.task_id, t.operation, e.name, e.state, e.attempt, "
			     "e.begun_attempts FROM effects e JOIN tasks t ON t.id = e.task_id "
			     "WHERE e.begun_attempts >= 2 ORDER BY e.task_id, e.name",
	[SQL_DOCTOR_UNCERTAIN] = "SELECT e.task_id, t.operation, e.name, e.state, e.attempt, "
				 "e.begun_attempts FROM effects e JOIN tasks t ON t.id = e.task_id "
				 "WHERE e.state = 'begun' AND NOT (t.state = 'running' "
				 "AND t.attempt = e.attempt) ORDER BY e.task_id, e.name",
	[SQL_DOCTOR_INTERRUPTED] = "SELECT id, operation, reason, reason_detail FROM tasks "
				   "WHERE state = 'interrupted' ORDER BY id",
	/* outbox (schema v3) */
	[SQL_DLV_QUEUE] =
		"INSERT INTO deliveries (task_id, channel, state, max_attempts, next_at, "
		"created_at, updated_at) SELECT t.id, j.value, 'pending', ?3, ?2, ?2, ?2 "
		"FROM tasks t, json_each(t.notify) j WHERE t.id = ?1 AND t.notify IS NOT NULL "
		"AND json_valid(t.notify) ORDER BY j.key "
		"ON CONFLICT (task_id, channel) DO NOTHING RETURNING id, channel",
	[SQL_DLV_CLAIM] =
		"UPDATE deliveries SET state = 'sending', attempts = attempts + 1, instance = ?1, "
		"updated_at = ?2 "
		"WHERE id IN (SELECT id FROM deliveries WHERE state = 'pending' AND next_at <= ?2 "
		"ORDER BY next_at, id LIMIT ?3) AND state = 'pending' AND next_at <= ?2 "
		"AND EXISTS (SELECT 1 FROM instances WHERE id = ?1) "
		"RETURNING id, task_id, channel, attempts, retry_base",
	[SQL_DLV_TASK] = "SELECT kind, operation, state, outcome, has_result, result_size, "
			 "result_sha256 FROM tasks WHERE id = ?1",
	[SQL_DLV_STATE] = "SELECT task_id, channel, state, attempts, instance FROM deliveries "
			  "WHERE id = ?1",
	/* The fencing condition of a delivery attempt, like OWNED_BY_ATTEMPT for tasks. */
	[SQL_DLV_DELIVERED] =
		"UPDATE deliveries SET state = 'delivered', delivered_at = ?4, updated_at = ?4, "
		"last_error = '' WHERE id = ?1 AND state = 'sending' AND attempts = ?2 "
		"AND instance = ?3 RETURNING task_id, channel",
	[SQL_DLV_RETRY] =
		"UPDATE deliveries SET state = 'pending', updated_at = ?4, last_error = ?5, "
		"max_attempts = ?6, next_at = ?7 WHERE id = ?1 AND state = 'sending' "
		"AND attempts = ?2 AND instance = ?3 RETURNING task_id, channel",
	[SQL_DLV_DEAD] =
		"UPDATE deliveries SET state = 'dead', updated_at = ?4, last_error = ?5, "
		"max_attempts = ?6 WHERE id = ?1 AND state = 'sending' AND attempts = ?2 "
		"AND instance = ?3 RETURNING task_id, channel",
	[SQL_DLV_RECOVER] =
		"UPDATE deliveries SET state = 'pending', next_at = ?3, updated_at = ?3, "
		"last_error = 'outcome unknown: the sending worker stopped' "
		"WHERE state = 'sending' AND (instance NOT IN (SELECT id FROM instances) "
		"OR (instance = ?1 AND id NOT IN (SELECT value FROM json_each(?2)))) "
		"RETURNING id, task_id, channel, attempts, instance",
	[SQL_DLV_NEXT] = "SELECT min(next_at) FROM deliveries WHERE state = 'pending'",
	/* Read-only looks before a write transaction: most polls find nothing to do, and
	 * then take no write lock. The conditional UPDATE still decides. */
	[SQL_DLV_ANY_DUE] = "SELECT EXISTS (SELECT 1 FROM deliveries WHERE state = 'pending' "
			    "AND next_at <= ?1)",
	[SQL_DLV_ANY_SENDING] = "SELECT EXISTS (SELECT 1 FROM deliveries "
				"WHERE state = 'sending')",
	/* The columns of a wq_delivery, in the order read_delivery() reads them. */
	[SQL_DLV_LIST] = "SELECT id, task_id, channel, state, attempts, max_attempts, "
			 "created_at, updated_at, next_at, delivered_at, last_error "
			 "FROM deliveries WHERE ?1 = '' OR state = ?1 ORDER BY id",
	/* A new round: the attempt budget counts again from here. */
	[SQL_DLV_RETRY_DEAD] =
		"UPDATE deliveries SET state = 'pending', next_at = ?2, updated_at = ?2, "
		"retry_base = attempts, max_attempts = attempts + (max_attempts - retry_base) "
		"WHERE id = ?1 AND state = 'dead'",
	[SQL_INBOX_INSERT] =
		"INSERT INTO inbox (recipient, notice_key, delivery_id, task_id, kind, operation, "
		"subject, result_size, result_sha256, created_at) "
		"SELECT ?1, ?2, ?3, t.id, t.kind, t.operation, ?4, "
		"CASE WHEN t.has_result <> 0 THEN t.result_size ELSE -1 END, "
		"CASE WHEN t.has_result <> 0 THEN t.result_sha256 ELSE '' END, ?5 "
		"FROM tasks t WHERE t.id = ?6 ON CONFLICT (notice_key) DO NOTHING",
	[SQL_INBOX_LIST] = "SELECT id, recipient, delivery_id, task_id, kind, operation, subject, "
			   "result_size, result_sha256, created_at, read_at FROM inbox "
			   "WHERE recipient = ?1 AND (?2 = 0 OR read_at = 0) ORDER BY id",
	[SQL_INBOX_READ] = "UPDATE inbox SET read_at = ?2 WHERE id = ?1 AND read_at = 0",
	[SQL_INBOX_EXISTS] = "SELECT 1 FROM inbox WHERE id = ?1",
};

struct wq__store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st[SQL__COUNT];
};

/* ------------------------------------------------------------------ helpers ---- */

/* The store's encoding of wq_state; index = enum value. */
static const char *const state_text[] = {
	NULL, "pending", "running", "succeeded", "failed", "interrupted", "cancelled",
};

static const char *state_str(wq_state st)
{
	if ((int)st < 1 || (size_t)st >= WQ__ARRAY_LEN(state_text))
		return NULL;
	return state_text[st];
}

static wq_state state_parse(const unsigned char *text)
{
	size_t i;

	for (i = 1; text && i < WQ__ARRAY_LEN(state_text); i++)
		if (strcmp((const char *)text, state_text[i]) == 0)
			return (wq_state)i;
	return (wq_state)0;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* Reports a failed SQLite call. Reads the connection's message, so call it before any
 * other statement (a ROLLBACK would overwrite it). */
static wq_rc db_fail(struct wq__store *s, int rc, const char *what, wq_error *err)
{
	const char *msg = sqlite3_errmsg(s->db);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return wq__err(err, WQ_EBUSY, "database %s is busy (%s): %s", s->path, what, msg);
	case SQLITE_NOMEM:
		return wq__err(err, WQ_ENOMEM, "out of memory (database %s, %s)", s->path, what);
	case SQLITE_TOOBIG:
		return wq__err(err, WQ_ETOOBIG, "database %s: %s: %s", s->path, what, msg);
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_CANTOPEN:
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return wq__err(err, WQ_EIO, "database %s: %s: %s", s->path, what, msg);
	default:
		return wq__err(err, WQ_ESTORE, "database %s: %s: %s", s->path, what, msg);
	}
}

static void stmt_done(sqlite3_stmt *st)
{
	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

/* The cached statement `id`, prepared on first use (*out is NULL on failure). Parameters
 * are bound SQLITE_STATIC: every caller resets (and so unbinds) the statement before the
 * bound memory goes. */
static wq_rc stmt(struct wq__store *s, enum sql id, sqlite3_stmt **out, wq_error *err)
{
	int rc;

	*out = NULL;
	if (!s->st[id]) {
		rc = sqlite3_prepare_v3(s->db, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT,
					&s->st[id], NULL);
		if (rc != SQLITE_OK) {
			s->st[id] = NULL;
			return db_fail(s, rc, "prepare", err);
		}
	}
	*out = s->st[id];
	return WQ_OK;
}

static int bind_str(sqlite3_stmt *st, int i, const char *text)
{
	return sqlite3_bind_text(st, i, nz(text), -1, SQLITE_STATIC);
}

/* Steps a statement that returns no rows (or ignores them) and resets it. *changes (if
 * non-NULL) receives the number of rows it changed. */
static wq_rc run(struct wq__store *s, sqlite3_stmt *st, const char *what, int *changes,
		 wq_error *err)
{
	wq_rc rc = WQ_OK;
	int src = sqlite3_step(st);

	if (src == SQLITE_DONE || src == SQLITE_ROW) {
		if (changes)
			*changes = sqlite3_changes(s->db);
	} else {
		rc = db_fail(s, src, what, err);
	}
	stmt_done(st);
	return rc;
}

static wq_rc simple(struct wq__store *s, enum sql id, const char *what, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, id, &st, err);

	return rc ? rc : run(s, st, what, NULL, err);
}

static wq_rc tx_begin_write(struct wq__store *s, wq_error *err)
{
	return simple(s, SQL_BEGIN_WRITE, "begin", err);
}

static wq_rc tx_begin_read(struct wq__store *s, wq_error *err)
{
	return simple(s, SQL_BEGIN_READ, "begin", err);
}

/* Ends an open transaction without keeping anything. SQLite may already have rolled it
 * back on its own (after SQLITE_FULL, SQLITE_IOERR, ...); then there is nothing to do. */
static void tx_rollback(struct wq__store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		simple(s, SQL_ROLLBACK, "rollback", NULL);
}

static wq_rc tx_commit(struct wq__store *s, wq_error *err)
{
	wq_rc rc = simple(s, SQL_COMMIT, "commit", err);

	if (rc)
		tx_rollback(s);
	return rc;
}

static char *xstrdup(const char *src)
{
	size_t n = strlen(src) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, src, n);
	return p;
}

static void col_str(sqlite3_stmt *st, int i, char *dst, size_t dstsz)
{
	const unsigned char *text = sqlite3_column_text(st, i);

	wq__strlcpy(dst, text ? (const char *)text : "", dstsz);
}

/* Grows *arr (of element size `size`) so that it holds at least n + 1 elements. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ------------------------------------------------------------------ event details ---- */

/* Appends one event. `detail` (may be NULL for "{}") is consumed. */
static wq_rc event_insert(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
			  const char *type, const char *instance, json_t *detail, wq_error *err)
{
	sqlite3_stmt *st;
	char *text = NULL;
	wq_rc rc;
	int b;

	rc = stmt(s, SQL_EVENT_INSERT, &st, err);
	if (rc)
		goto out;
	text = detail ? wq__detail_text(detail) : xstrdup("{}");
	if (!text) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (event %s of task %" PRId64 ")", type,
			     task_id);
		goto out;
	}
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int64(st, 2, at);
	b |= sqlite3_bind_int(st, 3, attempt);
	b |= bind_str(st, 4, type);
	b |= bind_str(st, 5, instance);
	b |= bind_str(st, 6, text);
	rc = b ? db_fail(s, sqlite3_errcode(s->db), "bind", err)
	       : run(s, st, "append event", NULL, err);
	stmt_done(st);
out:
	free(text);
	json_decref(detail);
	return rc;
}

/* A JSON array of the kinds, as text for json_each(). *out is malloc'd. */
static wq_rc kinds_json(const char *const *kinds, size_t n, char **out, wq_error *err)
{
	json_t *arr = json_array(), *k;
	size_t i;

	if (!arr)
		goto nomem;
	for (i = 0; i < n; i++) {
		k = json_string(nz(kinds[i]));
		if (!k) {
			json_decref(arr);
			return wq__err(err, WQ_EINVAL, "kind %zu of %zu is not valid UTF-8", i + 1,
				       n);
		}
		if (json_array_append_new(arr, k))
			goto nomem;
	}
	*out = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (!*out)
		return wq__err(err, WQ_ENOMEM, "out of memory (kind list)");
	return WQ_OK;
nomem:
	json_decref(arr);
	return wq__err(err, WQ_ENOMEM, "out of memory (kind list)");
}

/* ------------------------------------------------------------------ open / close ---- */

static void store_free(struct wq__store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < SQL__COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close_v2(s->db);
	free(s->path);
	free(s);
}

static void sq_close(struct wq__store *s)
{
	store_free(s);
}

/* "sqlite:PATH", "file:PATH", "sqlite:///abs/path", "file:///abs/path" or a plain path. */
static const char *url_path(const char *url)
{
	if (strncmp(url, "sqlite:", 7) == 0)
		url += 7;
	else if (strncmp(url, "file:", 5) == 0)
		url += 5;
	else
		return url;
	if (strncmp(url, "///", 3) == 0)
		url += 2;
	return url;
}

static wq_rc pragma(struct wq__store *s, const char *sql, wq_error *err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);

	sqlite3_free(msg);
	return rc == SQLITE_OK ? WQ_OK : db_fail(s, rc, sql, err);
}

static wq_rc set_pragmas(struct wq__store *s, wq_error *err)
{
	const char *sync = getenv("WAKEQ_SQLITE_SYNCHRONOUS");
	const char *sync_sql;
	sqlite3_stmt *st = NULL;
	const unsigned char *mode;
	wq_rc rc;
	int src, waited = 0;

	if (!sync || !*sync || strcasecmp(sync, "FULL") == 0)
		sync_sql = "PRAGMA synchronous = FULL";
	else if (strcasecmp(sync, "NORMAL") == 0)
		sync_sql = "PRAGMA synchronous = NORMAL";
	else if (strcasecmp(sync, "OFF") == 0)
		sync_sql = "PRAGMA synchronous = OFF";
	else
		return wq__err(err, WQ_ECONFIG,
			       "WAKEQ_SQLITE_SYNCHRONOUS=%s is not one of NORMAL, FULL, OFF", sync);

	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	/* Switching a fresh file to WAL needs an exclusive lock, and SQLite reports
	 * SQLITE_BUSY for it without calling the busy handler when another process is doing
	 * the same (concurrent `wakeq init`): wait here, as long as busy_timeout would. */
	src = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	while (src == SQLITE_OK) {
		src = sqlite3_step(st);
		if ((src & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
			break;
		sqlite3_reset(st);
		sqlite3_sleep(5);
		waited += 5;
		src = SQLITE_OK;
	}
	if (src != SQLITE_ROW) {
		rc = (src & 0xff) == SQLITE_NOTADB
			     ? wq__err(err, WQ_ESTORE, "%s is not a SQLite database", s->path)
			     : db_fail(s, src, "set journal_mode", err);
		sqlite3_finalize(st);
		return rc;
	}
	mode = sqlite3_column_text(st, 0);
	if (!mode || (strcmp((const char *)mode, "wal") != 0 &&
		      strcmp((const char *)mode, "memory") != 0)) {
		rc = wq__err(err, WQ_ESTORE,
			     "database %s: cannot use the WAL journal (journal mode stays %s)",
			     s->path, mode ? (const char *)mode : "unknown");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);

	rc = pragma(s, sync_sql, err);
	if (!rc)
		rc = pragma(s, "PRAGMA foreign_keys = ON", err);
	return rc;
}

/* Reads the schema version (0: no schema) and whether the file holds tables of its own. */
static wq_rc schema_read(struct wq__store *s, int *version, int *foreign, wq_error *err)
{
	sqlite3_stmt *st;
	int has, src;
	wq_rc rc;

	rc = stmt(s, SQL_HAS_SCHEMA, &st, err);
	if (rc)
		return rc;
	src = sqlite3_step(st);
	has = src == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	if (src != SQLITE_ROW)
		rc = db_fail(s, src, "read schema", err);
	stmt_done(st);
	if (rc)
		return rc;

	if (!has) {
		*version = 0;
		rc = stmt(s, SQL_FOREIGN_TABLES, &st, err);
		if (rc)
			return rc;
		src = sqlite3_step(st);
		*foreign = src == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
		if (src != SQLITE_ROW)
			rc = db_fail(s, src, "read schema", err);
		stmt_done(st);
		return rc;
	}
	*foreign = 0;
	rc = stmt(s, SQL_VERSION, &st, err);
	if (rc)
		return rc;
	src = sqlite3_step(st);
	*version = src == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	if (src != SQLITE_ROW)
		rc = db_fail(s, src, "read schema version", err);
	stmt_done(st);
	return rc;
}

static wq_rc schema_refuse(struct wq__store *s, int version, int foreign, unsigned flags,
			   wq_error *err)
{
	if (version > WQ_SCHEMA_VERSION)
		return wq__err(err, WQ_ESCHEMA,
			       "database schema version %d is newer than this wakeq (supports %d); "
			       "upgrade wakeq",
			       version, WQ_SCHEMA_VERSION);
	if (version == 0 && foreign)
		return wq__err(err, WQ_ESCHEMA,
			       "database %s is not a wakeq database (it has tables but no "
			       "schema_version)",
			       s->path);
	if (!(flags & WQ_OPEN_MIGRATE) && version == 0)
		return wq__err(err, WQ_ESCHEMA,
			       "database %s is not initialised (run 'wakeq init')", s->path);
	if (!(flags & WQ_OPEN_MIGRATE) && version < WQ_SCHEMA_VERSION)
		return wq__err(err, WQ_ESCHEMA,
			       "database schema version %d is older than this wakeq (supports %d); "
			       "run 'wakeq init' to migrate it",
			       version, WQ_SCHEMA_VERSION);
	return WQ_OK;
}

/* Applies the missing migration steps, each in its own transaction. Another process may
 * migrate at the same time: each step re-reads the version under the write lock. */
static wq_rc migrate(struct wq__store *s, int version, wq_error *err)
{
	sqlite3_stmt *st;
	char *msg = NULL;
	size_t i;
	int foreign, src;
	wq_rc rc;

	for (i = 0; i < WQ__ARRAY_LEN(migrations); i++) {
		if (migrations[i].version <= version)
			continue;
		rc = tx_begin_write(s, err);
		if (rc)
			return rc;
		rc = schema_read(s, &version, &foreign, err);
		if (!rc)
			rc = schema_refuse(s, version, foreign, WQ_OPEN_MIGRATE, err);
		if (rc)
			goto fail;
		if (migrations[i].version <= version) {
			tx_rollback(s);
			continue;
		}
		src = sqlite3_exec(s->db, migrations[i].sql, NULL, NULL, &msg);
		if (src != SQLITE_OK) {
			rc = wq__err(err, (src & 0xff) == SQLITE_BUSY ? WQ_EBUSY : WQ_ESTORE,
				     "database %s: migration to schema version %d failed: %s",
				     s->path, migrations[i].version,
				     msg ? msg : sqlite3_errstr(src));
			sqlite3_free(msg);
			goto fail;
		}
		rc = stmt(s, SQL_SET_VERSION, &st, err);
		if (rc)
			goto fail;
		if (sqlite3_bind_int(st, 1, migrations[i].version) != SQLITE_OK) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		rc = run(s, st, "record schema version", NULL, err);
		if (rc)
			goto fail;
		rc = tx_commit(s, err);
		if (rc)
			return rc;
		version = migrations[i].version;
	}
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_open(const char *url, unsigned flags, struct wq__store **out, wq_error *err)
{
	struct wq__store *s = NULL;
	const char *path;
	struct stat sb;
	int oflags, src, version = 0, foreign = 0;
	wq_rc rc;

	if (!url)
		return wq__err(err, WQ_EINVAL, "no database path given");
	path = url_path(url);
	if (!*path)
		return wq__err(err, WQ_EINVAL, "empty database path in '%s'", url);
	if (!(flags & WQ_OPEN_MIGRATE) && strcmp(path, ":memory:") != 0 &&
	    stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return wq__err(err, WQ_ESCHEMA,
				       "database %s is not initialised (run 'wakeq init')", path);
		return wq__err(err, WQ_EIO, "database %s: %s", path, strerror(errno));
	}

	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = xstrdup(path))) {
		free(s);
		return wq__err(err, WQ_ENOMEM, "out of memory (opening %s)", path);
	}
	/* One handle is used by one thread at a time (wakeq.h): no connection mutex. */
	oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	if (flags & WQ_OPEN_MIGRATE)
		oflags |= SQLITE_OPEN_CREATE;
	src = sqlite3_open_v2(s->path, &s->db, oflags, NULL);
	if (src != SQLITE_OK) {
		if (!s->db)
			rc = wq__err(err, WQ_ENOMEM, "out of memory (opening %s)", path);
		else
			rc = wq__err(err, (src & 0xff) == SQLITE_NOMEM ? WQ_ENOMEM : WQ_EIO,
				     "cannot open database %s: %s", path, sqlite3_errmsg(s->db));
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);

	rc = set_pragmas(s, err);
	if (rc)
		goto fail;
	rc = schema_read(s, &version, &foreign, err);
	if (rc)
		goto fail;
	rc = schema_refuse(s, version, foreign, flags, err);
	if (rc)
		goto fail;
	if (version < WQ_SCHEMA_VERSION) {
		rc = migrate(s, version, err);
		if (rc)
			goto fail;
	}
	*out = s;
	return WQ_OK;
fail:
	store_free(s);
	return rc;
}

/* ------------------------------------------------------------------ reads ---- */

static void read_task(sqlite3_stmt *st, wq_task *t)
{
	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	col_str(st, 1, t->kind, sizeof(t->kind));
	col_str(st, 2, t->tenant, sizeof(t->tenant));
	col_str(st, 3, t->scope, sizeof(t->scope));
	col_str(st, 4, t->operation, sizeof(t->operation));
	t->state = state_parse(sqlite3_column_text(st, 5));
	t->priority = sqlite3_column_int(st, 6);
	t->payload_version = sqlite3_column_int(st, 7);
	t->payload_size = sqlite3_column_int64(st, 8);
	col_str(st, 9, t->payload_sha256, sizeof(t->payload_sha256));
	t->attempts = sqlite3_column_int(st, 10);
	t->max_attempts = sqlite3_column_int(st, 11);
	t->created_at = sqlite3_column_int64(st, 12);
	t->updated_at = sqlite3_column_int64(st, 13);
	t->due_at = sqlite3_column_int64(st, 14);
	t->started_at = sqlite3_column_int64(st, 15);
	t->finished_at = sqlite3_column_int64(st, 16);
	col_str(st, 17, t->instance, sizeof(t->instance));
	col_str(st, 18, t->reason, sizeof(t->reason));
	col_str(st, 19, t->reason_detail, sizeof(t->reason_detail));
	col_str(st, 20, t->outcome, sizeof(t->outcome));
	t->cancel_requested = sqlite3_column_int(st, 21);
	t->has_result = sqlite3_column_int(st, 22);
	t->result_size = sqlite3_column_int64(st, 23);
	col_str(st, 24, t->result_sha256, sizeof(t->result_sha256));
	t->keyed = sqlite3_column_int(st, 25);
	col_str(st, 26, t->fingerprint, sizeof(t->fingerprint));
}

static wq_rc sq_get(struct wq__store *s, int64_t id, wq_task *out, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_TASK_GET, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		read_task(st, out);
	else if (src == SQLITE_DONE)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
	else
		rc = db_fail(s, src, "read task", err);
out:
	stmt_done(st);
	return rc;
}

static wq_rc sq_list(struct wq__store *s, const wq_list_filter *f, wq_task **out, size_t *n,
		     wq_error *err)
{
	static const wq_list_filter none;
	wq_task *arr = NULL;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	enum sql which;
	int b, src, limit;
	wq_rc rc;

	if (!f)
		f = &none;
	if (f->state && !state_str(f->state))
		return wq__err(err, WQ_EINVAL, "list filter: no state %d", (int)f->state);
	if (f->limit < 0)
		return wq__err(err, WQ_EINVAL, "list filter: negative limit %d", f->limit);
	limit = f->limit ? f->limit : LIST_LIMIT_DEFAULT;
	if (f->state)
		which = f->kind ? SQL_LIST_STATE_KIND : SQL_LIST_STATE;
	else
		which = f->kind ? SQL_LIST_KIND : SQL_LIST_ALL;

	rc = stmt(s, which, &st, err);
	if (rc)
		return rc;
	b = f->state ? bind_str(st, 1, state_str(f->state)) : SQLITE_OK;
	b |= f->kind ? bind_str(st, 2, f->kind) : SQLITE_OK;
	b |= sqlite3_bind_int(st, 3, limit);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (listing tasks)");
			goto out;
		}
		read_task(st, &arr[cnt++]);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "list tasks", err);
		goto out;
	}
	stmt_done(st);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
out:
	stmt_done(st);
	free(arr);
	return rc;
}

static wq_rc sq_result(struct wq__store *s, int64_t id, char **body, size_t *len,
		       wq_error *err)
{
	sqlite3_stmt *st;
	const void *blob;
	char *copy;
	size_t size;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_RESULT, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_DONE) {
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
		goto out;
	}
	if (src != SQLITE_ROW) {
		rc = db_fail(s, src, "read result", err);
		goto out;
	}
	if (!sqlite3_column_int(st, 0)) {
		rc = wq__err(err, WQ_ENOTFOUND, "task %" PRId64 " has no stored result", id);
		goto out;
	}
	blob = sqlite3_column_blob(st, 1);
	size = (size_t)sqlite3_column_bytes(st, 1);
	copy = malloc(size + 1);
	if (!copy) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (result of task %" PRId64 ", %zu bytes)",
			     id, size);
		goto out;
	}
	if (size)
		memcpy(copy, blob, size);
	copy[size] = '\0';
	*body = copy;
	*len = size;
out:
	stmt_done(st);
	return rc;
}

/* Within a transaction: WQ_OK when task `id` exists, WQ_ENOTFOUND otherwise. */
static wq_rc task_exists(struct wq__store *s, int64_t id, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_TASK_EXISTS, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
	} else {
		src = sqlite3_step(st);
		if (src == SQLITE_DONE)
			rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
		else if (src != SQLITE_ROW)
			rc = db_fail(s, src, "read task", err);
	}
	stmt_done(st);
	return rc;
}

/* Reads the rows statement `id` returns for one existing task (WQ_ENOTFOUND otherwise),
 * in one read transaction, into a malloc'd array of `size`-byte elements, each zeroed
 * and then filled by fill(). `what` names the rows in messages. *out is NULL when *n is 0. */
typedef void (*row_fill_fn)(sqlite3_stmt *st, void *elem, int64_t task_id);

static wq_rc task_rows(struct wq__store *s, enum sql id, int64_t task_id, size_t size,
		       row_fill_fn fill, const char *what, void **out, size_t *n, wq_error *err)
{
	char *arr = NULL;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	wq_rc rc;
	int src;

	rc = tx_begin_read(s, err);
	if (rc)
		return rc;
	rc = task_exists(s, task_id, err);
	if (rc)
		goto out;
	rc = stmt(s, id, &st, err);
	if (rc)
		goto out;
	if (sqlite3_bind_int64(st, 1, task_id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, size)) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (%s of task %" PRId64 ")", what,
				     task_id);
			goto out;
		}
		memset(arr + cnt * size, 0, size);
		fill(st, arr + cnt * size, task_id);
		cnt++;
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, what, err);
		goto out;
	}
	stmt_done(st);
	st = NULL;
	rc = tx_commit(s, err);
	if (rc)
		goto out;
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
out:
	stmt_done(st);
	tx_rollback(s);
	free(arr);
	return rc;
}

static void fill_event(sqlite3_stmt *st, void *elem, int64_t task_id)
{
	wq_event *e = elem;

	(void)task_id;
	e->id = sqlite3_column_int64(st, 0);
	e->task_id = sqlite3_column_int64(st, 1);
	e->at = sqlite3_column_int64(st, 2);
	e->attempt = sqlite3_column_int(st, 3);
	col_str(st, 4, e->type, sizeof(e->type));
	col_str(st, 5, e->instance, sizeof(e->instance));
	col_str(st, 6, e->detail, sizeof(e->detail));
}

static wq_rc sq_events(struct wq__store *s, int64_t task_id, wq_event **out, size_t *n,
		       wq_error *err)
{
	return task_rows(s, SQL_EVENTS, task_id, sizeof(**out), fill_event, "timeline",
			 (void **)out, n, err);
}

/* Runs a query of one int64 column into a malloc'd array. */
static wq_rc id_query(struct wq__store *s, sqlite3_stmt *st, const char *what, int64_t **ids,
		      size_t *n, wq_error *err)
{
	int64_t *arr = NULL;
	size_t cnt = 0, cap = 0;
	wq_rc rc = WQ_OK;
	int src;

	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (%s)", what);
			goto out;
		}
		arr[cnt++] = sqlite3_column_int64(st, 0);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, what, err);
		goto out;
	}
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*ids = arr;
	*n = cnt;
	arr = NULL;
out:
	stmt_done(st);
	free(arr);
	return rc;
}

static wq_rc sq_cancel_requests(struct wq__store *s, const char *instance, int64_t **ids,
				size_t *n, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, SQL_CANCEL_REQUESTS, &st, err);

	if (rc)
		return rc;
	if (bind_str(st, 1, instance) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return id_query(s, st, "read cancel requests", ids, n, err);
}

static wq_rc sq_interrupted_of_kind(struct wq__store *s, const char *kind, int limit,
				    int64_t **ids, size_t *n, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b;

	if (limit <= 0) {
		*ids = NULL;
		*n = 0;
		return WQ_OK;
	}
	rc = stmt(s, SQL_INTERRUPTED_OF_KIND, &st, err);
	if (rc)
		return rc;
	b = bind_str(st, 1, kind);
	b |= sqlite3_bind_int(st, 2, limit);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return id_query(s, st, "read interrupted tasks", ids, n, err);
}

static wq_rc sq_next_due(struct wq__store *s, const char *const *kinds, size_t nkinds,
			 int64_t *due_out, int *running_out, wq_error *err)
{
	sqlite3_stmt *st = NULL;
	char *kj;
	wq_rc rc;
	int src;

	rc = kinds_json(kinds, nkinds, &kj, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_NEXT_DUE, &st, err);
	if (rc)
		goto out;
	if (bind_str(st, 1, kj) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	src = sqlite3_step(st);
	if (src != SQLITE_ROW) {
		rc = db_fail(s, src, "read next due time", err);
		goto out;
	}
	*due_out = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 0);
	*running_out = sqlite3_column_int(st, 1) != 0;
out:
	stmt_done(st);
	free(kj);
	return rc;
}

static wq_rc sq_instance_list(struct wq__store *s, struct wq__instance **out, size_t *n,
			      wq_error *err)
{
	struct wq__instance *arr = NULL, *in;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_INSTANCE_LIST, &st, err);
	if (rc)
		return rc;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (listing instances)");
			goto out;
		}
		in = &arr[cnt++];
		memset(in, 0, sizeof(*in));
		col_str(st, 0, in->id, sizeof(in->id));
		col_str(st, 1, in->host, sizeof(in->host));
		in->pid = sqlite3_column_int64(st, 2);
		in->proc_start = sqlite3_column_int64(st, 3);
		in->started_at = sqlite3_column_int64(st, 4);
		in->heartbeat_at = sqlite3_column_int64(st, 5);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "list instances", err);
		goto out;
	}
	stmt_done(st);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
out:
	stmt_done(st);
	free(arr);
	return rc;
}

/* ------------------------------------------------------------------ enqueue ---- */

/* The message of an operation conflict: the identity and both fingerprints, never the
 * input. */
static wq_rc op_conflict(const struct wq__new_task *t, const char *stored, wq_error *err)
{
	return wq__err(err, WQ_ECONFLICT,
		       "operation key '%s' (tenant '%s', scope '%s', kind '%s') already exists "
		       "with different input (stored fingerprint %.12s..., this input %.12s...)",
		       t->key, nz(t->tenant), nz(t->scope), t->kind, stored, t->fingerprint);
}

/* Within the enqueue transaction, after the operation insert found the identity taken:
 * a replay (same fingerprint) or a conflict. Ends the transaction either way. */
static wq_rc enqueue_existing(struct wq__store *s, const struct wq__new_task *t,
			      struct wq__enqueued_row *out, wq_error *err)
{
	char stored[WQ_SHA256_HEX] = "";
	sqlite3_stmt *st;
	wq_state state = 0;
	int64_t task_id = 0;
	json_t *d = NULL;
	int b, src, same;
	wq_rc rc;

	rc = stmt(s, SQL_OP_GET, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, t->tenant);
	b |= bind_str(st, 2, t->scope);
	b |= bind_str(st, 3, t->kind);
	b |= bind_str(st, 4, t->key);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		col_str(st, 0, stored, sizeof(stored));
		task_id = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			state = state_parse(sqlite3_column_text(st, 2));
	} else if (src == SQLITE_DONE) {
		/* Impossible under the write lock the insert took. */
		rc = wq__err(err, WQ_ESTORE, "database %s: operation key '%s' neither inserted "
					     "nor found", s->path, t->key);
	} else {
		rc = db_fail(s, src, "read operation", err);
	}
	stmt_done(st);
	if (rc)
		goto fail;

	same = strcmp(stored, t->fingerprint) == 0;
	if (state) {
		if (!(d = wq__jobj(err))) {
			rc = WQ_ENOMEM;
			goto fail;
		}
		if (wq__jset_str(d, "fingerprint", stored, WQ_SHA256_HEX - 1) ||
		    (same ? wq__jset_int(d, "payload_size", (json_int_t)t->payload_len)
			  : wq__jset_str(d, "offered", t->fingerprint, WQ_SHA256_HEX - 1) ||
				    wq__jset_int(d, "offered_payload_version", t->payload_version))) {
			rc = wq__jfail(d, err);
			goto fail;
		}
		rc = event_insert(s, task_id, t->now, 0, same ? "replayed" : "conflict", "", d,
				  err);
		if (rc)
			goto fail;
		rc = tx_commit(s, err);
		if (rc)
			return rc;
	} else {
		tx_rollback(s); /* the task row was pruned: nothing to record it on */
	}
	if (!same)
		return op_conflict(t, stored, err);
	out->id = task_id;
	out->replayed = 1;
	out->state = state;
	wq__strlcpy(out->fingerprint, stored, sizeof(out->fingerprint));
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_enqueue(struct wq__store *s, const struct wq__new_task *t,
			struct wq__enqueued_row *out, wq_error *err)
{
	sqlite3_stmt *st;
	json_t *d;
	int64_t id, op_id = 0;
	wq_rc rc;
	int b, src, changes = 0;

	if (!t->kind || !t->operation || !t->payload_sha256 || !t->fingerprint)
		return wq__err(err, WQ_EINVAL, "enqueue: kind, operation, payload hash and "
					       "fingerprint are required");
	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	if (t->key) {
		rc = stmt(s, SQL_OP_INSERT, &st, err);
		if (rc)
			goto fail;
		b = bind_str(st, 1, t->tenant);
		b |= bind_str(st, 2, t->scope);
		b |= bind_str(st, 3, t->kind);
		b |= bind_str(st, 4, t->key);
		b |= bind_str(st, 5, t->fingerprint);
		b |= sqlite3_bind_int(st, 6, t->payload_version);
		b |= sqlite3_bind_int64(st, 7, t->now);
		if (b) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		rc = run(s, st, "insert operation", &changes, err);
		if (rc)
			goto fail;
		if (changes == 0)
			return enqueue_existing(s, t, out, err);
		op_id = sqlite3_last_insert_rowid(s->db);
	}
	rc = stmt(s, SQL_TASK_INSERT, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, t->kind);
	b |= bind_str(st, 2, t->tenant);
	b |= bind_str(st, 3, t->scope);
	b |= bind_str(st, 4, t->operation);
	b |= sqlite3_bind_text64(st, 5, t->payload ? t->payload : "",
				 t->payload ? t->payload_len : 0, SQLITE_STATIC, SQLITE_UTF8);
	b |= sqlite3_bind_int64(st, 6, (sqlite3_int64)t->payload_len);
	b |= bind_str(st, 7, t->payload_sha256);
	b |= sqlite3_bind_int(st, 8, t->payload_version);
	b |= sqlite3_bind_int(st, 9, t->priority);
	b |= sqlite3_bind_int64(st, 10, t->due_at);
	b |= sqlite3_bind_int64(st, 11, t->order_at);
	b |= sqlite3_bind_int64(st, 12, t->now);
	b |= sqlite3_bind_int(st, 13, t->max_attempts);
	b |= sqlite3_bind_int(st, 14, t->key != NULL);
	b |= bind_str(st, 15, t->fingerprint);
	b |= t->notify ? bind_str(st, 16, t->notify) : sqlite3_bind_null(st, 16);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_CONSTRAINT_UNIQUE)
		rc = wq__err(err, WQ_ECONFLICT, "operation %s already exists", t->operation);
	else if (src != SQLITE_DONE)
		rc = db_fail(s, src, "insert task", err);
	stmt_done(st);
	if (rc)
		goto fail;
	id = sqlite3_last_insert_rowid(s->db);

	if (t->key) {
		rc = stmt(s, SQL_OP_SET_TASK, &st, err);
		if (rc)
			goto fail;
		b = sqlite3_bind_int64(st, 1, op_id);
		b |= sqlite3_bind_int64(st, 2, id);
		if (b) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		rc = run(s, st, "link operation", &changes, err);
		if (!rc && changes != 1)
			rc = wq__err(err, WQ_ESTORE, "database %s: operation '%s' could not be linked "
						     "to task %" PRId64, s->path, t->key, id);
		if (rc)
			goto fail;
	}

	if (!(d = wq__jobj(err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if (wq__jset_str(d, "kind", t->kind, WQ_KIND_MAX) || wq__jset_int(d, "priority", t->priority) ||
	    wq__jset_time(d, "due_at", t->due_at) ||
	    wq__jset_int(d, "payload_size", (json_int_t)t->payload_len) ||
	    wq__jset_str(d, "payload_sha256", t->payload_sha256, WQ_SHA256_HEX - 1) ||
	    wq__jset_int(d, "payload_version", t->payload_version) ||
	    wq__jset_int(d, "max_attempts", t->max_attempts) ||
	    wq__jset_str(d, "fingerprint", t->fingerprint, WQ_SHA256_HEX - 1) ||
	    json_object_set_new(d, "keyed", json_boolean(t->key != NULL))) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, id, t->now, 0, "accepted", "", d, err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	out->id = id;
	out->replayed = 0;
	out->state = WQ_STATE_PENDING;
	wq__strlcpy(out->fingerprint, t->fingerprint, sizeof(out->fingerprint));
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ claim ---- */

struct claim_row {
	struct wq__claimed c;
	int64_t order_at;
};

static int claim_row_cmp(const void *a, const void *b)
{
	const struct claim_row *x = a, *y = b;

	if (x->order_at != y->order_at)
		return x->order_at < y->order_at ? -1 : 1;
	if (x->c.id != y->c.id)
		return x->c.id < y->c.id ? -1 : 1;
	return 0;
}

static wq_rc attempt_insert(struct wq__store *s, int64_t task_id, int attempt,
			    const char *instance, int64_t now, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, SQL_ATTEMPT_INSERT, &st, err);
	int b;

	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int(st, 2, attempt);
	b |= bind_str(st, 3, instance);
	b |= sqlite3_bind_int64(st, 4, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "insert attempt", NULL, err);
}

static wq_rc attempt_finish(struct wq__store *s, int64_t task_id, int attempt, int64_t now,
			    const char *outcome, const char *reason, int exit_status,
			    wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, SQL_ATTEMPT_FINISH, &st, err);
	int b;

	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int(st, 2, attempt);
	b |= sqlite3_bind_int64(st, 3, now);
	b |= bind_str(st, 4, outcome);
	b |= bind_str(st, 5, reason);
	b |= sqlite3_bind_int(st, 6, exit_status);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "record attempt", NULL, err);
}

static void claim_rows_free(struct claim_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		free(rows[i].c.payload);
	free(rows);
}

/* WQ_OK when a due pending task of these kinds exists, WQ_ENOTFOUND when none. A plain
 * read: idle workers polling a shared file never queue on the write lock, and a worker
 * paused between polls holds no lock. The claim itself re-checks everything. */
static wq_rc claimable(struct wq__store *s, int64_t now, const char *kinds_json,
		       wq_error *err)
{
	sqlite3_stmt *st = NULL;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_CLAIM_PROBE, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK || bind_str(st, 2, kinds_json) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		rc = WQ_OK;
	else if (src == SQLITE_DONE)
		rc = WQ_ENOTFOUND;
	else
		rc = db_fail(s, src, "look for claimable tasks", err);
out:
	stmt_done(st);
	return rc;
}

static wq_rc sq_claim(struct wq__store *s, const struct wq__claim_req *req,
		      struct wq__claimed **out, size_t *n, wq_error *err)
{
	struct claim_row *rows = NULL, *r;
	struct wq__claimed *arr = NULL;
	size_t cnt = 0, cap = 0, i, plen;
	sqlite3_stmt *st = NULL;
	const unsigned char *payload;
	char *kj = NULL;
	json_t *d;
	wq_rc rc;
	int b, src;

	if (!req->instance || !*req->instance)
		return wq__err(err, WQ_EINVAL, "claim: no instance given");
	if (req->limit <= 0 || req->nkinds == 0) {
		*out = NULL;
		*n = 0;
		return WQ_OK;
	}
	rc = kinds_json(req->kinds, req->nkinds, &kj, err);
	if (rc)
		return rc;
	rc = claimable(s, req->now, kj, err);
	if (rc != WQ_OK) {
		free(kj);
		if (rc != WQ_ENOTFOUND)
			return rc;
		*out = NULL;
		*n = 0;
		return WQ_OK;
	}
	rc = tx_begin_write(s, err);
	if (rc) {
		free(kj);
		return rc;
	}
	rc = stmt(s, SQL_CLAIM, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, req->instance);
	b |= sqlite3_bind_int64(st, 2, req->now);
	b |= bind_str(st, 3, kj);
	b |= sqlite3_bind_int(st, 4, req->limit);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto fail;
	}
	/* Collect everything first: RETURNING rows are read before the follow-up inserts. */
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&rows, &cap, cnt, sizeof(*rows)))
			goto nomem;
		r = &rows[cnt];
		memset(r, 0, sizeof(*r));
		r->c.id = sqlite3_column_int64(st, 0);
		r->c.attempt = sqlite3_column_int(st, 1);
		col_str(st, 2, r->c.kind, sizeof(r->c.kind));
		col_str(st, 3, r->c.tenant, sizeof(r->c.tenant));
		col_str(st, 4, r->c.scope, sizeof(r->c.scope));
		col_str(st, 5, r->c.operation, sizeof(r->c.operation));
		r->c.payload_version = sqlite3_column_int(st, 6);
		r->c.max_attempts = sqlite3_column_int(st, 7);
		payload = sqlite3_column_text(st, 8);
		plen = (size_t)sqlite3_column_bytes(st, 8);
		r->order_at = sqlite3_column_int64(st, 9);
		r->c.keyed = sqlite3_column_int(st, 10);
		r->c.payload = malloc(plen + 1);
		if (!r->c.payload)
			goto nomem;
		cnt++;
		if (plen)
			memcpy(r->c.payload, payload, plen);
		r->c.payload[plen] = '\0';
		r->c.payload_len = plen;
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "claim tasks", err);
		goto fail;
	}
	stmt_done(st);
	st = NULL;

	for (i = 0; i < cnt; i++) {
		r = &rows[i];
		rc = attempt_insert(s, r->c.id, r->c.attempt, req->instance, req->now, err);
		if (rc)
			goto fail;
		if (!(d = wq__jobj(err))) {
			rc = WQ_ENOMEM;
			goto fail;
		}
		if (wq__jset_attempt(d, r->c.id, r->c.attempt) ||
		    wq__jset_str(d, "instance", req->instance, WQ_NAME_MAX)) {
			rc = wq__jfail(d, err);
			goto fail;
		}
		rc = event_insert(s, r->c.id, req->now, r->c.attempt, "claimed", req->instance,
				  d, err);
		if (rc)
			goto fail;
	}
	/* Allocate before COMMIT: once committed the tasks are running under this instance,
	 * and a failure after that point would strand them. */
	if (cnt) {
		arr = malloc(cnt * sizeof(*arr));
		if (!arr)
			goto nomem;
	}
	rc = tx_commit(s, err);
	if (rc)
		goto fail;

	/* RETURNING order is unspecified. */
	if (cnt > 1)
		qsort(rows, cnt, sizeof(*rows), claim_row_cmp);
	for (i = 0; i < cnt; i++)
		arr[i] = rows[i].c; /* the payload moves over */
	free(rows);
	free(kj);
	*out = arr;
	*n = cnt;
	return WQ_OK;
nomem:
	rc = wq__err(err, WQ_ENOMEM, "out of memory (claiming tasks)");
fail:
	stmt_done(st);
	tx_rollback(s);
	claim_rows_free(rows, cnt);
	free(arr);
	free(kj);
	return rc;
}

/* ------------------------------------------------------------------ open effects ---- */

/* An effect that an attempt began (or found uncertain) and never confirmed. */
struct open_effect {
	char name[WQ_EFFECT_NAME_MAX + 1]; /* "" when none */
	char note[WQ_DETAIL_MAX + 1];      /* "effect X begun, not confirmed" */
};

/* Within a transaction: the open effect of attempt (task_id, attempt), if any. */
static wq_rc open_effect(struct wq__store *s, int64_t task_id, int attempt,
			 struct open_effect *oe, wq_error *err)
{
	sqlite3_stmt *st;
	int b, src, began;
	wq_rc rc;

	memset(oe, 0, sizeof(*oe));
	rc = stmt(s, SQL_EFFECT_OPEN, &st, err);
	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int(st, 2, attempt);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
	} else {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			col_str(st, 0, oe->name, sizeof(oe->name));
			began = sqlite3_column_int(st, 1);
			if (began == attempt)
				snprintf(oe->note, sizeof(oe->note), "effect %s begun, not confirmed",
					 oe->name);
			else
				snprintf(oe->note, sizeof(oe->note),
					 "effect %s uncertain (begun by attempt %" PRId64 ".%d)",
					 oe->name, task_id, began);
		} else if (src != SQLITE_DONE) {
			rc = db_fail(s, src, "read effects", err);
		}
	}
	stmt_done(st);
	return rc;
}

/* `detail` (may be NULL) with the open effect's note appended, when it fits. */
static void detail_with_effect(const char *detail, const struct open_effect *oe, char *buf,
			       size_t bufsz)
{
	if (!detail || !*detail)
		snprintf(buf, bufsz, "%s", oe->note);
	else if (strlen(detail) + 2 + strlen(oe->note) < bufsz)
		snprintf(buf, bufsz, "%s; %s", detail, oe->note);
	else
		snprintf(buf, bufsz, "%s", detail);
}

/* Within a transaction: reason_detail of an attempt just interrupted. */
static wq_rc set_reason_detail(struct wq__store *s, int64_t task_id, int attempt,
			       const char *detail, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, SQL_SET_DETAIL, &st, err);
	int b;

	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int(st, 2, attempt);
	b |= bind_str(st, 3, detail);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "record reason detail", NULL, err);
}

/*
 * Within finish, before the conditional UPDATE: an attempt that found an effect uncertain
 * ends `interrupted` (uncertain-effect, naming it) whatever the handler reported (the
 * default policy of SPEC §7); an interrupted attempt with an open effect names it in
 * reason_detail. *adj is the outcome to record; `detail` holds its reason_detail.
 */
static wq_rc finish_effects(struct wq__store *s, const struct wq__outcome *o,
			    struct wq__outcome *adj, struct open_effect *oe, char *detail,
			    size_t dsz, wq_error *err)
{
	sqlite3_stmt *st;
	char uncertain[WQ_EFFECT_NAME_MAX + 1] = "";
	int b, src;
	wq_rc rc;

	*adj = *o;
	memset(oe, 0, sizeof(*oe));
	rc = stmt(s, SQL_TASK_UNCERTAIN, &st, err);
	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, o->task_id);
	b |= sqlite3_bind_int(st, 2, o->attempt);
	b |= bind_str(st, 3, o->instance);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
	} else {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW)
			col_str(st, 0, uncertain, sizeof(uncertain));
		else if (src != SQLITE_DONE)
			rc = db_fail(s, src, "read task", err);
	}
	stmt_done(st);
	if (rc)
		return rc;
	if (uncertain[0]) {
		adj->kind = WQ__FINISH_INTERRUPTED;
		adj->reason = "uncertain-effect";
		snprintf(detail, dsz, "%s", uncertain);
		adj->reason_detail = detail;
		adj->outcome = NULL;
		adj->result = NULL;
		adj->result_len = 0;
		adj->result_sha256 = NULL;
		wq__strlcpy(oe->name, uncertain, sizeof(oe->name));
		return WQ_OK;
	}
	if (o->kind != WQ__FINISH_INTERRUPTED)
		return WQ_OK;
	rc = open_effect(s, o->task_id, o->attempt, oe, err);
	if (rc || !oe->name[0])
		return rc;
	detail_with_effect(o->reason_detail, oe, detail, dsz);
	adj->reason_detail = detail;
	return WQ_OK;
}

/* ------------------------------------------------------------------ finish ---- */

static const char *finish_name(enum wq__finish_kind k)
{
	switch (k) {
	case WQ__FINISH_SUCCEEDED:
		return "succeeded";
	case WQ__FINISH_RETRY:
		return "retry";
	case WQ__FINISH_FAILED:
		return "failed";
	case WQ__FINISH_INTERRUPTED:
		return "interrupted";
	case WQ__FINISH_CANCELLED:
		return "cancelled";
	}
	return NULL;
}

/* The event that records outcome o. NULL with err set when out of memory. */
static json_t *finish_detail(const struct wq__outcome *o, const char **type, wq_error *err)
{
	json_t *d = wq__jobj(err);
	int bad;

	if (!d)
		return NULL;
	bad = wq__jset_attempt(d, o->task_id, o->attempt);
	switch (o->kind) {
	case WQ__FINISH_SUCCEEDED:
		*type = "succeeded";
		bad |= wq__jset_int(d, "result_size", o->result ? (json_int_t)o->result_len : 0);
		if (o->result)
			bad |= wq__jset_str(d, "result_sha256", o->result_sha256, WQ_SHA256_HEX - 1);
		if (o->outcome && *o->outcome)
			bad |= wq__jset_str(d, "outcome", o->outcome, WQ_REASON_MAX);
		break;
	case WQ__FINISH_RETRY:
		*type = "retry-scheduled";
		bad |= wq__jset_str(d, "reason", o->reason, WQ_REASON_MAX);
		bad |= wq__jset_int(d, "exit_status", o->exit_status);
		bad |= wq__jset_time(d, "retry_at", o->retry_at);
		break;
	case WQ__FINISH_FAILED:
		*type = "failed";
		bad |= wq__jset_str(d, "reason", o->reason, WQ_REASON_MAX);
		bad |= wq__jset_str(d, "reason_detail", o->reason_detail, WQ_DETAIL_MAX);
		bad |= wq__jset_int(d, "exit_status", o->exit_status);
		break;
	case WQ__FINISH_INTERRUPTED:
		*type = "interrupted";
		bad |= wq__jset_str(d, "reason", o->reason, WQ_REASON_MAX);
		bad |= wq__jset_str(d, "reason_detail", o->reason_detail, WQ_DETAIL_MAX);
		bad |= wq__jset_int(d, "signal", o->signal);
		break;
	case WQ__FINISH_CANCELLED:
		*type = "cancelled";
		break;
	}
	if (bad) {
		wq__jfail(d, err);
		return NULL;
	}
	return d;
}

/* The conditional UPDATE found no row owned by this attempt: say so on the timeline. */
static wq_rc finish_stale(struct wq__store *s, const struct wq__outcome *o, wq_error *err)
{
	sqlite3_stmt *st;
	char state[16] = "", owner[WQ_NAME_MAX + 1] = "";
	json_t *d;
	int attempt = 0, src;
	wq_rc rc;

	rc = stmt(s, SQL_TASK_STATE, &st, err);
	if (rc)
		goto fail;
	if (sqlite3_bind_int64(st, 1, o->task_id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		col_str(st, 0, state, sizeof(state));
		attempt = sqlite3_column_int(st, 1);
		col_str(st, 2, owner, sizeof(owner));
	} else if (src == SQLITE_DONE) {
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, o->task_id);
	} else {
		rc = db_fail(s, src, "read task", err);
	}
	stmt_done(st);
	if (rc)
		goto fail;

	if (!(d = wq__jobj(err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if (wq__jset_attempt(d, o->task_id, o->attempt) ||
	    wq__jset_str(d, "instance", o->instance, WQ_NAME_MAX) ||
	    wq__jset_str(d, "outcome", finish_name(o->kind), WQ_REASON_MAX)) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, o->task_id, o->now, o->attempt, "stale-outcome", o->instance, d,
			  err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	if (strcmp(state, "running") == 0 && attempt == o->attempt)
		return wq__err(err, WQ_ESTALE,
			       "task %" PRId64 " attempt %" PRId64 ".%d no longer owns the task "
			       "(it is running under instance %s)",
			       o->task_id, o->task_id, o->attempt, owner);
	return wq__err(err, WQ_ESTALE,
		       "task %" PRId64 " attempt %" PRId64 ".%d no longer owns the task "
		       "(now %s, attempt %d)",
		       o->task_id, o->task_id, o->attempt, state, attempt);
fail:
	tx_rollback(s);
	return rc;
}

/* Within finish(): the deliveries of a succeeded task (outbox section below). */
static wq_rc deliveries_queue(struct wq__store *s, int64_t task_id, int64_t now,
			      wq_error *err);

static wq_rc sq_finish(struct wq__store *s, const struct wq__outcome *o, wq_error *err)
{
	static const enum sql by_kind[] = {
		[WQ__FINISH_SUCCEEDED] = SQL_FINISH_SUCCEEDED,
		[WQ__FINISH_RETRY] = SQL_FINISH_RETRY,
		[WQ__FINISH_FAILED] = SQL_FINISH_FAILED,
		[WQ__FINISH_INTERRUPTED] = SQL_FINISH_INTERRUPTED,
		[WQ__FINISH_CANCELLED] = SQL_FINISH_CANCELLED,
	};
	sqlite3_stmt *st;
	const char *type = NULL;
	struct wq__outcome adj;
	struct open_effect oe;
	char detail[WQ_DETAIL_MAX + 1];
	enum wq__finish_kind reported = o->kind;
	json_t *d;
	wq_rc rc;
	int b, changes = 0;

	if (!finish_name(o->kind))
		return wq__err(err, WQ_EINVAL, "finish: unknown outcome kind %d", (int)o->kind);
	if (!o->instance)
		return wq__err(err, WQ_EINVAL, "finish: no instance given");

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = finish_effects(s, o, &adj, &oe, detail, sizeof(detail), err);
	if (rc)
		goto fail;
	o = &adj;
	rc = stmt(s, by_kind[o->kind], &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, o->task_id);
	b |= sqlite3_bind_int(st, 2, o->attempt);
	b |= bind_str(st, 3, o->instance);
	b |= sqlite3_bind_int64(st, 4, o->now);
	switch (o->kind) {
	case WQ__FINISH_SUCCEEDED:
		b |= bind_str(st, 5, o->outcome);
		if (o->result) {
			b |= sqlite3_bind_blob64(st, 6, o->result, o->result_len, SQLITE_STATIC);
			b |= sqlite3_bind_int64(st, 7, (sqlite3_int64)o->result_len);
			b |= bind_str(st, 8, o->result_sha256);
			b |= sqlite3_bind_int(st, 9, 1);
		} else {
			b |= sqlite3_bind_null(st, 6);
			b |= sqlite3_bind_int64(st, 7, 0);
			b |= bind_str(st, 8, "");
			b |= sqlite3_bind_int(st, 9, 0);
		}
		b |= sqlite3_bind_int(st, 10, o->exit_status);
		break;
	case WQ__FINISH_RETRY:
		b |= sqlite3_bind_int64(st, 5, o->retry_at);
		b |= bind_str(st, 6, o->reason);
		b |= bind_str(st, 7, o->reason_detail);
		b |= sqlite3_bind_int(st, 8, o->exit_status);
		break;
	case WQ__FINISH_FAILED:
	case WQ__FINISH_INTERRUPTED:
	case WQ__FINISH_CANCELLED:
		b |= bind_str(st, 5, o->reason);
		b |= bind_str(st, 6, o->reason_detail);
		b |= sqlite3_bind_int(st, 7, o->exit_status);
		break;
	}
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, "record outcome", &changes, err);
	if (rc)
		goto fail;
	if (changes == 0)
		return finish_stale(s, o, err);

	rc = attempt_finish(s, o->task_id, o->attempt, o->now, finish_name(o->kind), o->reason,
			    o->exit_status, err);
	if (rc)
		goto fail;
	if (!(d = finish_detail(o, &type, err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if ((oe.name[0] && wq__jset_str(d, "effect", oe.name, WQ_EFFECT_NAME_MAX)) ||
	    (reported != o->kind &&
	     wq__jset_str(d, "handler_outcome", finish_name(reported), WQ_REASON_MAX))) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, o->task_id, o->now, o->attempt, type, o->instance, d, err);
	/* SPEC §8: the deliveries in the transaction that stores the result; a discarded
	 * task has nothing to deliver. */
	if (!rc && o->kind == WQ__FINISH_SUCCEEDED &&
	    !(o->outcome && strcmp(o->outcome, "discarded") == 0))
		rc = deliveries_queue(s, o->task_id, o->now, err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (!rc && o->uncertain_out && strcmp(nz(o->reason), "uncertain-effect") == 0)
		wq__strlcpy(o->uncertain_out, oe.name, WQ_EFFECT_NAME_MAX + 1);
	return rc;
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ cancel / resolve ---- */

struct task_state {
	char state[16];
	int attempt;
	char instance[WQ_NAME_MAX + 1];
	int cancel_requested;
};

/* Within a transaction: the current state of task `id`, or WQ_ENOTFOUND. */
static wq_rc task_state(struct wq__store *s, int64_t id, struct task_state *ts,
			wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_TASK_STATE, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
	} else {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			col_str(st, 0, ts->state, sizeof(ts->state));
			ts->attempt = sqlite3_column_int(st, 1);
			col_str(st, 2, ts->instance, sizeof(ts->instance));
			ts->cancel_requested = sqlite3_column_int(st, 3);
		} else if (src == SQLITE_DONE) {
			rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
		} else {
			rc = db_fail(s, src, "read task", err);
		}
	}
	stmt_done(st);
	return rc;
}

/* A conditional UPDATE that must change exactly one row (the state was read just before
 * under the same write lock, so 0 rows means the store is not what we believe). */
static wq_rc transition(struct wq__store *s, sqlite3_stmt *st, int64_t id, const char *from,
			wq_error *err)
{
	int changes = 0;
	wq_rc rc = run(s, st, "update task", &changes, err);

	if (!rc && changes != 1)
		rc = wq__err(err, WQ_ESTATE, "task %" PRId64 " is no longer %s", id, from);
	return rc;
}

static wq_rc sq_cancel(struct wq__store *s, int64_t id, int64_t now, wq_state *state_out,
		       wq_error *err)
{
	struct task_state ts;
	sqlite3_stmt *st;
	wq_state after;
	json_t *d;
	wq_rc rc;
	int b;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = task_state(s, id, &ts, err);
	if (rc)
		goto fail;

	if (strcmp(ts.state, "pending") == 0) {
		rc = stmt(s, SQL_CANCEL_PENDING, &st, err);
		if (rc)
			goto fail;
		b = sqlite3_bind_int64(st, 1, id);
		b |= sqlite3_bind_int64(st, 2, now);
		if (b) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		rc = transition(s, st, id, "pending", err);
		if (rc)
			goto fail;
		rc = event_insert(s, id, now, 0, "cancelled", "", NULL, err);
		if (rc)
			goto fail;
		after = WQ_STATE_CANCELLED;
	} else if (strcmp(ts.state, "running") == 0) {
		after = WQ_STATE_RUNNING;
		if (ts.cancel_requested) {
			/* Already requested: nothing changes, nothing to record. */
			tx_rollback(s);
			*state_out = after;
			return WQ_OK;
		}
		rc = stmt(s, SQL_CANCEL_REQUEST, &st, err);
		if (rc)
			goto fail;
		b = sqlite3_bind_int64(st, 1, id);
		b |= sqlite3_bind_int64(st, 2, now);
		b |= sqlite3_bind_int(st, 3, ts.attempt);
		if (b) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		rc = transition(s, st, id, "running", err);
		if (rc)
			goto fail;
		if (!(d = wq__jobj(err))) {
			rc = WQ_ENOMEM;
			goto fail;
		}
		if (wq__jset_attempt(d, id, ts.attempt)) {
			rc = wq__jfail(d, err);
			goto fail;
		}
		rc = event_insert(s, id, now, ts.attempt, "cancel-requested", ts.instance, d, err);
		if (rc)
			goto fail;
	} else {
		rc = wq__err(err, WQ_ESTATE,
			     "task %" PRId64 " is %s; only a pending or running task can be "
			     "cancelled",
			     id, ts.state);
		goto fail;
	}
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	*state_out = after;
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_resolve(struct wq__store *s, const struct wq__resolve *r, wq_error *err)
{
	struct task_state ts;
	sqlite3_stmt *st;
	const char *decision, *target = NULL;
	json_t *d;
	wq_rc rc;
	int b;

	switch (r->decision) {
	case WQ_RESOLVE_RETRY:
		decision = "retry";
		break;
	case WQ_RESOLVE_SUCCEEDED:
		decision = target = "succeeded";
		break;
	case WQ_RESOLVE_FAILED:
		decision = target = "failed";
		break;
	case WQ_RESOLVE_CANCEL:
		decision = "cancel";
		target = "cancelled";
		break;
	default:
		return wq__err(err, WQ_EINVAL, "resolve: unknown decision %d", (int)r->decision);
	}

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = task_state(s, r->task_id, &ts, err);
	if (rc)
		goto fail;
	if (strcmp(ts.state, "interrupted") != 0) {
		rc = wq__err(err, WQ_ESTATE,
			     "task %" PRId64 " is %s; only an interrupted task can be resolved",
			     r->task_id, ts.state);
		goto fail;
	}
	rc = stmt(s, target ? SQL_RESOLVE_END : SQL_RESOLVE_RETRY, &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, r->task_id);
	b |= sqlite3_bind_int64(st, 2, r->now);
	if (target)
		b |= bind_str(st, 3, target);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = transition(s, st, r->task_id, "interrupted", err);
	if (rc)
		goto fail;

	if (!(d = wq__jobj(err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if (wq__jset_str(d, "decision", decision, WQ_REASON_MAX) ||
	    wq__jset_str(d, "by", r->by ? r->by : "operator", WQ_REASON_MAX) ||
	    (r->note && wq__jset_str(d, "note", r->note, NOTE_MAX))) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, r->task_id, r->now, ts.attempt, "resolved", "", d, err);
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ events ---- */

static wq_rc sq_event(struct wq__store *s, int64_t task_id, int attempt, const char *type,
		      const char *instance, const char *detail, int64_t now, wq_error *err)
{
	sqlite3_stmt *st;
	json_t *parsed;
	wq_rc rc;
	int b, src;

	if (!type || !*type || strlen(type) >= sizeof(((wq_event *)0)->type))
		return wq__err(err, WQ_EINVAL, "event type '%s' is empty or too long", nz(type));
	if (!detail)
		detail = "{}";
	if (strlen(detail) > WQ__DETAIL_MAX)
		return wq__err(err, WQ_EINVAL, "event %s: detail is longer than %zu bytes", type,
			       WQ__DETAIL_MAX);
	parsed = json_loads(detail, 0, NULL);
	b = json_is_object(parsed);
	json_decref(parsed);
	if (!b)
		return wq__err(err, WQ_EINVAL, "event %s: detail is not a JSON object", type);

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_EVENT_INSERT, &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int64(st, 2, now);
	b |= sqlite3_bind_int(st, 3, attempt);
	b |= bind_str(st, 4, type);
	b |= bind_str(st, 5, instance);
	b |= bind_str(st, 6, detail);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_CONSTRAINT_FOREIGNKEY)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, task_id);
	else if (src != SQLITE_DONE)
		rc = db_fail(s, src, "append event", err);
	stmt_done(st);
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ instances ---- */

static wq_rc sq_instance_register(struct wq__store *s, const struct wq__instance *in,
				  wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b, src;

	if (!in->id[0])
		return wq__err(err, WQ_EINVAL, "instance id is empty");
	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_INSTANCE_INSERT, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, in->id);
	b |= bind_str(st, 2, in->host);
	b |= sqlite3_bind_int64(st, 3, in->pid);
	b |= sqlite3_bind_int64(st, 4, in->proc_start);
	b |= sqlite3_bind_int64(st, 5, in->started_at);
	b |= sqlite3_bind_int64(st, 6, in->heartbeat_at);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_CONSTRAINT_PRIMARYKEY || src == SQLITE_CONSTRAINT_UNIQUE)
		rc = wq__err(err, WQ_ECONFLICT, "instance %s is already registered", in->id);
	else if (src != SQLITE_DONE)
		rc = db_fail(s, src, "register instance", err);
	stmt_done(st);
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* Runs a one-statement write on an instance row; WQ_ENOTFOUND when it found no row. */
static wq_rc instance_write(struct wq__store *s, enum sql id, const char *instance,
			    int64_t now, const char *what, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b, changes = 0;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, id, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, instance);
	if (id == SQL_INSTANCE_HEARTBEAT)
		b |= sqlite3_bind_int64(st, 2, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, what, &changes, err);
	if (rc)
		goto fail;
	if (changes == 0) {
		rc = wq__err(err, WQ_ENOTFOUND,
			     "no instance %s (it was declared lost or has stopped)", nz(instance));
		goto fail;
	}
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_instance_heartbeat(struct wq__store *s, const char *id, int64_t now,
				   wq_error *err)
{
	return instance_write(s, SQL_INSTANCE_HEARTBEAT, id, now, "heartbeat", err);
}

static wq_rc sq_instance_unregister(struct wq__store *s, const char *id, wq_error *err)
{
	return instance_write(s, SQL_INSTANCE_DELETE, id, 0, "unregister instance", err);
}

struct interrupted_row {
	int64_t id;
	int attempt;
	char instance[WQ_NAME_MAX + 1];
};

/* Within a transaction: steps an `UPDATE ... RETURNING id, attempt, instance` that moved
 * running tasks to interrupted, then records each one's attempt and `interrupted` event. */
static wq_rc interrupt_rows(struct wq__store *s, sqlite3_stmt *st, const char *reason,
			    int64_t now, int *count, wq_error *err)
{
	struct interrupted_row *rows = NULL, *r;
	size_t cnt = 0, cap = 0, i;
	struct open_effect oe;
	json_t *d;
	wq_rc rc = WQ_OK;
	int src;

	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&rows, &cap, cnt, sizeof(*rows))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (interrupting tasks)");
			goto out;
		}
		r = &rows[cnt++];
		r->id = sqlite3_column_int64(st, 0);
		r->attempt = sqlite3_column_int(st, 1);
		col_str(st, 2, r->instance, sizeof(r->instance));
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "interrupt tasks", err);
		goto out;
	}
	stmt_done(st);
	st = NULL;
	for (i = 0; i < cnt; i++) {
		r = &rows[i];
		rc = attempt_finish(s, r->id, r->attempt, now, "interrupted", reason, -1, err);
		if (!rc)
			rc = open_effect(s, r->id, r->attempt, &oe, err);
		if (!rc && oe.name[0])
			rc = set_reason_detail(s, r->id, r->attempt, oe.note, err);
		if (rc)
			goto out;
		if (!(d = wq__jobj(err))) {
			rc = WQ_ENOMEM;
			goto out;
		}
		if (wq__jset_attempt(d, r->id, r->attempt) ||
		    wq__jset_str(d, "reason", reason, WQ_REASON_MAX) ||
		    (oe.name[0] && (wq__jset_str(d, "reason_detail", oe.note, WQ_DETAIL_MAX) ||
				    wq__jset_str(d, "effect", oe.name, WQ_EFFECT_NAME_MAX)))) {
			rc = wq__jfail(d, err);
			goto out;
		}
		rc = event_insert(s, r->id, now, r->attempt, "interrupted", r->instance, d, err);
		if (rc)
			goto out;
	}
	*count = (int)cnt;
out:
	stmt_done(st);
	free(rows);
	return rc;
}

static wq_rc sq_instance_reap(struct wq__store *s, const char *id, int64_t seen_heartbeat,
			      const char *reason, int64_t now, int *count, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b, changes = 0, n = 0;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_INSTANCE_REAP, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, id);
	b |= sqlite3_bind_int64(st, 2, seen_heartbeat);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, "reap instance", &changes, err);
	if (rc)
		goto fail;
	if (changes == 0) {
		/* It heartbeat meanwhile (or is gone already): alive, or someone else's job. */
		tx_rollback(s);
		*count = 0;
		return WQ_OK;
	}
	rc = stmt(s, SQL_INTERRUPT_INSTANCE, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, id);
	b |= bind_str(st, 2, reason);
	b |= sqlite3_bind_int64(st, 3, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = interrupt_rows(s, st, reason, now, &n, err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	*count = n;
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_reap_orphans(struct wq__store *s, const char *reason, int64_t now,
			     int *count, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b, n = 0;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_INTERRUPT_ORPHANS, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, reason);
	b |= sqlite3_bind_int64(st, 2, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = interrupt_rows(s, st, reason, now, &n, err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	*count = n;
	return WQ_OK;
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------- operations, effects, prune, doctor ---- */

static wq_rc sq_operation_find(struct wq__store *s, const char *tenant, const char *scope,
			       const char *kind, const char *key, int64_t *task_id,
			       wq_error *err)
{
	char kinds[160] = "", k[WQ_KIND_MAX + 1];
	sqlite3_stmt *st;
	int64_t id = 0;
	int b, src, rows = 0, exists = 0;
	wq_rc rc;

	rc = stmt(s, SQL_OP_FIND, &st, err);
	if (rc)
		return rc;
	b = bind_str(st, 1, tenant);
	b |= bind_str(st, 2, scope);
	b |= bind_str(st, 3, key);
	b |= kind ? bind_str(st, 4, kind) : sqlite3_bind_null(st, 4);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		col_str(st, 0, k, sizeof(k));
		if (strlen(kinds) + strlen(k) + 3 < sizeof(kinds))
			snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s",
				 rows ? ", " : "", k);
		id = sqlite3_column_int64(st, 1);
		exists = sqlite3_column_int(st, 2);
		rows++;
	}
	if (src != SQLITE_DONE)
		rc = db_fail(s, src, "find operation", err);
	stmt_done(st);
	if (rc)
		return rc;
	if (rows == 0)
		return wq__err(err, WQ_ENOTFOUND,
			       "no operation with key '%s' (tenant '%s', scope '%s'%s%s%s)", key,
			       nz(tenant), nz(scope), kind ? ", kind '" : "", kind ? kind : "",
			       kind ? "'" : "");
	if (rows > 1)
		return wq__err(err, WQ_EINVAL,
			       "operation key '%s' (tenant '%s', scope '%s') exists for several "
			       "kinds (%s): name the kind",
			       key, nz(tenant), nz(scope), kinds);
	if (!exists)
		return wq__err(err, WQ_ENOTFOUND,
			       "operation key '%s' (tenant '%s', scope '%s', kind '%s') was task "
			       "%" PRId64 ", whose row was pruned; the operation record remains "
			       "until its retention ends",
			       key, nz(tenant), nz(scope), kinds, id);
	*task_id = id;
	return WQ_OK;
}

static void fill_attempt(sqlite3_stmt *st, void *elem, int64_t task_id)
{
	wq_attempt *a = elem;

	a->task_id = task_id;
	a->attempt = sqlite3_column_int(st, 0);
	col_str(st, 1, a->instance, sizeof(a->instance));
	a->started_at = sqlite3_column_int64(st, 2);
	a->finished_at = sqlite3_column_int64(st, 3);
	col_str(st, 4, a->outcome, sizeof(a->outcome));
	col_str(st, 5, a->reason, sizeof(a->reason));
	a->exit_status = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6);
}

static wq_rc sq_attempts(struct wq__store *s, int64_t task_id, wq_attempt **out, size_t *n,
			 wq_error *err)
{
	return task_rows(s, SQL_ATTEMPTS, task_id, sizeof(**out), fill_attempt, "attempts",
			 (void **)out, n, err);
}

/* Within a write transaction: the effect journal's fence. WQ_OK when task_id is running
 * with `attempt` (its uncertain effect, if any, in uncertain[]); WQ_ESTALE or
 * WQ_ENOTFOUND otherwise. */
static wq_rc effect_fence(struct wq__store *s, int64_t task_id, int attempt,
			  char uncertain[WQ_EFFECT_NAME_MAX + 1], wq_error *err)
{
	char state[16] = "";
	sqlite3_stmt *st;
	int src, current = 0;
	wq_rc rc;

	rc = stmt(s, SQL_TASK_RUNNING, &st, err);
	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, task_id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
	} else {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			col_str(st, 0, state, sizeof(state));
			current = sqlite3_column_int(st, 1);
			col_str(st, 2, uncertain, WQ_EFFECT_NAME_MAX + 1);
		} else if (src == SQLITE_DONE) {
			rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, task_id);
		} else {
			rc = db_fail(s, src, "read task", err);
		}
	}
	stmt_done(st);
	if (!rc && (strcmp(state, "running") != 0 || current != attempt))
		rc = wq__err(err, WQ_ESTALE,
			     "attempt %" PRId64 ".%d no longer owns task %" PRId64 " (now %s, "
			     "attempt %d)",
			     task_id, attempt, task_id, state, current);
	return rc;
}

struct effect_row {
	int found;
	char state[16];
	int attempt, last_attempt;
	char *result; /* malloc'd or NULL */
};

/* Within a transaction: the journal entry (task_id, name). */
static wq_rc effect_get(struct wq__store *s, int64_t task_id, const char *name,
			struct effect_row *e, wq_error *err)
{
	const unsigned char *text;
	sqlite3_stmt *st;
	int b, src;
	wq_rc rc;

	memset(e, 0, sizeof(*e));
	rc = stmt(s, SQL_EFFECT_GET, &st, err);
	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= bind_str(st, 2, name);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		e->found = 1;
		col_str(st, 0, e->state, sizeof(e->state));
		e->attempt = sqlite3_column_int(st, 1);
		e->last_attempt = sqlite3_column_int(st, 2);
		text = sqlite3_column_text(st, 3);
		if (text && !(e->result = xstrdup((const char *)text)))
			rc = wq__err(err, WQ_ENOMEM, "out of memory (effect %s)", name);
	} else if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "read effect", err);
	}
	stmt_done(st);
	return rc;
}

/* Runs an effect write statement with (task_id, name, attempt[, now]) bound. */
static wq_rc effect_write(struct wq__store *s, enum sql id, int64_t task_id, const char *name,
			  int attempt, int64_t now, int *changes, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, id, &st, err);
	int b;

	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= id == SQL_SET_UNCERTAIN ? sqlite3_bind_int(st, 2, attempt) | bind_str(st, 3, name)
				     : bind_str(st, 2, name) | sqlite3_bind_int(st, 3, attempt);
	if (id == SQL_EFFECT_INSERT)
		b |= sqlite3_bind_int64(st, 4, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "record effect", changes, err);
}

/* An effect event: attempt id, name, and `key` naming attempt `other` (when > 0). */
static wq_rc effect_event(struct wq__store *s, int64_t task_id, int attempt, const char *type,
			  const char *name, const char *key, int other, json_t *extra,
			  int64_t now, wq_error *err)
{
	json_t *d = extra ? extra : wq__jobj(err);

	if (!d)
		return WQ_ENOMEM;
	if (wq__jset_attempt(d, task_id, attempt) || wq__jset_str(d, "name", name, WQ_EFFECT_NAME_MAX))
		return wq__jfail(d, err);
	if (key && other > 0) {
		char id[48];

		snprintf(id, sizeof(id), "%" PRId64 ".%d", task_id, other);
		if (wq__jset_str(d, key, id, sizeof(id)))
			return wq__jfail(d, err);
	}
	return event_insert(s, task_id, now, attempt, type, "", d, err);
}

static wq_rc sq_effect_begin(struct wq__store *s, int64_t task_id, int attempt,
			     const char *name, int64_t now, wq_effect_status *status,
			     char **result, wq_error *err)
{
	char uncertain[WQ_EFFECT_NAME_MAX + 1] = "";
	struct effect_row e = {0};
	wq_effect_status st = WQ_EFFECT_NEW;
	int changes = 0;
	wq_rc rc;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = effect_fence(s, task_id, attempt, uncertain, err);
	if (!rc)
		rc = effect_get(s, task_id, name, &e, err);
	if (rc)
		goto fail;
	if (!e.found) {
		st = WQ_EFFECT_NEW;
		rc = effect_write(s, SQL_EFFECT_INSERT, task_id, name, attempt, now, NULL, err);
		if (!rc)
			rc = effect_event(s, task_id, attempt, "effect-begun", name, NULL, 0, NULL,
					  now, err);
	} else if (strcmp(e.state, "done") == 0) {
		st = WQ_EFFECT_DONE;
		rc = effect_event(s, task_id, attempt, "effect-skipped", name, "done_in", e.attempt,
				  NULL, now, err);
	} else if (e.attempt == attempt) {
		st = WQ_EFFECT_NEW; /* begun again by the attempt that began it */
	} else if (e.attempt > attempt) {
		rc = wq__err(err, WQ_ESTATE, "effect '%s' of task %" PRId64 " was begun by a later "
					     "attempt (%d) than %d",
			     name, task_id, e.attempt, attempt);
	} else {
		/* Begun by an earlier attempt that never confirmed it: nobody knows whether it
		 * happened. Marked once per attempt. */
		st = WQ_EFFECT_UNCERTAIN;
		rc = effect_write(s, SQL_EFFECT_AGAIN, task_id, name, attempt, now, &changes, err);
		if (!rc && changes)
			rc = effect_write(s, SQL_SET_UNCERTAIN, task_id, name, attempt, now, NULL,
					  err);
		if (!rc && changes)
			rc = effect_event(s, task_id, attempt, "effect-uncertain", name, "begun_in",
					  e.attempt, NULL, now, err);
	}
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		goto out;
	*status = st;
	if (result) {
		*result = e.result;
		e.result = NULL;
	}
	goto out;
fail:
	tx_rollback(s);
out:
	free(e.result);
	return rc;
}

static wq_rc sq_effect_done(struct wq__store *s, int64_t task_id, int attempt,
			    const char *name, const char *result, int64_t now, wq_error *err)
{
	char uncertain[WQ_EFFECT_NAME_MAX + 1] = "", sha[WQ_SHA256_HEX];
	struct effect_row e = {0};
	sqlite3_stmt *st;
	json_t *d;
	int b, changes = 0;
	wq_rc rc;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = effect_fence(s, task_id, attempt, uncertain, err);
	if (rc)
		goto fail;
	rc = stmt(s, SQL_EFFECT_DONE, &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= bind_str(st, 2, name);
	b |= sqlite3_bind_int(st, 3, attempt);
	b |= result ? bind_str(st, 4, result) : sqlite3_bind_null(st, 4);
	b |= sqlite3_bind_int64(st, 5, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, "confirm effect", &changes, err);
	if (rc)
		goto fail;
	if (changes == 0) {
		rc = effect_get(s, task_id, name, &e, err);
		if (rc)
			goto fail;
		if (!e.found)
			rc = wq__err(err, WQ_ESTATE,
				     "effect '%s' was not begun in attempt %" PRId64 ".%d (begin it "
				     "first)",
				     name, task_id, attempt);
		else if (strcmp(e.state, "done") == 0 && e.attempt == attempt &&
			 strcmp(e.result ? e.result : "", result ? result : "") == 0)
			rc = WQ_OK; /* confirmed twice with the same result: nothing to do */
		else if (strcmp(e.state, "done") == 0)
			rc = wq__err(err, WQ_ESTATE,
				     "effect '%s' of task %" PRId64 " is already done (by attempt "
				     "%" PRId64 ".%d)",
				     name, task_id, task_id, e.attempt);
		else
			rc = wq__err(err, WQ_ESTATE,
				     "effect '%s' is uncertain: begun by attempt %" PRId64 ".%d and "
				     "never confirmed; attempt %" PRId64 ".%d cannot confirm it",
				     name, task_id, e.attempt, task_id, attempt);
		free(e.result);
		tx_rollback(s);
		return rc;
	}
	if (!(d = wq__jobj(err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	wq__sha256_hex(result ? result : "", result ? strlen(result) : 0, sha);
	if (wq__jset_int(d, "result_size", result ? (json_int_t)strlen(result) : 0) ||
	    (result && wq__jset_str(d, "result_sha256", sha, WQ_SHA256_HEX - 1))) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = effect_event(s, task_id, attempt, "effect-done", name, NULL, 0, d, now, err);
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* Runs a prune statement with one time bound; *changes receives its row count. */
static wq_rc prune_step(struct wq__store *s, enum sql id, int64_t cutoff, int *changes,
			wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, id, &st, err);

	if (rc)
		return rc;
	if (sqlite3_bind_int64(st, 1, cutoff) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "prune", changes, err);
}

static wq_rc sq_prune(struct wq__store *s, int64_t task_cutoff, int64_t operation_cutoff,
		      wq_prune_counts *out, wq_error *err)
{
	int tasks = 0, ops = 0;
	wq_rc rc;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	/* Operation retention counts from the task's completion, kept on the operation. */
	rc = prune_step(s, SQL_PRUNE_MARK, task_cutoff, NULL, err);
	if (!rc)
		rc = prune_step(s, SQL_PRUNE_FLOOR, task_cutoff, NULL, err);
	if (!rc)
		rc = prune_step(s, SQL_PRUNE_TASKS, task_cutoff, &tasks, err);
	if (!rc)
		rc = prune_step(s, SQL_PRUNE_OPERATIONS, operation_cutoff, &ops, err);
	if (!rc)
		rc = tx_commit(s, err);
	if (rc) {
		tx_rollback(s);
		return rc;
	}
	out->tasks = tasks;
	out->operations = ops;
	return WQ_OK;
}

/* Appends the rows of one doctor query to *arr. */
static wq_rc doctor_rows(struct wq__store *s, enum sql id, enum wq__doctor_kind kind,
			 struct wq__doctor_row **arr, size_t *cnt, size_t *cap, wq_error *err)
{
	struct wq__doctor_row *r;
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, id, &st, err);
	if (rc)
		return rc;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)arr, cap, *cnt, sizeof(**arr))) {
			stmt_done(st);
			return wq__err(err, WQ_ENOMEM, "out of memory (doctor)");
		}
		r = &(*arr)[(*cnt)++];
		memset(r, 0, sizeof(*r));
		r->kind = kind;
		r->task_id = sqlite3_column_int64(st, 0);
		col_str(st, 1, r->operation, sizeof(r->operation));
		if (kind == WQ__DOCTOR_INTERRUPTED) {
			col_str(st, 2, r->reason, sizeof(r->reason));
			col_str(st, 3, r->reason_detail, sizeof(r->reason_detail));
		} else {
			col_str(st, 2, r->effect, sizeof(r->effect));
			col_str(st, 3, r->effect_state, sizeof(r->effect_state));
			r->attempt = sqlite3_column_int(st, 4);
			r->begun_attempts = sqlite3_column_int(st, 5);
		}
	}
	rc = src == SQLITE_DONE ? WQ_OK : db_fail(s, src, "doctor", err);
	stmt_done(st);
	return rc;
}

static wq_rc sq_doctor(struct wq__store *s, struct wq__doctor_row **out, size_t *n,
		       wq_error *err)
{
	struct wq__doctor_row *arr = NULL;
	size_t cnt = 0, cap = 0;
	wq_rc rc;

	rc = tx_begin_read(s, err);
	if (rc)
		return rc;
	rc = doctor_rows(s, SQL_DOCTOR_TWICE, WQ__DOCTOR_EFFECT_TWICE, &arr, &cnt, &cap, err);
	if (!rc)
		rc = doctor_rows(s, SQL_DOCTOR_UNCERTAIN, WQ__DOCTOR_UNCERTAIN, &arr, &cnt, &cap,
				 err);
	if (!rc)
		rc = doctor_rows(s, SQL_DOCTOR_INTERRUPTED, WQ__DOCTOR_INTERRUPTED, &arr, &cnt,
				 &cap, err);
	if (!rc)
		rc = tx_commit(s, err);
	if (rc) {
		tx_rollback(s);
		free(arr);
		return rc;
	}
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
}

/* ------------------------------------------------------------------ outbox ---- */

/* The store's encoding of wq_delivery_state; index = enum value. */
static const char *const delivery_state_text[] = {
	NULL, "pending", "sending", "delivered", "dead",
};

static wq_delivery_state delivery_state_parse(const unsigned char *text)
{
	size_t i;

	for (i = 1; text && i < WQ__ARRAY_LEN(delivery_state_text); i++)
		if (strcmp((const char *)text, delivery_state_text[i]) == 0)
			return (wq_delivery_state)i;
	return (wq_delivery_state)0;
}

struct delivery_row {
	int64_t id, task_id;
	char channel[WQ_NAME_MAX + 1];
	int attempts;
	char instance[WQ_NAME_MAX + 1];
};

static int delivery_row_cmp(const void *a, const void *b)
{
	const struct delivery_row *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int delivery_claimed_cmp(const void *a, const void *b)
{
	const struct wq__delivery_claimed *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* A delivery event's detail: delivery_id and channel, plus what the caller adds. NULL
 * with err set when out of memory. */
static json_t *delivery_detail(int64_t id, const char *channel, wq_error *err)
{
	json_t *d = wq__jobj(err);

	if (d && (wq__jset_int(d, "delivery_id", id) || wq__jset_str(d, "channel", channel, WQ_NAME_MAX))) {
		wq__jfail(d, err);
		return NULL;
	}
	return d;
}

/* Within finish() of a succeeded task: one pending delivery per notify channel, due now,
 * and a `delivery-queued` event each. */
static wq_rc deliveries_queue(struct wq__store *s, int64_t task_id, int64_t now,
			      wq_error *err)
{
	struct delivery_row *rows = NULL;
	size_t cnt = 0, cap = 0, i;
	sqlite3_stmt *st;
	json_t *d;
	wq_rc rc;
	int b, src;

	rc = stmt(s, SQL_DLV_QUEUE, &st, err);
	if (rc)
		return rc;
	b = sqlite3_bind_int64(st, 1, task_id);
	b |= sqlite3_bind_int64(st, 2, now);
	b |= sqlite3_bind_int(st, 3, WQ__DELIVERY_MAX_ATTEMPTS);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&rows, &cap, cnt, sizeof(*rows))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (queueing deliveries)");
			goto out;
		}
		memset(&rows[cnt], 0, sizeof(rows[cnt]));
		rows[cnt].id = sqlite3_column_int64(st, 0);
		col_str(st, 1, rows[cnt].channel, sizeof(rows[cnt].channel));
		cnt++;
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "queue deliveries", err);
		goto out;
	}
	stmt_done(st);
	st = NULL;
	if (cnt > 1)
		qsort(rows, cnt, sizeof(*rows), delivery_row_cmp);
	for (i = 0; i < cnt && !rc; i++) {
		if (!(d = delivery_detail(rows[i].id, rows[i].channel, err)))
			rc = WQ_ENOMEM;
		else
			rc = event_insert(s, task_id, now, 0, "delivery-queued", "", d, err);
	}
out:
	stmt_done(st);
	free(rows);
	return rc;
}

/* Outside a transaction: *yes = 1 when the EXISTS query `id` (?1 = now) finds a row. */
static wq_rc any_delivery(struct wq__store *s, enum sql id, int64_t now, int *yes,
			  wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, id, &st, err);
	if (rc)
		return rc;
	if (id == SQL_DLV_ANY_DUE && sqlite3_bind_int64(st, 1, now) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*yes = sqlite3_column_int(st, 0) != 0;
	else
		rc = db_fail(s, src, "read deliveries", err);
	stmt_done(st);
	return rc;
}

static wq_rc sq_delivery_claim(struct wq__store *s, const char *instance, int limit,
			       int64_t now, struct wq__delivery_claimed **out, size_t *n,
			       wq_error *err)
{
	struct wq__delivery_claimed *arr = NULL, *c;
	size_t cnt = 0, cap = 0, i;
	sqlite3_stmt *st = NULL;
	json_t *d;
	wq_rc rc;
	int b, src, due = 0;

	if (!instance || !*instance)
		return wq__err(err, WQ_EINVAL, "delivery claim: no instance given");
	if (limit > 0) {
		rc = any_delivery(s, SQL_DLV_ANY_DUE, now, &due, err);
		if (rc)
			return rc;
	}
	if (limit <= 0 || !due) {
		*out = NULL;
		*n = 0;
		return WQ_OK;
	}
	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_DLV_CLAIM, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, instance);
	b |= sqlite3_bind_int64(st, 2, now);
	b |= sqlite3_bind_int(st, 3, limit);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto fail;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (claiming deliveries)");
			goto fail;
		}
		c = &arr[cnt++];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		c->task_id = sqlite3_column_int64(st, 1);
		col_str(st, 2, c->channel, sizeof(c->channel));
		c->attempts = sqlite3_column_int(st, 3);
		c->retry_base = sqlite3_column_int(st, 4);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "claim deliveries", err);
		goto fail;
	}
	stmt_done(st);
	st = NULL;

	for (i = 0; i < cnt; i++) {
		c = &arr[i];
		rc = stmt(s, SQL_DLV_TASK, &st, err);
		if (rc)
			goto fail;
		if (sqlite3_bind_int64(st, 1, c->task_id) != SQLITE_OK) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			goto fail;
		}
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			col_str(st, 0, c->kind, sizeof(c->kind));
			col_str(st, 1, c->operation, sizeof(c->operation));
			c->task_state = state_parse(sqlite3_column_text(st, 2));
			col_str(st, 3, c->outcome, sizeof(c->outcome));
			c->has_result = sqlite3_column_int(st, 4);
			c->result_size = sqlite3_column_int64(st, 5);
			col_str(st, 6, c->result_sha256, sizeof(c->result_sha256));
		} else if (src != SQLITE_DONE) {
			rc = db_fail(s, src, "read task of a delivery", err);
			goto fail;
		}
		stmt_done(st);
		st = NULL;
		if (!(d = delivery_detail(c->id, c->channel, err))) {
			rc = WQ_ENOMEM;
			goto fail;
		}
		if (wq__jset_int(d, "attempt", c->attempts) ||
		    wq__jset_str(d, "instance", instance, WQ_NAME_MAX)) {
			rc = wq__jfail(d, err);
			goto fail;
		}
		rc = event_insert(s, c->task_id, now, 0, "delivery-attempt", instance, d, err);
		if (rc)
			goto fail;
	}
	rc = tx_commit(s, err);
	if (rc)
		goto fail;
	if (cnt > 1) /* RETURNING order is unspecified */
		qsort(arr, cnt, sizeof(*arr), delivery_claimed_cmp);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
fail:
	stmt_done(st);
	tx_rollback(s);
	free(arr);
	return rc;
}

/* The conditional update of delivery_finish found no row sending under this attempt.
 * Within the transaction: WQ_OK (and nothing written) when the row shows this very
 * outcome recorded, else a `delivery-stale` event and WQ_ESTALE. */
static wq_rc delivery_stale(struct wq__store *s, const struct wq__delivery_outcome *o,
			    const char *want, wq_error *err)
{
	char state[16] = "", inst[WQ_NAME_MAX + 1] = "", channel[WQ_NAME_MAX + 1] = "";
	int64_t task_id = 0;
	int attempts = 0, src;
	sqlite3_stmt *st;
	json_t *d;
	wq_rc rc;

	rc = stmt(s, SQL_DLV_STATE, &st, err);
	if (rc)
		goto fail;
	if (sqlite3_bind_int64(st, 1, o->id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		task_id = sqlite3_column_int64(st, 0);
		col_str(st, 1, channel, sizeof(channel));
		col_str(st, 2, state, sizeof(state));
		attempts = sqlite3_column_int(st, 3);
		col_str(st, 4, inst, sizeof(inst));
	} else if (src == SQLITE_DONE) {
		rc = wq__err(err, WQ_ENOTFOUND, "no delivery %" PRId64, o->id);
	} else {
		rc = db_fail(s, src, "read delivery", err);
	}
	stmt_done(st);
	if (rc)
		goto fail;
	if (strcmp(state, want) == 0 && attempts == o->attempts && strcmp(inst, o->instance) == 0) {
		tx_rollback(s);
		return WQ_OK;
	}
	if (!(d = delivery_detail(o->id, channel, err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if (wq__jset_int(d, "attempt", o->attempts) ||
	    wq__jset_str(d, "instance", o->instance, WQ_NAME_MAX) ||
	    wq__jset_str(d, "outcome", want, WQ_REASON_MAX)) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, task_id, o->now, 0, "delivery-stale", o->instance, d, err);
	if (rc)
		goto fail;
	rc = tx_commit(s, err);
	if (rc)
		return rc;
	return wq__err(err, WQ_ESTALE,
		       "delivery %" PRId64 " attempt %d no longer owns the delivery (now %s, "
		       "attempt %d)",
		       o->id, o->attempts, state, attempts);
fail:
	tx_rollback(s);
	return rc;
}

/* Within a transaction: one inbox notification, unless its key is there already. */
static wq_rc inbox_insert(struct wq__store *s, const char *recipient, const char *key,
			  int64_t delivery_id, int64_t task_id, const char *subject,
			  int64_t now, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc = stmt(s, SQL_INBOX_INSERT, &st, err);
	int b;

	if (rc)
		return rc;
	b = bind_str(st, 1, recipient);
	b |= bind_str(st, 2, key);
	b |= sqlite3_bind_int64(st, 3, delivery_id);
	b |= bind_str(st, 4, subject);
	b |= sqlite3_bind_int64(st, 5, now);
	b |= sqlite3_bind_int64(st, 6, task_id);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		return rc;
	}
	return run(s, st, "write the inbox", NULL, err);
}

static wq_rc sq_delivery_finish(struct wq__store *s, const struct wq__delivery_outcome *o,
				wq_error *err)
{
	static const char *const want[] = {
		[WQ__DELIVERY_DELIVERED] = "delivered",
		[WQ__DELIVERY_RETRY] = "pending",
		[WQ__DELIVERY_DEAD] = "dead",
	};
	char channel[WQ_NAME_MAX + 1] = "", key[64];
	int64_t task_id = 0;
	sqlite3_stmt *st;
	const char *type;
	json_t *d;
	wq_rc rc;
	int b, src, found = 0;

	if (o->kind < WQ__DELIVERY_DELIVERED || o->kind > WQ__DELIVERY_DEAD)
		return wq__err(err, WQ_EINVAL, "delivery finish: unknown outcome %d", (int)o->kind);
	if (!o->instance)
		return wq__err(err, WQ_EINVAL, "delivery finish: no instance given");
	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, o->kind == WQ__DELIVERY_DELIVERED ? SQL_DLV_DELIVERED
			 : o->kind == WQ__DELIVERY_RETRY   ? SQL_DLV_RETRY
							    : SQL_DLV_DEAD,
		  &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, o->id);
	b |= sqlite3_bind_int(st, 2, o->attempts);
	b |= bind_str(st, 3, o->instance);
	b |= sqlite3_bind_int64(st, 4, o->now);
	if (o->kind != WQ__DELIVERY_DELIVERED) {
		b |= bind_str(st, 5, o->error);
		b |= sqlite3_bind_int(st, 6, o->max_attempts);
		if (o->kind == WQ__DELIVERY_RETRY)
			b |= sqlite3_bind_int64(st, 7, o->next_at);
	}
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		found = 1;
		task_id = sqlite3_column_int64(st, 0);
		col_str(st, 1, channel, sizeof(channel));
		src = sqlite3_step(st);
	}
	if (src != SQLITE_DONE)
		rc = db_fail(s, src, "record delivery outcome", err);
	stmt_done(st);
	if (rc)
		goto fail;
	if (!found)
		return delivery_stale(s, o, want[o->kind], err);

	if (!(d = delivery_detail(o->id, channel, err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	switch (o->kind) {
	case WQ__DELIVERY_DELIVERED:
		type = "delivered";
		b = wq__jset_int(d, "attempt", o->attempts);
		if (o->status >= 0)
			b |= wq__jset_int(d, "status", o->status);
		break;
	case WQ__DELIVERY_RETRY:
		type = "delivery-failed";
		b = wq__jset_int(d, "attempt", o->attempts) ||
		    wq__jset_str(d, "error", o->error, WQ_DETAIL_MAX) ||
		    wq__jset_time(d, "retry_at", o->next_at) ||
		    (o->status >= 0 && wq__jset_int(d, "status", o->status));
		break;
	default:
		type = "dead";
		b = wq__jset_int(d, "attempts", o->attempts) ||
		    wq__jset_str(d, "error", o->error, WQ_DETAIL_MAX) ||
		    (o->status >= 0 && wq__jset_int(d, "status", o->status));
		if (o->operators) {
			snprintf(key, sizeof(key), "inbox:%.50s", o->operators);
			b |= wq__jset_str(d, "reported_to", key, WQ_NAME_MAX);
		}
		break;
	}
	if (b) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, task_id, o->now, 0, type, o->instance, d, err);
	if (rc)
		goto fail;
	if (o->kind == WQ__DELIVERY_DELIVERED && o->inbox) {
		snprintf(key, sizeof(key), "delivery:%" PRId64, o->id);
		rc = inbox_insert(s, o->inbox, key, o->id, task_id, "succeeded", o->now, err);
	} else if (o->kind == WQ__DELIVERY_DEAD && o->operators) {
		/* One report per death: a retried report adds nothing, a later death after an
		 * operator's retry (more attempts) is a new one. */
		snprintf(key, sizeof(key), "dead:%" PRId64 ":%d", o->id, o->attempts);
		rc = inbox_insert(s, o->operators, key, o->id, task_id, "dead-delivery", o->now,
				  err);
	}
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* The held ids as a JSON array text for json_each(). *out malloc'd. */
static wq_rc ids_json(const int64_t *ids, size_t n, char **out, wq_error *err)
{
	size_t cap = 3 + n * 21, o = 0, i;
	char *buf = malloc(cap);

	if (!buf)
		return wq__err(err, WQ_ENOMEM, "out of memory (delivery ids)");
	buf[o++] = '[';
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? "," : "", ids[i]);
	snprintf(buf + o, cap - o, "]");
	*out = buf;
	return WQ_OK;
}

static wq_rc sq_delivery_recover(struct wq__store *s, const char *instance,
				 const int64_t *held, size_t nheld, int64_t now, int *count,
				 wq_error *err)
{
	struct delivery_row *rows = NULL, *r;
	size_t cnt = 0, cap = 0, i;
	sqlite3_stmt *st = NULL;
	char *hj = NULL;
	json_t *d;
	wq_rc rc;
	int b, src, sending = 0;

	rc = any_delivery(s, SQL_DLV_ANY_SENDING, now, &sending, err);
	if (rc)
		return rc;
	if (!sending) {
		*count = 0;
		return WQ_OK;
	}
	rc = ids_json(held, nheld, &hj, err);
	if (rc)
		return rc;
	rc = tx_begin_write(s, err);
	if (rc) {
		free(hj);
		return rc;
	}
	rc = stmt(s, SQL_DLV_RECOVER, &st, err);
	if (rc)
		goto fail;
	b = bind_str(st, 1, instance);
	b |= bind_str(st, 2, hj);
	b |= sqlite3_bind_int64(st, 3, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto fail;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&rows, &cap, cnt, sizeof(*rows))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (recovering deliveries)");
			goto fail;
		}
		r = &rows[cnt++];
		memset(r, 0, sizeof(*r));
		r->id = sqlite3_column_int64(st, 0);
		r->task_id = sqlite3_column_int64(st, 1);
		col_str(st, 2, r->channel, sizeof(r->channel));
		r->attempts = sqlite3_column_int(st, 3);
		col_str(st, 4, r->instance, sizeof(r->instance));
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "recover deliveries", err);
		goto fail;
	}
	stmt_done(st);
	st = NULL;
	if (cnt > 1)
		qsort(rows, cnt, sizeof(*rows), delivery_row_cmp);
	for (i = 0; i < cnt; i++) {
		r = &rows[i];
		if (!(d = delivery_detail(r->id, r->channel, err))) {
			rc = WQ_ENOMEM;
			goto fail;
		}
		if (wq__jset_int(d, "attempt", r->attempts) ||
		    wq__jset_str(d, "instance", r->instance, WQ_NAME_MAX) ||
		    wq__jset_str(d, "reason",
			     instance && strcmp(r->instance, nz(instance)) == 0 ? "unrecorded"
										 : "worker-lost",
			     WQ_REASON_MAX)) {
			rc = wq__jfail(d, err);
			goto fail;
		}
		rc = event_insert(s, r->task_id, now, 0, "delivery-uncertain", r->instance, d, err);
		if (rc)
			goto fail;
	}
	rc = tx_commit(s, err);
	if (rc)
		goto fail;
	free(rows);
	free(hj);
	*count = (int)cnt;
	return WQ_OK;
fail:
	stmt_done(st);
	tx_rollback(s);
	free(rows);
	free(hj);
	return rc;
}

static wq_rc sq_delivery_next(struct wq__store *s, int64_t *due_out, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	rc = stmt(s, SQL_DLV_NEXT, &st, err);
	if (rc)
		return rc;
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*due_out = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0
								     : sqlite3_column_int64(st, 0);
	else
		rc = db_fail(s, src, "read next delivery", err);
	stmt_done(st);
	return rc;
}

static void read_delivery(sqlite3_stmt *st, wq_delivery *x)
{
	memset(x, 0, sizeof(*x));
	x->id = sqlite3_column_int64(st, 0);
	x->task_id = sqlite3_column_int64(st, 1);
	col_str(st, 2, x->channel, sizeof(x->channel));
	x->state = delivery_state_parse(sqlite3_column_text(st, 3));
	x->attempts = sqlite3_column_int(st, 4);
	x->max_attempts = sqlite3_column_int(st, 5);
	x->created_at = sqlite3_column_int64(st, 6);
	x->updated_at = sqlite3_column_int64(st, 7);
	x->next_at = sqlite3_column_int64(st, 8);
	x->delivered_at = sqlite3_column_int64(st, 9);
	col_str(st, 10, x->last_error, sizeof(x->last_error));
}

static wq_rc sq_delivery_list(struct wq__store *s, wq_delivery_state state, wq_delivery **out,
			      size_t *n, wq_error *err)
{
	wq_delivery *arr = NULL;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st;
	wq_rc rc;
	int src;

	if (state && ((int)state < 1 || (size_t)state >= WQ__ARRAY_LEN(delivery_state_text)))
		return wq__err(err, WQ_EINVAL, "delivery list: no state %d", (int)state);
	rc = stmt(s, SQL_DLV_LIST, &st, err);
	if (rc)
		return rc;
	if (bind_str(st, 1, state ? delivery_state_text[state] : "") != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (listing deliveries)");
			goto out;
		}
		read_delivery(st, &arr[cnt++]);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "list deliveries", err);
		goto out;
	}
	stmt_done(st);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
out:
	stmt_done(st);
	free(arr);
	return rc;
}

static wq_rc sq_delivery_retry(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	char state[16] = "", channel[WQ_NAME_MAX + 1] = "", inst[WQ_NAME_MAX + 1];
	int64_t task_id = 0;
	sqlite3_stmt *st;
	json_t *d;
	wq_rc rc;
	int b, src, changes = 0;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_DLV_STATE, &st, err);
	if (rc)
		goto fail;
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		task_id = sqlite3_column_int64(st, 0);
		col_str(st, 1, channel, sizeof(channel));
		col_str(st, 2, state, sizeof(state));
		col_str(st, 4, inst, sizeof(inst));
	} else if (src == SQLITE_DONE) {
		rc = wq__err(err, WQ_ENOTFOUND, "no delivery %" PRId64, id);
	} else {
		rc = db_fail(s, src, "read delivery", err);
	}
	stmt_done(st);
	if (rc)
		goto fail;
	if (strcmp(state, "dead") != 0) {
		rc = wq__err(err, WQ_ESTATE,
			     "delivery %" PRId64 " is %s; only a dead delivery can be retried", id,
			     state);
		goto fail;
	}
	rc = stmt(s, SQL_DLV_RETRY_DEAD, &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, id);
	b |= sqlite3_bind_int64(st, 2, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, "retry delivery", &changes, err);
	if (!rc && changes != 1)
		rc = wq__err(err, WQ_ESTATE, "delivery %" PRId64 " is no longer dead", id);
	if (rc)
		goto fail;
	if (!(d = delivery_detail(id, channel, err))) {
		rc = WQ_ENOMEM;
		goto fail;
	}
	if (wq__jset_str(d, "by", "operator", WQ_REASON_MAX)) {
		rc = wq__jfail(d, err);
		goto fail;
	}
	rc = event_insert(s, task_id, now, 0, "delivery-retry", "", d, err);
	if (rc)
		goto fail;
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

static wq_rc sq_inbox_list(struct wq__store *s, const char *recipient, int unread_only,
			   wq_notification **out, size_t *n, wq_error *err)
{
	wq_notification *arr = NULL, *x;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st;
	wq_rc rc;
	int b, src;

	rc = stmt(s, SQL_INBOX_LIST, &st, err);
	if (rc)
		return rc;
	b = bind_str(st, 1, recipient);
	b |= sqlite3_bind_int(st, 2, unread_only ? 1 : 0);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&arr, &cap, cnt, sizeof(*arr))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (reading the inbox)");
			goto out;
		}
		x = &arr[cnt++];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		col_str(st, 1, x->recipient, sizeof(x->recipient));
		x->delivery_id = sqlite3_column_int64(st, 2);
		x->task_id = sqlite3_column_int64(st, 3);
		col_str(st, 4, x->kind, sizeof(x->kind));
		col_str(st, 5, x->operation, sizeof(x->operation));
		col_str(st, 6, x->subject, sizeof(x->subject));
		x->result_size = sqlite3_column_int64(st, 7);
		col_str(st, 8, x->result_sha256, sizeof(x->result_sha256));
		x->created_at = sqlite3_column_int64(st, 9);
		x->read_at = sqlite3_column_int64(st, 10);
	}
	if (src != SQLITE_DONE) {
		rc = db_fail(s, src, "read the inbox", err);
		goto out;
	}
	stmt_done(st);
	if (cnt == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return WQ_OK;
out:
	stmt_done(st);
	free(arr);
	return rc;
}

static wq_rc sq_inbox_read(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	sqlite3_stmt *st;
	wq_rc rc;
	int b, src, changes = 0;

	rc = tx_begin_write(s, err);
	if (rc)
		return rc;
	rc = stmt(s, SQL_INBOX_READ, &st, err);
	if (rc)
		goto fail;
	b = sqlite3_bind_int64(st, 1, id);
	b |= sqlite3_bind_int64(st, 2, now);
	if (b) {
		rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
		stmt_done(st);
		goto fail;
	}
	rc = run(s, st, "mark notification read", &changes, err);
	if (rc)
		goto fail;
	if (changes == 0) {
		/* Read already (nothing to change), or no such notification. */
		rc = stmt(s, SQL_INBOX_EXISTS, &st, err);
		if (rc)
			goto fail;
		if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK) {
			rc = db_fail(s, sqlite3_errcode(s->db), "bind", err);
			stmt_done(st);
			goto fail;
		}
		src = sqlite3_step(st);
		if (src == SQLITE_DONE)
			rc = wq__err(err, WQ_ENOTFOUND, "no notification %" PRId64, id);
		else if (src != SQLITE_ROW)
			rc = db_fail(s, src, "read notification", err);
		stmt_done(st);
		if (rc)
			goto fail;
	}
	return tx_commit(s, err);
fail:
	tx_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ the table ---- */

const struct wq__store_methods wq__sqlite_methods = {
	.version = 1,
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.enqueue = sq_enqueue,
	.get = sq_get,
	.list = sq_list,
	.result = sq_result,
	.events = sq_events,
	.claim = sq_claim,
	.finish = sq_finish,
	.cancel = sq_cancel,
	.resolve = sq_resolve,
	.event = sq_event,
	.cancel_requests = sq_cancel_requests,
	.interrupted_of_kind = sq_interrupted_of_kind,
	.next_due = sq_next_due,
	.instance_register = sq_instance_register,
	.instance_heartbeat = sq_instance_heartbeat,
	.instance_unregister = sq_instance_unregister,
	.instance_list = sq_instance_list,
	.instance_reap = sq_instance_reap,
	.reap_orphans = sq_reap_orphans,
	.operation_find = sq_operation_find,
	.attempts = sq_attempts,
	.effect_begin = sq_effect_begin,
	.effect_done = sq_effect_done,
	.prune = sq_prune,
	.doctor = sq_doctor,
	.delivery_claim = sq_delivery_claim,
	.delivery_finish = sq_delivery_finish,
	.delivery_recover = sq_delivery_recover,
	.delivery_next = sq_delivery_next,
	.delivery_list = sq_delivery_list,
	.delivery_retry = sq_delivery_retry,
	.inbox_list = sq_inbox_list,
	.inbox_read = sq_inbox_read,
};
