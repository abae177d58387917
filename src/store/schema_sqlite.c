/*
 * schema_sqlite.c — the SQLite schema: forward migrations, in order; step i brings the
 * schema to version wq__sqlite_migrations[i].version. Append only: a released step never
 * changes (databases in the field already ran it). Steps 1-3 are the old sqlite.c's,
 * verbatim. op_store.c's migrate_step() runs each in its own BEGIN IMMEDIATE transaction
 * with the schema_version row that records it, after re-reading the version under the
 * lock; so no step holds BEGIN, COMMIT or that row. Step 1 creates schema_version.
 */
#include "sql.h"

#include <stddef.h>

/* wave6 chk: the columns of tasks at the end of step 4, in their order. */
#define TASKS_V4_COLUMNS \
	"id, kind, tenant, scope, operation, payload, payload_size, " \
	"payload_sha256, payload_version, priority, state, due_at, order_at, " \
	"created_at, updated_at, started_at, finished_at, attempt, " \
	"max_attempts, instance, reason, reason_detail, outcome, " \
	"cancel_requested, result, result_size, result_sha256, has_result, " \
	"last_exit_status, keyed, fingerprint, notify, uncertain_effect, " \
	"retry_base, lock_key, parent_id, depth"

const struct wq__migration wq__sqlite_migrations[] = {
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
	/* Host identity of an instance (wq__instance.host_id). Ids that leave the store
	 * (tasks, events, deliveries, inbox) are never handed out again: INTEGER PRIMARY KEY
	 * without AUTOINCREMENT reuses max(id) + 1 after the newest rows are deleted, and a
	 * table rebuild to add AUTOINCREMENT cannot run inside this transaction (ON DELETE
	 * CASCADE children). So every insert takes its id above id_floor (v2), which prune
	 * raises; this step seeds the floor of each table with its current highest id.
	 * "WHERE true": an upsert after INSERT ... SELECT ... FROM needs a WHERE clause to
	 * parse. effects.resolved_at: when a resolution of the task answered the effect's
	 * doctor findings (0: not answered; an attempt that begins it again clears it). */
	{4,
	 "ALTER TABLE instances ADD COLUMN host_id TEXT NOT NULL DEFAULT '';\n"
	 "INSERT INTO id_floor (tbl, id) SELECT 'tasks', coalesce(max(id), 0) FROM tasks "
	 "WHERE true ON CONFLICT (tbl) DO UPDATE SET id = max(id_floor.id, excluded.id);\n"
	 "INSERT INTO id_floor (tbl, id) SELECT 'events', coalesce(max(id), 0) FROM events "
	 "WHERE true ON CONFLICT (tbl) DO UPDATE SET id = max(id_floor.id, excluded.id);\n"
	 "INSERT INTO id_floor (tbl, id) SELECT 'deliveries', coalesce(max(id), 0) "
	 "FROM deliveries WHERE true ON CONFLICT (tbl) DO UPDATE "
	 "SET id = max(id_floor.id, excluded.id);\n"
	 "INSERT INTO id_floor (tbl, id) SELECT 'inbox', coalesce(max(id), 0) FROM inbox "
	 "WHERE true ON CONFLICT (tbl) DO UPDATE SET id = max(id_floor.id, excluded.id);\n"
	 "ALTER TABLE effects ADD COLUMN resolved_at INTEGER NOT NULL DEFAULT 0;\n"
	 /* -- operator retry (issue 14): tasks.retry_base, the attempts used when an
	  * operator last retried the task (0: never); its budget counts from there. */
	 "ALTER TABLE tasks ADD COLUMN retry_base INTEGER NOT NULL DEFAULT 0;\n"
	 /* -- schedules (issue 12): one row per schedule (owner/lease_until: the worker
	  * instance firing it); schedule_events: what happened to its slots (fired,
	  * skipped-overlap, skipped-missed), apart from the tasks' events because a
	  * skipped slot has no task. */
	 "CREATE TABLE schedules (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  name TEXT NOT NULL UNIQUE,\n"
	 "  cron TEXT NOT NULL DEFAULT '',\n"
	 "  every_us INTEGER NOT NULL DEFAULT 0,\n"
	 "  tz TEXT NOT NULL DEFAULT '',\n"
	 "  kind TEXT NOT NULL,\n"
	 "  tenant TEXT NOT NULL DEFAULT '',\n"
	 "  scope TEXT NOT NULL DEFAULT '',\n"
	 "  payload TEXT NOT NULL,\n"
	 "  payload_version INTEGER NOT NULL,\n"
	 "  payload_size INTEGER NOT NULL,\n"
	 "  payload_sha256 TEXT NOT NULL,\n"
	 "  fingerprint TEXT NOT NULL,\n"
	 "  notify TEXT,\n"
	 "  max_attempts INTEGER NOT NULL,\n"
	 "  overlap TEXT NOT NULL,\n"
	 "  catch_up TEXT NOT NULL,\n"
	 "  paused INTEGER NOT NULL DEFAULT 0,\n"
	 "  next_slot INTEGER NOT NULL,\n"
	 "  last_slot INTEGER NOT NULL DEFAULT 0,\n"
	 "  last_task INTEGER NOT NULL DEFAULT 0,\n"
	 "  owner TEXT NOT NULL DEFAULT '',\n"
	 "  lease_until INTEGER NOT NULL DEFAULT 0,\n"
	 "  created_at INTEGER NOT NULL\n"
	 ");\n"
	 "CREATE TABLE schedule_events (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  schedule_id INTEGER NOT NULL,\n"
	 "  at INTEGER NOT NULL,\n"
	 "  slot INTEGER NOT NULL,\n"
	 "  type TEXT NOT NULL,\n"
	 "  task_id INTEGER NOT NULL DEFAULT 0,\n"
	 "  count INTEGER NOT NULL DEFAULT 1,\n"
	 "  instance TEXT NOT NULL DEFAULT ''\n"
	 ");\n"
	 "CREATE INDEX schedule_events_schedule ON schedule_events (schedule_id, id);\n"
	 /* Turn locks and paused kinds (issue 10; op_lock.c): a task's lock key; one row
	  * per held key (the primary key is the arbiter: at most one holder), a task's
	  * hold has task_id/attempt and expires_at 0, an external lease task_id 0 and its
	  * expiry; paused kinds are not claimed. */
	 "-- turn locks, paused kinds (issue 10)\n"
	 "ALTER TABLE tasks ADD COLUMN lock_key TEXT NOT NULL DEFAULT '';\n"
	 "CREATE INDEX tasks_lock ON tasks (lock_key, state, order_at, id);\n"
	 "CREATE TABLE locks (\n"
	 "  key TEXT PRIMARY KEY,\n"
	 "  holder TEXT NOT NULL,\n"
	 "  task_id INTEGER NOT NULL DEFAULT 0,\n"
	 "  attempt INTEGER NOT NULL DEFAULT 0,\n"
	 "  acquired_at INTEGER NOT NULL,\n"
	 "  expires_at INTEGER NOT NULL\n"
	 ") WITHOUT ROWID;\n"
	 "CREATE INDEX locks_task ON locks (task_id, attempt);\n"
	 "CREATE TABLE paused_kinds (kind TEXT PRIMARY KEY, paused_at INTEGER NOT NULL) "
	 "WITHOUT ROWID;\n"
	 /* Limits and follow-ups (issue 10; op_limit.c, op_followup.c): running tasks per
	  * kind are counted by claim (per-kind concurrency: tasks_claim's (state, kind)
	  * prefix serves the count); one counter row per (tenant, scope, UTC day) of starts
	  * (max_starts_per_day); a follow-up's parent and depth. */
	 "-- limits, follow-ups (issue 10)\n"
	 "CREATE TABLE start_counts (\n"
	 "  tenant TEXT NOT NULL,\n"
	 "  scope TEXT NOT NULL,\n"
	 "  day INTEGER NOT NULL,\n"
	 "  starts INTEGER NOT NULL,\n"
	 "  PRIMARY KEY (tenant, scope, day)\n"
	 ") WITHOUT ROWID;\n"
	 "ALTER TABLE tasks ADD COLUMN parent_id INTEGER NOT NULL DEFAULT 0;\n"
	 "ALTER TABLE tasks ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;\n"
	 "CREATE INDEX tasks_parent ON tasks (parent_id) WHERE parent_id <> 0;\n"
	 /* Intake (issue 13; op_intake.c): one row per mailbox message a source handed
	  * out, keyed by (source, key); `state` pending → handled | giving-up (the
	  * acknowledgement queued by finish) → acknowledged | abandoned (only after the
	  * source took the acknowledgement), or retired (UIDVALIDITY changed). ack_*: the
	  * acknowledgement's own attempts, backoff and owner, as a delivery's. */
	 "-- intake (issue 13)\n"
	 "CREATE TABLE intake (\n"
	 "  id INTEGER PRIMARY KEY,\n"
	 "  source TEXT NOT NULL,\n"
	 "  key TEXT NOT NULL,\n"
	 "  uidvalidity INTEGER NOT NULL DEFAULT 0,\n"
	 "  uid INTEGER NOT NULL DEFAULT 0,\n"
	 "  state TEXT NOT NULL,\n"
	 "  outcome TEXT NOT NULL DEFAULT '',\n"
	 "  task_id INTEGER NOT NULL DEFAULT 0,\n"
	 "  handouts INTEGER NOT NULL DEFAULT 0,\n"
	 "  max_handouts INTEGER NOT NULL,\n"
	 "  size INTEGER NOT NULL DEFAULT 0,\n"
	 "  operators TEXT NOT NULL DEFAULT '',\n"
	 "  ack_attempts INTEGER NOT NULL DEFAULT 0,\n"
	 "  ack_next_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  ack_instance TEXT NOT NULL DEFAULT '',\n"
	 "  ack_until INTEGER NOT NULL DEFAULT 0,\n"
	 "  ack_error TEXT NOT NULL DEFAULT '',\n"
	 "  created_at INTEGER NOT NULL,\n"
	 "  updated_at INTEGER NOT NULL,\n"
	 "  handled_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  acked_at INTEGER NOT NULL DEFAULT 0,\n"
	 "  UNIQUE (source, key)\n"
	 ");\n"
	 "CREATE INDEX intake_task ON intake (task_id);\n"
	 "CREATE INDEX intake_ack ON intake (state, ack_next_at, id);\n"
	 /* A failed attempt's stderr tail, for kinds with keep_stderr (op_stderr.c). */
	 "-- kept stderr (issue 14)\n"
	 "ALTER TABLE attempts ADD COLUMN stderr_tail TEXT;\n"
	 /* Leases aged on the store's clock (issue 15): an instance's heartbeat as the
	  * store's clock saw it, so that no lease compares two hosts' clocks. */
	 "-- lease clock (issue 15)\n"
	 "ALTER TABLE instances ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;\n"
	 /* Fewer index pages per write (wave 5, docs/performance.md): a WAL commit writes
	  * every page it dirtied, so each index a new task enters costs a page per
	  * enqueue. tasks_lock serves only the claim's FIFO-per-key rule, which reads
	  * pending tasks with a lock key: tasks without a key (most) and tasks past
	  * pending stay out of it. operations_task serves prune (SQL_PRUNE_MARK), which
	  * looks up linked operations: the row an enqueue inserts with task_id 0 and
	  * links in the same transaction enters it once, not twice. The statements that
	  * use them state the predicates (o.lock_key <> '', task_id <> 0). */
	 "-- wave5 wal: partial indexes (pages per enqueue)\n"
	 "DROP INDEX tasks_lock;\n"
	 "CREATE INDEX tasks_lock ON tasks (lock_key, order_at, id) "
	 "WHERE lock_key <> '' AND state = 'pending';\n"
	 "DROP INDEX operations_task;\n"
	 "CREATE INDEX operations_task ON operations (task_id) WHERE task_id <> 0;\n"
	 /* wave5 drain: the terminal-state predicate as ORs of equalities. SQLite codes an
	  * IN list of more than two constants as a temporary table built on every
	  * evaluation, and a partial index's WHERE is evaluated for the old and the new row
	  * of every UPDATE of tasks.state: two such tables per claimed or finished task.
	  * Same rows; WQ__TERMINAL (statements.h) spells it the same way so that prune
	  * still matches the index. */
	 "-- wave5 drain: tasks_finished without an IN list\n"
	 "DROP INDEX tasks_finished;\n"
	 "CREATE INDEX tasks_finished ON tasks (finished_at) WHERE state = 'succeeded' OR "
	 "state = 'failed' OR state = 'cancelled';\n"
	 /* wave6 chk: tasks.state's CHECK as ORs of equalities, for the reason above: its
	  * IN list built a temporary table for every row inserted and every UPDATE of
	  * state (a claim, a finish), ~12% of a batch enqueue's instructions. SQLite alters
	  * no CHECK in place, so tasks is rebuilt as SQLite's ALTER TABLE documentation
	  * describes: the same columns in the same order (every row copied by name), the
	  * old table dropped, the new one renamed, every index created again as it stood
	  * (tasks_claim now by kind: wave6 claimk). Foreign keys are unenforced while a step
	  * runs (op_store.c migrate(): the drop would otherwise cascade to events, attempts,
	  * effects and deliveries), and the step commits only with no reference dangling. The other
	  * tables' REFERENCES tasks name the table, so they follow the rename. */
	 "-- wave6 chk: tasks rebuilt with its state CHECK as ORs\n"
	 "CREATE TABLE tasks_new (\n"
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
	 "  state TEXT NOT NULL CHECK (state = 'pending' OR state = 'running' OR\n"
	 "                             state = 'succeeded' OR state = 'failed' OR\n"
	 "                             state = 'interrupted' OR state = 'cancelled'),\n"
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
	 "  last_exit_status INTEGER,\n"
	 "  keyed INTEGER NOT NULL DEFAULT 0,\n"
	 "  fingerprint TEXT NOT NULL DEFAULT '',\n"
	 "  notify TEXT,\n"
	 "  uncertain_effect TEXT NOT NULL DEFAULT '',\n"
	 "  retry_base INTEGER NOT NULL DEFAULT 0,\n"
	 "  lock_key TEXT NOT NULL DEFAULT '',\n"
	 "  parent_id INTEGER NOT NULL DEFAULT 0,\n"
	 "  depth INTEGER NOT NULL DEFAULT 0\n"
	 ");\n"
	 "INSERT INTO tasks_new (" TASKS_V4_COLUMNS ") SELECT " TASKS_V4_COLUMNS
	 " FROM tasks;\n"
	 "DROP TABLE tasks;\n"
	 "ALTER TABLE tasks_new RENAME TO tasks;\n"
	 "CREATE UNIQUE INDEX tasks_operation ON tasks (operation) WHERE keyed = 0;\n"
	 /* wave6 claimk: the claim reads each served kind's own ordered range (D_PER_KIND,
	  * statements.h), so a backlog of a kind no worker here serves (none at all, or
	  * paused) is never walked; (state, order_at, id) made every claim step through
	  * all older pending tasks of every kind. Replaced, not added beside: no other
	  * statement needs pending tasks in order across kinds (the others that filter on
	  * state use it as a prefix, or a partial index of their own).
	  * wave7 drain: tasks_running_instance (step 1) and tasks_running_kind are not
	  * created again. Every claim and every finish moved an entry in each (~6% of a
	  * drained task's instructions) for statements that tasks_claim's (state = 'running')
	  * prefix serves as well: the per-kind running count (state, kind), and the reads by
	  * instance (cancel requests, reclaim, interrupt, stats), which now read the running
	  * tasks of every instance, as many as the workers' slots.
	  * wave7 drain: tasks_claim holds the live states only (pending, running,
	  * interrupted: the only ones a statement looks up through it), so a finish deletes
	  * the task's entry instead of moving it, and finished tasks (most rows) stay out.
	  * Written as ORs of equalities, not IN (a temporary table per evaluation: wave5
	  * drain above), in this order: a statement's "state = 'pending'" (or 'running',
	  * 'interrupted', or "(state = 'pending' OR state = 'running')") is then implied by
	  * this WHERE as SQLite tests it (a term equal to one side of an OR), so the planner
	  * may use the index. The terminal states' reads (prune) use tasks_finished; stats
	  * and the id floor read the table. */
	 "CREATE INDEX tasks_claim ON tasks (state, kind, order_at, id) WHERE state = "
	 "'pending' OR state = 'running' OR state = 'interrupted';\n"
	 "CREATE INDEX tasks_parent ON tasks (parent_id) WHERE parent_id <> 0;\n"
	 "CREATE INDEX tasks_lock ON tasks (lock_key, order_at, id) "
	 "WHERE lock_key <> '' AND state = 'pending';\n"
	 "CREATE INDEX tasks_finished ON tasks (finished_at) WHERE state = 'succeeded' OR "
	 "state = 'failed' OR state = 'cancelled';\n"
	 /* The earliest future due time of a served kind (WQ__SERVED_MIN_DUE: an idle
	  * worker's next wake-up, read after every claim round that leaves a slot free,
	  * on the loop thread) is the first entry of the kind past `now`. Without it the
	  * read walked every pending task of the kind: a backlog held back by a turn lock
	  * or a kind limit cost 5.9 ms a read at 20,000 pending tasks, once per finished
	  * task (16 us with it). One entry per pending task that was not due when it was
	  * written (wave 11: due_at > created_at; a task due at its enqueue, most of them,
	  * stays out, so its enqueue writes one index entry fewer and its claim deletes
	  * none): a task due at its enqueue is never due in the future, and one made due
	  * later (a retry's backoff, a deferral) keeps its created_at, so it is in. */
	 "CREATE INDEX tasks_due ON tasks (kind, due_at) WHERE state = 'pending' AND "
	 "due_at > created_at;\n"},
	/* wave 12: held (statements.h, WQ__HELD): a task queued behind an earlier pending task
	 * of its turn-lock key leaves the claim's ordered range, which the claim walked
	 * through, blocked task by blocked task, on every claim. held sits after kind so
	 * each kind's runnable tasks are still one range in (order_at, id) order; the
	 * (state, kind) prefix the running counts and reads by state use is unchanged.
	 * Rows of earlier versions start at 0, which holds nothing back. */
	{5,
	 WQ__SCHEMA_STEP5_HELD},
};

const size_t wq__sqlite_nmigrations =
	sizeof(wq__sqlite_migrations) / sizeof(wq__sqlite_migrations[0]);
