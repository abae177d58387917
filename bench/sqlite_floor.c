/*
 * sqlite_floor.c — the least SQLite work a durable in-process drain (W2) can do per task,
 * without wakeq: what SPEC asks a store to write for one task's run, in the shape
 * wakeq's store thread uses, on a schema with nothing else in it.
 *
 *   claim:  one UPDATE of a batch of pending tasks to running (attempt + 1, instance)
 *           RETURNING what a handler needs; an attempts row and two events (claimed,
 *           started) per task
 *   finish: per task an UPDATE to succeeded fenced by attempt and state, the attempts
 *           row's end, one event (succeeded)
 *
 * B tasks' finishes and the next B claims share one transaction (as wakeq's batches
 * do), WAL, synchronous=FULL (one fsync a commit). N tasks are inserted first (one
 * transaction, not counted in the drain's figures: the function drain() alone is, under
 * `valgrind --tool=callgrind --toggle-collect=drain`).
 *
 * FLAGS adds one part of wakeq's own schema at a time, to see what each costs:
 *   w  the task row as wide as wakeq's (37 columns, its fingerprints and hashes)
 *   i  wakeq's two other per-state indexes (the next-due read's, prune's)
 *   f  events and attempts reference their task (foreign keys, ON DELETE CASCADE)
 *   d  event details of the size wakeq writes
 *   n  (instead of w) the wide row's columns that never change after the enqueue in a
 *      table of their own (task_input, by the task's id), read per claimed task: what
 *      a task row split into its changing and its fixed part would cost
 * Usage: sqlite_floor DB N B [FLAGS]; prints tasks/s (wall clock) of the drain.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sqlite3 *db;

static void die(const char *what)
{
	fprintf(stderr, "sqlite_floor: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void run(const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(sql);
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		die(sql);
	return st;
}

/* Steps a statement that returns no row, then resets it. */
static void step(sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		die(sqlite3_sql(st));
	sqlite3_reset(st);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define NARROW                                                                         \
	"CREATE TABLE tasks (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, operation TEXT " \
	"NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL, due_at INTEGER NOT NULL, "  \
	"attempt INTEGER NOT NULL DEFAULT 0, instance TEXT NOT NULL DEFAULT '', "          \
	"updated_at INTEGER NOT NULL DEFAULT 0, finished_at INTEGER NOT NULL DEFAULT 0, "  \
	"outcome TEXT NOT NULL DEFAULT '');"
#define SHA "'3600b2bd8492cdb7e7259cdfbb4bc6eac1ffd9b502e1e8470ac37802f029e3d3'"
#define WIDE                                                                           \
	"CREATE TABLE tasks (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, tenant TEXT NOT " \
	"NULL DEFAULT '', scope TEXT NOT NULL DEFAULT '', operation TEXT NOT NULL, "       \
	"payload TEXT NOT NULL, payload_size INTEGER NOT NULL DEFAULT 7, payload_sha256 "  \
	"TEXT NOT NULL DEFAULT " SHA ", payload_version INTEGER NOT NULL DEFAULT 1, "      \
	"priority INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL, due_at INTEGER NOT "    \
	"NULL, order_at INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL DEFAULT "  \
	"0, updated_at INTEGER NOT NULL DEFAULT 0, started_at INTEGER NOT NULL DEFAULT 0, " \
	"finished_at INTEGER NOT NULL DEFAULT 0, attempt INTEGER NOT NULL DEFAULT 0, "     \
	"max_attempts INTEGER NOT NULL DEFAULT 3, instance TEXT NOT NULL DEFAULT '', "     \
	"reason TEXT NOT NULL DEFAULT '', reason_detail TEXT NOT NULL DEFAULT '', outcome " \
	"TEXT NOT NULL DEFAULT '', cancel_requested INTEGER NOT NULL DEFAULT 0, result "   \
	"BLOB, result_size INTEGER NOT NULL DEFAULT 0, result_sha256 TEXT NOT NULL "       \
	"DEFAULT '', has_result INTEGER NOT NULL DEFAULT 0, last_exit_status INTEGER, "    \
	"keyed INTEGER NOT NULL DEFAULT 0, fingerprint TEXT NOT NULL DEFAULT " SHA ", "    \
	"notify TEXT, uncertain_effect TEXT NOT NULL DEFAULT '', retry_base INTEGER NOT "  \
	"NULL DEFAULT 0, lock_key TEXT NOT NULL DEFAULT '', parent_id INTEGER NOT NULL "   \
	"DEFAULT 0, depth INTEGER NOT NULL DEFAULT 0);"
#define REF(f) (f ? " REFERENCES tasks (id) ON DELETE CASCADE" : "")

#define INPUT                                                                          \
	"CREATE TABLE task_input (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL DEFAULT '', " \
	"scope TEXT NOT NULL DEFAULT '', payload_size INTEGER NOT NULL DEFAULT 7, "          \
	"payload_sha256 TEXT NOT NULL DEFAULT " SHA ", payload_version INTEGER NOT NULL "    \
	"DEFAULT 1, priority INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL "       \
	"DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 3, keyed INTEGER NOT NULL DEFAULT " \
	"0, fingerprint TEXT NOT NULL DEFAULT " SHA ", notify TEXT, retry_base INTEGER NOT " \
	"NULL DEFAULT 0, lock_key TEXT NOT NULL DEFAULT '', parent_id INTEGER NOT NULL "     \
	"DEFAULT 0, depth INTEGER NOT NULL DEFAULT 0);"

static int split; /* the n flag */

static void schema(int wide, int indexes, int fks)
{
	char sql[1024];

	run("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;");
	run(fks ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF");
	run(wide ? WIDE : NARROW);
	if (split)
		run(INPUT);
	run("CREATE UNIQUE INDEX tasks_operation ON tasks (operation);"
	    "CREATE INDEX tasks_claim ON tasks (kind, due_at, id) WHERE state = 'pending';");
	if (indexes)
		run("CREATE INDEX tasks_due ON tasks (kind, due_at) WHERE state = 'pending';"
		    "CREATE INDEX tasks_finished ON tasks (finished_at) WHERE state = "
		    "'succeeded' OR state = 'failed' OR state = 'cancelled';");
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE attempts (task_id INTEGER NOT NULL%s, attempt INTEGER NOT NULL, "
		 "instance TEXT NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER NOT "
		 "NULL DEFAULT 0, outcome TEXT NOT NULL DEFAULT '', PRIMARY KEY (task_id, "
		 "attempt)) WITHOUT ROWID;"
		 "CREATE TABLE events (id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL%s, at "
		 "INTEGER NOT NULL, attempt INTEGER NOT NULL, type TEXT NOT NULL, detail TEXT "
		 "NOT NULL DEFAULT '{}');"
		 "CREATE INDEX events_task ON events (task_id, id);",
		 REF(fks), REF(fks));
	run(sql);
}

static void fill(int n)
{
	sqlite3_stmt *ins = prep("INSERT INTO tasks (kind, operation, payload, state, due_at) "
				 "VALUES ('bench', ?1, '{\"i\":1}', 'pending', 0)");
	sqlite3_stmt *input =
		split ? prep("INSERT INTO task_input (id) VALUES (last_insert_rowid())") : NULL;
	char op[40];

	run("BEGIN");
	for (int i = 0; i < n; i++) {
		snprintf(op, sizeof(op), "op_%032d", i);
		sqlite3_bind_text(ins, 1, op, -1, SQLITE_TRANSIENT);
		step(ins);
		if (split)
			step(input);
	}
	run("COMMIT");
	sqlite3_finalize(ins);
	sqlite3_finalize(input);
}

struct drain {
	sqlite3_stmt *begin, *commit, *claim, *attempt, *event, *finish, *attempt_end, *input;
	const char *started_detail, *succeeded_detail;
	long long *id, *attempt_no;
	int held;
};

static void event(struct drain *d, int i, long long at, const char *type, const char *detail)
{
	sqlite3_bind_int64(d->event, 1, d->id[i]);
	sqlite3_bind_int64(d->event, 2, at);
	sqlite3_bind_int64(d->event, 3, d->attempt_no[i]);
	sqlite3_bind_text(d->event, 4, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(d->event, 5, detail, -1, SQLITE_STATIC);
	step(d->event);
}

/* The held batch finished, fenced: a row not changed would be a lost task. */
static void finish(struct drain *d, long long at)
{
	for (int i = 0; i < d->held; i++) {
		sqlite3_bind_int64(d->finish, 1, d->id[i]);
		sqlite3_bind_int64(d->finish, 2, d->attempt_no[i]);
		sqlite3_bind_int64(d->finish, 3, at);
		step(d->finish);
		if (sqlite3_changes(db) != 1)
			die("a finish was fenced off");
		sqlite3_bind_int64(d->attempt_end, 1, d->id[i]);
		sqlite3_bind_int64(d->attempt_end, 2, d->attempt_no[i]);
		sqlite3_bind_int64(d->attempt_end, 3, at);
		step(d->attempt_end);
		event(d, i, at, "succeeded", d->succeeded_detail);
	}
}

/* Up to b pending tasks claimed into the held batch, with their rows and events. */
static void claim(struct drain *d, int b, long long at)
{
	int r;

	d->held = 0;
	sqlite3_bind_int(d->claim, 1, b);
	sqlite3_bind_int64(d->claim, 2, at);
	while ((r = sqlite3_step(d->claim)) == SQLITE_ROW) {
		d->id[d->held] = sqlite3_column_int64(d->claim, 0);
		d->attempt_no[d->held] = sqlite3_column_int64(d->claim, 1);
		(void)sqlite3_column_text(d->claim, 2); /* what a handler gets */
		d->held++;
	}
	if (r != SQLITE_DONE)
		die("claim");
	sqlite3_reset(d->claim);
	for (int i = 0; i < d->held; i++) {
		if (d->input) { /* the fixed part a handler gets */
			sqlite3_bind_int64(d->input, 1, d->id[i]);
			if (sqlite3_step(d->input) != SQLITE_ROW)
				die("task_input");
			(void)sqlite3_column_text(d->input, 0);
			(void)sqlite3_column_text(d->input, 1);
			sqlite3_reset(d->input);
		}
		sqlite3_bind_int64(d->attempt, 1, d->id[i]);
		sqlite3_bind_int64(d->attempt, 2, d->attempt_no[i]);
		sqlite3_bind_int64(d->attempt, 3, at);
		step(d->attempt);
		event(d, i, at, "claimed", d->started_detail);
		event(d, i, at, "started", d->started_detail);
	}
}

/* The counted part: every task claimed and finished, b at a time. */
__attribute__((noinline)) static long drain(struct drain *d, int b)
{
	long done = 0;

	do {
		long long at = (long long)(now_s() * 1e6);

		step(d->begin);
		finish(d, at);
		done += d->held;
		claim(d, b, at);
		step(d->commit);
	} while (d->held > 0);
	return done;
}

int main(int argc, char **argv)
{
	const char *flags = argc > 4 ? argv[4] : "";
	struct drain d = {0};
	char wal[4096];
	double t;
	long done;
	int n, b;

	if (argc < 4 || (n = atoi(argv[2])) <= 0 || (b = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: sqlite_floor DB N B [FLAGS: w i f d]\n");
		return 2;
	}
	snprintf(wal, sizeof(wal), "%s-wal", argv[1]);
	remove(argv[1]);
	remove(wal);
	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		die(argv[1]);
	split = !!strchr(flags, 'n');
	schema(!!strchr(flags, 'w'), !!strchr(flags, 'i'), !!strchr(flags, 'f'));
	fill(n);
	d.begin = prep("BEGIN IMMEDIATE");
	d.commit = prep("COMMIT");
	d.claim = prep("UPDATE tasks SET state = 'running', attempt = attempt + 1, instance = "
		       "'w1', updated_at = ?2 WHERE id IN (SELECT id FROM tasks WHERE kind = "
		       "'bench' AND state = 'pending' AND due_at <= ?2 ORDER BY due_at, id "
		       "LIMIT ?1) RETURNING id, attempt, payload, kind, operation");
	d.attempt = prep("INSERT INTO attempts (task_id, attempt, instance, started_at) "
			 "VALUES (?1, ?2, 'w1', ?3)");
	d.event = prep("INSERT INTO events (task_id, at, attempt, type, detail) "
		       "VALUES (?1, ?2, ?3, ?4, ?5)");
	d.finish = prep("UPDATE tasks SET state = 'succeeded', finished_at = ?3, updated_at "
			"= ?3, outcome = 'ok' WHERE id = ?1 AND attempt = ?2 AND state = "
			"'running' AND instance = 'w1'");
	if (split)
		d.input = prep("SELECT tenant, scope, payload_version, lock_key, parent_id, depth "
			       "FROM task_input WHERE id = ?1");
	d.attempt_end = prep("UPDATE attempts SET finished_at = ?3, outcome = 'succeeded' "
			     "WHERE task_id = ?1 AND attempt = ?2");
	if (strchr(flags, 'd')) {
		d.started_detail = "{\"attempt_id\":\"123.1\",\"host\":\"h\",\"in_process\":"
				   "true,\"instance\":\"0123456789abcdef0123\",\"pid\":1234}";
		d.succeeded_detail = "{\"attempt_id\":\"123.1\",\"duration_ms\":0,"
				     "\"exit_status\":0,\"outcome\":\"ok\",\"result_sha256\":"
				     "\"\",\"result_size\":0,\"stderr_bytes\":0}";
	} else {
		d.started_detail = "{\"instance\":\"w1\"}";
		d.succeeded_detail = "{\"outcome\":\"ok\"}";
	}
	d.id = calloc((size_t)b, sizeof(*d.id));
	d.attempt_no = calloc((size_t)b, sizeof(*d.attempt_no));
	if (!d.id || !d.attempt_no)
		return 1;
	t = now_s();
	done = drain(&d, b);
	t = now_s() - t;
	if (done != n)
		die("not every task was drained");
	printf("sqlite_floor n=%d batch=%d flags=%s tasks_per_s=%.0f us_per_task=%.2f\n", n, b,
	       *flags ? flags : "-", (double)done / t, t * 1e6 / (double)done);
	return 0;
}
