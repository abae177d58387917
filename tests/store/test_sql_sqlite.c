/*
 * test_sql_sqlite.c — the SQLite driver (src/store/sql_sqlite.c) on its own: open and its
 * refusals, the migrations run through script(), binding and reading back by type, the
 * $N -> ?N rewrite, error mapping, transactions, changes(), close-on-exec descriptors.
 *
 * The driver file is included, not linked: the test reaches its static helpers (prepare,
 * cursor_start, rewrite_params) to run SQL of its own with the driver's binding, and
 * shortens one connection's busy timeout. Everything else goes through wq__sqlite_driver.
 *
 * Build: linked with wakeq_static (dialect_sqlite.c, schema_sqlite.c, sql.c), or on its
 * own with -DWQ_TEST_STUB_SQL_TEXT when sql.c is not there yet:
 *   gcc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -DWQ_TEST_STUB_SQL_TEXT \
 *       tests/store/test_sql_sqlite.c src/store/schema_sqlite.c src/store/dialect_sqlite.c \
 *       -lsqlite3 -lcmocka
 */
#include "store/sql_sqlite.c"
#include "store/op.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef WQ_TEST_STUB_SQL_TEXT
/* sql.c's, for a build without it: the dialect's table holds every text. */
const char *wq__sql_text(const struct wq__dialect *d, int id)
{
	return d->variant(id);
}
#endif

static const struct wq__sql_driver *const D = &wq__sqlite_driver;

struct fixture {
	char dir[64];
	char db[128];
	struct wq__conn *c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char msg[256];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/wq-sqlt-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db.sqlite", f->dir);
	unsetenv("WAKEQ_SQLITE_SYNCHRONOUS");
	assert_int_equal(D->open(f->db, &f->c, msg, sizeof(msg)), WQ__SQL_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d;
	struct dirent *e;
	char p[512];

	D->close(f->c);
	d = opendir(f->dir);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Runs SQL text of the test's own through the driver's prepare and binding: the returned
 * cursor (in *cur, its statement owned by the caller: finalize cur->st) is ready to step. */
static int run(struct wq__conn *c, const char *sql, const struct wq__arg *args, int nargs,
	       struct wq__cursor *cur)
{
	sqlite3_stmt *st;
	int rc = prepare(c, sql, &st);

	memset(cur, 0, sizeof(*cur));
	if (rc)
		return rc;
	rc = cursor_start(c, cur, st, args, nargs);
	if (rc)
		sqlite3_finalize(st);
	return rc;
}

/* The single integer a query returns. */
static int64_t scalar(struct wq__conn *c, const char *sql)
{
	struct wq__cursor cur;
	int64_t v;

	assert_int_equal(run(c, sql, NULL, 0, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(&cur), 1);
	v = D->col_i64(&cur, 0);
	sqlite3_finalize(cur.st);
	return v;
}

/* How many temporary b-trees (OpenEphemeral) the program of sql opens: one inside a
 * row loop is paid for every row (an IN list in a CHECK or a partial index's WHERE). */
static int ephemerals_of(struct wq__conn *c, const char *sql, const struct wq__arg *args,
			 int nargs)
{
	struct wq__cursor cur;
	size_t len;
	int n = 0;

	assert_int_equal(run(c, sql, args, nargs, &cur), WQ__SQL_OK);
	while (D->step(&cur) == 1)
		n += strcmp(D->col_text(&cur, 1, &len), "OpenEphemeral") == 0;
	sqlite3_finalize(cur.st);
	return n;
}

/* A script text of the dialect's, run as the core runs it. */
static void dialect_script(struct wq__conn *c, int id)
{
	assert_int_equal(D->script(c, wq__sqlite_dialect.variant(id)), WQ__SQL_OK);
}

/* Every step, as the core runs it (op_store.c migrate()): foreign keys unenforced around
 * the steps; each step begin(write), script, no dangling reference, the version row,
 * commit. */
static void migrate(struct wq__conn *c)
{
	struct wq__cursor *cur;
	size_t i;

	dialect_script(c, SQL_MIGRATE_FK_OFF);
	for (i = 0; i < wq__sqlite_nmigrations; i++) {
		const struct wq__migration *m = &wq__sqlite_migrations[i];
		struct wq__arg v = WQ__AI(m->version);

		assert_int_equal(m->version, (int)i + 1);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		assert_int_equal(D->script(c, m->sql), WQ__SQL_OK);
		assert_int_equal(D->exec(c, SQL_SET_VERSION, &v, 1, &cur), WQ__SQL_OK);
		assert_int_equal(D->step(cur), 0);
		assert_int_equal(D->changes(cur), 1);
		D->done(cur);
		assert_int_equal(scalar(c, wq__sqlite_dialect.variant(SQL_MIGRATE_FK_DANGLING)), 0);
		assert_int_equal(D->commit(c), WQ__SQL_OK);
	}
	dialect_script(c, SQL_MIGRATE_FK_ON);
}

static void test_path_forms(void **state)
{
	(void)state;
	assert_string_equal(wq__sqlite_path("sqlite:///var/x.db"), "/var/x.db");
	assert_string_equal(wq__sqlite_path("file:///var/x.db"), "/var/x.db");
	assert_string_equal(wq__sqlite_path("sqlite:rel.db"), "rel.db");
	assert_string_equal(wq__sqlite_path("file:rel.db"), "rel.db");
	assert_string_equal(wq__sqlite_path("/plain/x.db"), "/plain/x.db");
}

static void test_migrations_and_version(void **state)
{
	struct fixture *f = *state;
	struct wq__cursor *cur;

	assert_string_equal(D->label(f->c), f->db);
	migrate(f->c);
	assert_int_equal(D->exec(f->c, SQL_SCHEMA_VERSION, NULL, 0, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	assert_int_equal(D->col_i64(cur, 0), (int64_t)wq__sqlite_nmigrations);
	assert_int_equal(D->step(cur), 0);
	D->done(cur);
	/* v4: host_id, and a floor for every table whose ids leave the store. */
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM pragma_table_info('instances') "
				      "WHERE name = 'host_id'"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM id_floor WHERE tbl IN "
				      "('tasks', 'events', 'deliveries', 'inbox') AND id = 0"),
			 4);
	assert_int_equal(scalar(f->c, "PRAGMA foreign_keys"), 1);
	assert_int_equal(scalar(f->c, "PRAGMA synchronous"), 2); /* FULL */
}

/* A database at v3 with rows, as the field has them, gets floors at each table's max. */
static const char v3_rows[] =
	"INSERT INTO tasks (id, kind, operation, payload, payload_size, payload_sha256, "
	"payload_version, priority, state, due_at, order_at, created_at, updated_at, "
	"max_attempts) VALUES (7, 'k', 'op', '{}', 2, '', 1, 0, 'pending', 0, 0, 0, 0, 1);"
	"INSERT INTO events (id, task_id, at, type) VALUES (41, 7, 0, 'x');"
	"INSERT INTO inbox (id, recipient, notice_key, delivery_id, task_id, kind, operation, "
	"subject, created_at) VALUES (9, 'r', 'k', 1, 7, 'k', 'op', 's', 0);"
	"INSERT INTO id_floor (tbl, id) VALUES ('tasks', 12);";

/* Steps 1-3 and v3_rows, in the caller's transaction. */
static void v3_with_rows(struct wq__conn *c)
{
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(D->script(c, wq__sqlite_migrations[i].sql), WQ__SQL_OK);
	assert_int_equal(D->script(c, v3_rows), WQ__SQL_OK);
}

/* Steps 1-3, v3_rows, then steps 4 onwards, in one transaction, foreign keys
 * unenforced around it as the core runs steps. */
static void migrate_from_v3_rows(struct wq__conn *c)
{
	size_t i;

	assert_true(wq__sqlite_nmigrations >= 4);
	dialect_script(c, SQL_MIGRATE_FK_OFF);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	v3_with_rows(c);
	assert_int_equal(wq__sqlite_migrations[3].version, 4);
	for (i = 3; i < wq__sqlite_nmigrations; i++)
		assert_int_equal(D->script(c, wq__sqlite_migrations[i].sql), WQ__SQL_OK);
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	dialect_script(c, SQL_MIGRATE_FK_ON);
}

/* Wave 6 (chk): a v3 store with rows, migrated by the core's own open: step 4 rebuilds
 * tasks with its state CHECK as ORs, and the rows that reference a task survive the old
 * table's drop (with foreign keys enforced, its ON DELETE CASCADE would have deleted
 * them); the CHECK still refuses an unknown state; an insert into tasks builds no
 * temporary table any more; foreign keys are enforced again afterwards. */
static void test_v4_tasks_rebuilt_children_kept(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg v = WQ__AI(3);
	struct wq__cursor cur, *vc;
	struct wq__store *s = NULL;
	wq_error err = {0};

	assert_int_equal(D->begin(f->c, 1), WQ__SQL_OK);
	v3_with_rows(f->c);
	assert_int_equal(D->exec(f->c, SQL_SET_VERSION, &v, 1, &vc), WQ__SQL_OK);
	assert_int_equal(D->step(vc), 0);
	D->done(vc);
	assert_int_equal(D->commit(f->c), WQ__SQL_OK);

	/* the core's open, and its connection afterwards: enforcing foreign keys again */
	assert_int_equal(wq__sqlite_methods.open(f->db, WQ_OPEN_MIGRATE, &s, &err), WQ_OK);
	assert_int_equal(scalar(s->c, "PRAGMA foreign_keys"), 1);
	wq__sqlite_methods.close(s);

	assert_int_equal(scalar(f->c, "SELECT max(version) FROM schema_version"),
			 WQ_SCHEMA_VERSION);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM tasks WHERE id = 7 AND kind = 'k' "
				      "AND operation = 'op' AND state = 'pending' AND "
				      "max_attempts = 1 AND depth = 0"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM events WHERE id = 41 AND task_id = 7"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM inbox WHERE id = 9"), 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM sqlite_master WHERE name = 'tasks' "
				      "AND sql LIKE '% IN (%'"),
			 0);
	/* wave7 drain: no tasks_running_instance, no tasks_running_kind; tasks_due added */
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
				      "AND tbl_name = 'tasks'"),
			 6);
	/* the CHECK holds */
	assert_int_equal(run(f->c, "UPDATE tasks SET state = 'bogus' WHERE id = 7", NULL, 0, &cur),
			 WQ__SQL_OK);
	assert_int_equal(D->step(&cur), -WQ__SQL_ERROR);
	assert_non_null(strstr(D->errmsg(f->c), "CHECK constraint failed"));
	sqlite3_finalize(cur.st);
	/* no temporary table per row */
	assert_int_equal(ephemerals_of(f->c, "EXPLAIN INSERT INTO tasks (kind, operation, "
					     "payload, payload_size, payload_sha256, "
					     "payload_version, priority, state, due_at, order_at, "
					     "created_at, updated_at, max_attempts) VALUES ('k', "
					     "'o2', '{}', 2, '', 1, 0, 'pending', 0, 0, 0, 0, 1)",
				       NULL, 0),
			 0);
}

static void test_v4_floors_existing_ids(void **state)
{
	struct fixture *f = *state;

	migrate_from_v3_rows(f->c);
	assert_int_equal(scalar(f->c, "SELECT id FROM id_floor WHERE tbl = 'tasks'"), 12);
	assert_int_equal(scalar(f->c, "SELECT id FROM id_floor WHERE tbl = 'events'"), 41);
	assert_int_equal(scalar(f->c, "SELECT id FROM id_floor WHERE tbl = 'deliveries'"), 0);
	assert_int_equal(scalar(f->c, "SELECT id FROM id_floor WHERE tbl = 'inbox'"), 9);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM instances"), 0);
}

/* The EXPLAIN QUERY PLAN of dialect statement id with args, one detail per line. */
static void plan_of(struct wq__conn *c, int id, const struct wq__arg *args, int nargs,
		    char *plan, size_t size)
{
	struct wq__cursor cur;
	size_t len, used = 0;
	char *sql = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", wq__sqlite_dialect.variant(id));

	assert_non_null(sql);
	plan[0] = '\0';
	assert_int_equal(run(c, sql, args, nargs, &cur), WQ__SQL_OK);
	while (D->step(&cur) == 1) {
		const char *detail = D->col_text(&cur, 3, &len);

		used += (size_t)snprintf(plan + used, size - used, "%.*s\n", (int)len, detail);
		assert_true(used < size);
	}
	sqlite3_finalize(cur.st);
	sqlite3_free(sql);
}

/* wave7 drain: the statements that read running tasks by kind or by instance, served by
 * tasks_claim's (state = 'running') prefix now that tasks_running_kind and
 * tasks_running_instance are gone: a search over the running tasks, never a scan of
 * the table (finished tasks included). */
static void test_v4_running_reads(void **state)
{
	struct fixture *f = *state;
	/* each statement's leading arguments of these (kind or instance, ...) */
	const struct wq__arg args[] = {WQ__AT("i"), WQ__AT("[1]"), WQ__AI(0)};
	static const struct {
		int id, nargs;
	} st[] = {{SQL_KIND_RUNNING, 1},       {SQL_CANCEL_REQUESTS, 1}, {SQL_RECLAIM, 2},
		  {SQL_INTERRUPT_INSTANCE, 3}, {SQL_STATS_RUNNING, 0},   {SQL_STATS_INSTANCES, 0}};
	char plan[2048];

	migrate(f->c);
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		plan_of(f->c, st[i].id, args, st[i].nargs, plan, sizeof(plan));
		if (!strstr(plan, "USING INDEX tasks_claim (state=?") &&
		    !strstr(plan, "USING COVERING INDEX tasks_claim (state=?"))
			fail_msg("statement %d: %s", st[i].id, plan);
		assert_null(strstr(plan, "running_"));
	}
}

/* The earliest due time of the served kinds (an idle worker's next wake-up, read after
 * each claim round that leaves a slot free; the next-due read) is a search of
 * tasks_due, never a walk through the kind's pending tasks: with a backlog held back by
 * a turn lock or a kind limit, that walk ran once per finished task. wave 11: tasks_due
 * holds the tasks not due at their enqueue; the next-due read looks for one that was
 * in the kind's range of tasks_claim (stopping at the first). */
static void test_v4_next_due_reads(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg args[] = {WQ__AT("[\"k\"]"), WQ__AI(0)};
	static const int st[] = {SQL_WAKE_NEXT, SQL_NEXT_DUE};
	char plan[2048];

	migrate(f->c);
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		plan_of(f->c, st[i], args, st[i] == SQL_WAKE_NEXT ? 2 : 1, plan, sizeof(plan));
		if (!strstr(plan, "INDEX tasks_due (kind=?"))
			fail_msg("statement %d: %s", st[i], plan);
		if (st[i] == SQL_NEXT_DUE &&
		    !strstr(plan, "INDEX tasks_claim (state=? AND kind=?)"))
			fail_msg("statement %d: %s", st[i], plan);
	}
}

/* wave8 sqlw2: a batch's facts (SQL_TASK_STATES) are rowid lookups of the ids given,
 * in their order, with no temporary b-tree (an IN list built one every run); a missing
 * id gives no row. */
static void test_v4_task_facts_read(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg ids = WQ__AT("[7, 8, 9]");
	struct wq__cursor *cur;
	char plan[2048], *sql;

	migrate_from_v3_rows(f->c); /* task 7: pending */
	assert_int_equal(D->script(f->c,
		"INSERT INTO tasks (id, kind, operation, payload, payload_size, payload_sha256, "
		"payload_version, priority, state, due_at, order_at, created_at, updated_at, "
		"max_attempts, notify) VALUES (9, 'k', 'op9', '{}', 2, '', 1, 0, 'running', 0, "
		"0, 0, 0, 1, '[\"c\"]')"),
			 WQ__SQL_OK);
	plan_of(f->c, SQL_TASK_STATES, &ids, 1, plan, sizeof(plan));
	if (!strstr(plan, "SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)"))
		fail_msg("facts: %s", plan);
	sql = sqlite3_mprintf("EXPLAIN %s", wq__sqlite_dialect.variant(SQL_TASK_STATES));
	assert_non_null(sql);
	assert_int_equal(ephemerals_of(f->c, sql, &ids, 1), 0);
	sqlite3_free(sql);
	assert_int_equal(D->exec(f->c, SQL_TASK_STATES, &ids, 1, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	assert_int_equal(D->col_i64(cur, 0), 7);
	assert_int_equal(D->col_i64(cur, 6), 0); /* no notify list */
	assert_int_equal(D->step(cur), 1);
	assert_int_equal(D->col_i64(cur, 0), 9);
	assert_int_equal(D->col_i64(cur, 6), 1);
	assert_int_equal(D->step(cur), 0);
	D->done(cur);
}

/* wave8 sqlw2: SQL_FINISH_SUCCEEDED_ROWS32 (and 16) looks each row's task up by rowid
 * (never a walk of the running tasks), builds its two temporary b-trees once a run (the
 * rows, the rows to change), and changes only the rows its fence holds
 * (SQL_FINISH_SUCCEEDED's WQ__OWNED): of 32 rows for tasks 1..32, attempt 1 of w1, task
 * 32's claims attempt 2 and task 7 is pending: 30 change, each with its own values. */
static void test_v4_finish_rows(void **state)
{
	struct fixture *f = *state;
	struct wq__arg a[32 * 10];
	struct wq__cursor *cur;
	char plan[2048], *sql;
	int64_t n;

	migrate(f->c);
	for (int r = 0; r < 32; r++) {
		char *ins = sqlite3_mprintf(
			"INSERT INTO tasks (id, kind, operation, payload, payload_size, "
			"payload_sha256, payload_version, priority, state, due_at, order_at, "
			"created_at, updated_at, max_attempts, attempt, instance) VALUES (%d, 'k', "
			"'op%d', '{}', 2, '', 1, 0, '%s', 0, 0, 0, 0, 3, 1, 'w1')",
			r + 1, r + 1, r == 6 ? "pending" : "running");

		assert_int_equal(D->script(f->c, ins), WQ__SQL_OK);
		sqlite3_free(ins);
		a[r * 10 + 0] = WQ__AI(r + 1);
		a[r * 10 + 1] = WQ__AI(r == 31 ? 2 : 1);
		a[r * 10 + 2] = WQ__AT("w1");
		a[r * 10 + 3] = WQ__AI(100 + r);
		a[r * 10 + 4] = WQ__AT(r == 1 ? "discarded" : "");
		a[r * 10 + 5] = r == 1 ? WQ__ANULL : WQ__AB("res", 3);
		a[r * 10 + 6] = WQ__AI(r == 1 ? 0 : 3);
		a[r * 10 + 7] = WQ__AT(r == 1 ? "" : "sha");
		a[r * 10 + 8] = WQ__AI(r != 1);
		a[r * 10 + 9] = WQ__AI(r);
	}
	plan_of(f->c, SQL_FINISH_SUCCEEDED_ROWS32, a, 320, plan, sizeof(plan));
	if (!strstr(plan, "SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)") ||
	    strstr(plan, "SCAN tasks") || strstr(plan, "INDEX tasks_claim"))
		fail_msg("finish rows: %s", plan);
	sql = sqlite3_mprintf("EXPLAIN %s",
			      wq__sqlite_dialect.variant(SQL_FINISH_SUCCEEDED_ROWS32));
	assert_non_null(sql);
	assert_int_equal(ephemerals_of(f->c, sql, a, 320), 2);
	sqlite3_free(sql);
	plan_of(f->c, SQL_FINISH_SUCCEEDED_ROWS16, a, 160, plan, sizeof(plan));
	if (!strstr(plan, "SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)") ||
	    strstr(plan, "SCAN tasks") || strstr(plan, "INDEX tasks_claim"))
		fail_msg("finish rows (16): %s", plan);
	assert_int_equal(D->exec(f->c, SQL_FINISH_SUCCEEDED_ROWS32, a, 320, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 0);
	assert_int_equal(D->changes(cur), 30);
	D->done(cur);
	n = scalar(f->c, "SELECT count(*) FROM tasks WHERE state = 'succeeded' AND "
			 "finished_at = 99 + id AND updated_at = finished_at AND "
			 "last_exit_status = id - 1 AND reason = '' AND ((id = 2 AND result IS NULL "
			 "AND has_result = 0 AND outcome = 'discarded' AND result_size = 0) OR "
			 "(id <> 2 AND result = CAST('res' AS BLOB) AND has_result = 1 AND "
			 "result_size = 3 AND result_sha256 = 'sha' AND outcome = ''))");
	assert_int_equal(n, 30);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM tasks WHERE id IN (7, 32) AND "
				      "state <> 'succeeded' AND finished_at = 0"),
			 2);
}

/* wave7 drain: tasks_claim holds live tasks only (a finished task leaves it), its WHERE
 * costs no temporary table per state change (ORs, not IN), and the statements that read
 * it still may: the active count (written to match), the claim; prune reads
 * tasks_finished. */
static void test_v4_claim_live_states(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg args[] = {WQ__AT(""), WQ__AT("")};
	const struct wq__arg claim[] = {WQ__AT("i"), WQ__AI(0), WQ__AT("k"), WQ__AI(8),
					WQ__AT("{}")};
	char plan[2048];

	migrate_from_v3_rows(f->c); /* task 7: pending */
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM sqlite_master WHERE name = "
				      "'tasks_claim' AND sql LIKE '%WHERE state = ''pending'' OR "
				      "state = ''running'' OR state = ''interrupted'''"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM tasks INDEXED BY tasks_claim WHERE "
				      "state = 'pending'"),
			 1);
	assert_int_equal(D->script(f->c, "UPDATE tasks SET state = 'succeeded' WHERE id = 7"),
			 WQ__SQL_OK);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM tasks INDEXED BY tasks_claim WHERE "
				      "state = 'pending' OR state = 'running' OR state = "
				      "'interrupted'"),
			 0);
	assert_int_equal(ephemerals_of(f->c, "EXPLAIN UPDATE tasks SET state = 'running' "
					     "WHERE id = 7", NULL, 0),
			 0);
	plan_of(f->c, SQL_ACTIVE_COUNT, args, 2, plan, sizeof(plan));
	assert_non_null(strstr(plan, "USING INDEX tasks_claim (state=?)"));
	plan_of(f->c, SQL_CLAIM_KIND, claim, 5, plan, sizeof(plan));
	if (!strstr(plan, "SEARCH p USING INDEX tasks_claim (state=? AND kind=? AND held=? AND order_at<?)"))
		fail_msg("claim: %s", plan);
	plan_of(f->c, SQL_PRUNE_TASKS, claim + 1, 1, plan, sizeof(plan));
	assert_non_null(strstr(plan, "USING INDEX tasks_finished (finished_at<?)"));
}

/* Wave 5 (pages per enqueue): the v4 step leaves tasks without a lock key (and tasks
 * past pending) out of tasks_lock and unlinked operations out of operations_task, on a
 * database migrated from v3; and the claim's FIFO-per-key rule is still served by
 * tasks_lock (a plan over tasks_claim would read every pending task before the one
 * tested). INDEXED BY fails to prepare when the index cannot serve the WHERE clause. */
static void test_v4_partial_indexes(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg args[] = {WQ__AI(0), WQ__AT("[\"k\"]")};
	struct wq__cursor cur;
	char plan[2048] = "";
	size_t len, used = 0;
	char *sql;

	migrate_from_v3_rows(f->c); /* task 7: pending, no lock key */
	assert_int_equal(D->script(f->c,
		"UPDATE tasks SET lock_key = 'a' WHERE id = 7;"
		"INSERT INTO tasks (id, kind, operation, payload, payload_size, payload_sha256, "
		"payload_version, priority, state, due_at, order_at, created_at, updated_at, "
		"max_attempts, lock_key) VALUES (8, 'k', 'op8', '{}', 2, '', 1, 0, 'running', 0, "
		"0, 0, 0, 1, 'a'), (9, 'k', 'op9', '{}', 2, '', 1, 0, 'pending', 0, 0, 0, 0, 1, '');"
		"INSERT INTO operations (tenant, scope, kind, key, fingerprint, payload_version, "
		"task_id, created_at) VALUES ('', '', 'k', 'a', '', 1, 0, 0), "
		"('', '', 'k', 'b', '', 1, 7, 0);"),
			 WQ__SQL_OK);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM tasks INDEXED BY tasks_lock "
				      "WHERE lock_key <> '' AND state = 'pending'"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM operations INDEXED BY "
				      "operations_task WHERE task_id <> 0"),
			 1);
	assert_int_equal(scalar(f->c, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
				      "AND name IN ('tasks_lock', 'operations_task') AND sql LIKE "
				      "'% WHERE %'"),
			 2);
	sql = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", wq__sqlite_dialect.variant(SQL_CLAIM_PROBE));
	assert_non_null(sql);
	assert_int_equal(run(f->c, sql, args, 2, &cur), WQ__SQL_OK);
	while (D->step(&cur) == 1) {
		const char *detail = D->col_text(&cur, 3, &len);

		used += (size_t)snprintf(plan + used, sizeof(plan) - used, "%.*s\n", (int)len,
					 detail);
		assert_true(used < sizeof(plan));
	}
	sqlite3_finalize(cur.st);
	sqlite3_free(sql);
	assert_non_null(strstr(plan, "SEARCH o USING INDEX tasks_lock (lock_key=? AND order_at<?)"));
}

/* The WAL's directory is synced once per WAL file, not per process (sqlite_vfs.c): a
 * synchronous=FULL commit marks the WAL (SQLite synced the directory with it), a later
 * connection still writes and reads through it, and a commit in synchronous=OFF (no
 * sync, so no directory sync either) leaves a new WAL unmarked. A file system without
 * user xattrs cannot hold the mark: then nothing is marked (SQLite syncs the directory
 * in every process, as before), which the test states instead of skipping. */
/* A marked WAL copied with its attributes (cp -a) to another directory, or renamed into
 * one, carries a mark naming another file or directory: not trusted there (its new
 * directory entry must be synced). */
static void wal_mark_copies(struct fixture *f, const char *wal)
{
	char v[128], sub[200], copy[240], moved[240];
	ssize_t n = getxattr(wal, "user.wakeq.wal-dirsynced", v, sizeof(v));
	FILE *fp;

	assert_true(n > 0);
	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(copy, sizeof(copy), "%s/copy-wal", sub);
	assert_non_null(fp = fopen(copy, "w"));
	fclose(fp);
	assert_int_equal(setxattr(copy, "user.wakeq.wal-dirsynced", v, (size_t)n, 0), 0);
	assert_int_equal(wq__sqlite_wal_has_mark(copy), 0); /* another inode */
	/* the same inode in another directory: a hard link stands for a rename */
	snprintf(moved, sizeof(moved), "%s/moved-wal", sub);
	assert_int_equal(link(wal, moved), 0);
	assert_int_equal(wq__sqlite_wal_has_mark(moved), 0);
	assert_int_equal(wq__sqlite_wal_has_mark(wal), 1);
	unlink(moved);
	unlink(copy);
	rmdir(sub);
}

static void test_wal_dirsync_mark(void **state)
{
	struct fixture *f = *state;
	struct wq__conn *c2 = NULL;
	char wal[160], v[4] = "", msg[256];
	int xattrs;

	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	migrate(f->c);
	xattrs = setxattr(f->dir, "user.wq-test", "1", 1, 0) == 0 || errno != ENOTSUP;
	if (xattrs) {
		assert_int_equal(wq__sqlite_wal_has_mark(wal), 1);
		wal_mark_copies(f, wal);
	} else {
		assert_int_equal(getxattr(wal, "user.wakeq.wal-dirsynced", v, sizeof(v)), -1);
	}
	assert_int_equal(D->open(f->db, &c2, msg, sizeof(msg)), WQ__SQL_OK);
	assert_int_equal(D->script(c2, "CREATE TABLE t2 (x INTEGER); INSERT INTO t2 VALUES (1)"),
			 WQ__SQL_OK);
	assert_int_equal(scalar(f->c, "SELECT x FROM t2"), 1);
	D->close(c2);
	assert_int_equal(D->script(f->c, "PRAGMA wal_checkpoint(TRUNCATE)"), WQ__SQL_OK);
	D->close(f->c);
	f->c = NULL;

	/* a new WAL (the old one checkpointed, empty), written without syncs: no mark */
	assert_int_equal(unlink(wal), 0);
	setenv("WAKEQ_SQLITE_SYNCHRONOUS", "OFF", 1);
	assert_int_equal(D->open(f->db, &f->c, msg, sizeof(msg)), WQ__SQL_OK);
	unsetenv("WAKEQ_SQLITE_SYNCHRONOUS");
	assert_int_equal(D->script(f->c, "INSERT INTO t2 VALUES (2)"), WQ__SQL_OK);
	assert_int_equal(access(wal, F_OK), 0);
	assert_int_equal(getxattr(wal, "user.wakeq.wal-dirsynced", v, sizeof(v)), -1);
}

static void test_bind_and_read(void **state)
{
	struct fixture *f = *state;
	static const char bytes[] = {'a', 0, (char)0xff, 'b'};
	const struct wq__arg ins[] = {
		WQ__AT("héllo"), WQ__AB(bytes, sizeof(bytes)), WQ__AI(INT64_MIN), WQ__ANULL,
		WQ__AT(NULL), {WQ__ARG_TEXT, 0, "abcdef", 3}, WQ__AB("", 0),
	};
	struct wq__cursor cur;
	size_t len;
	const char *p;

	assert_int_equal(D->script(f->c, "CREATE TABLE t (s TEXT, b BLOB, n INTEGER, z TEXT, "
					 "e TEXT, l TEXT, eb BLOB)"),
			 WQ__SQL_OK);
	assert_int_equal(run(f->c, "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)", ins, 7,
			     &cur),
			 WQ__SQL_OK);
	assert_int_equal(D->step(&cur), 0);
	assert_int_equal(D->changes(&cur), 1);
	sqlite3_finalize(cur.st);

	assert_int_equal(run(f->c, "SELECT s, b, n, z, e, l, eb, typeof(s), typeof(b), "
				   "typeof(e), typeof(l), typeof(eb) FROM t",
			     NULL, 0, &cur),
			 WQ__SQL_OK);
	assert_int_equal(D->step(&cur), 1);
	assert_string_equal(D->col_text(&cur, 0, &len), "héllo");
	assert_int_equal(len, strlen("héllo"));
	p = D->col_text(&cur, 1, &len);
	assert_int_equal(len, sizeof(bytes));
	assert_memory_equal(p, bytes, sizeof(bytes));
	assert_true(D->col_i64(&cur, 2) == INT64_MIN);
	assert_true(D->is_null(&cur, 3));
	assert_false(D->is_null(&cur, 4));
	assert_string_equal(D->col_text(&cur, 3, &len), ""); /* NULL reads as "" */
	assert_int_equal(len, 0);
	assert_string_equal(D->col_text(&cur, 4, NULL), "");
	assert_string_equal(D->col_text(&cur, 5, NULL), "abc");
	assert_false(D->is_null(&cur, 6)); /* an empty blob is not NULL */
	/* Storage classes as sqlite.c stored them: TEXT stays text, BLOB stays blob. */
	assert_string_equal(D->col_text(&cur, 7, NULL), "text");
	assert_string_equal(D->col_text(&cur, 8, NULL), "blob");
	assert_string_equal(D->col_text(&cur, 9, NULL), "text");
	assert_string_equal(D->col_text(&cur, 10, NULL), "text");
	assert_string_equal(D->col_text(&cur, 11, NULL), "blob");
	assert_int_equal(D->step(&cur), 0);
	sqlite3_finalize(cur.st);
}

static void test_rewrite_params(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg args[] = {WQ__AT("one"), WQ__AI(2)};
	struct wq__cursor cur;
	char sql[] = "SELECT $1, '$2''$1', \"$3\", `$4`, [$5] -- $6\n, /* $7 */ $12, $x";

	rewrite_params(sql);
	assert_string_equal(sql,
			    "SELECT ?1, '$2''$1', \"$3\", `$4`, [$5] -- $6\n, /* $7 */ ?12, $x");

	/* Out of order and repeated numbers bind by number, not by first appearance. */
	assert_int_equal(run(f->c, "SELECT $2, $1, $2, '$1', 'it''s $2' /* $9 */ -- $8\n",
			     args, 2, &cur),
			 WQ__SQL_OK);
	assert_int_equal(D->step(&cur), 1);
	assert_int_equal(D->col_i64(&cur, 0), 2);
	assert_string_equal(D->col_text(&cur, 1, NULL), "one");
	assert_int_equal(D->col_i64(&cur, 2), 2);
	assert_string_equal(D->col_text(&cur, 3, NULL), "$1");
	assert_string_equal(D->col_text(&cur, 4, NULL), "it's $2");
	assert_int_equal(D->step(&cur), 0);
	D->done(&cur);
	sqlite3_finalize(cur.st);

	/* Too few arguments is an error, not a silent NULL; extra ones are ignored. */
	assert_int_equal(run(f->c, "SELECT $2", args, 1, &cur), WQ__SQL_ERROR);
	assert_non_null(strstr(D->errmsg(f->c), "takes 2 arguments, 1 given"));
	assert_int_equal(run(f->c, "SELECT $1", args, 2, &cur), WQ__SQL_OK);
	sqlite3_finalize(cur.st);
}

static void test_constraint_errors(void **state)
{
	struct fixture *f = *state;
	const struct wq__arg one = WQ__AI(1);
	const struct wq__arg ev = WQ__AI(999);
	struct wq__cursor cur;
	int i;

	migrate(f->c);
	assert_int_equal(D->script(f->c, "CREATE TABLE u (k INTEGER UNIQUE); "
					 "CREATE TABLE pk (k INTEGER PRIMARY KEY)"),
			 WQ__SQL_OK);
	for (i = 0; i < 2; i++) {
		assert_int_equal(run(f->c, "INSERT INTO u VALUES ($1)", &one, 1, &cur), 0);
		assert_int_equal(D->step(&cur), i == 0 ? 0 : -WQ__SQL_UNIQUE);
		sqlite3_finalize(cur.st);
		assert_int_equal(run(f->c, "INSERT INTO pk VALUES ($1)", &one, 1, &cur), 0);
		assert_int_equal(D->step(&cur), i == 0 ? 0 : -WQ__SQL_UNIQUE);
		sqlite3_finalize(cur.st);
	}
	assert_non_null(strstr(D->errmsg(f->c), "UNIQUE constraint failed"));

	/* foreign_keys is ON: an event of a missing task. */
	assert_int_equal(
		run(f->c, "INSERT INTO events (task_id, at, type) VALUES ($1, 0, 'x')", &ev, 1,
		    &cur),
		WQ__SQL_OK);
	assert_int_equal(D->step(&cur), -WQ__SQL_FOREIGN);
	sqlite3_finalize(cur.st);

	/* A bad statement: ERROR with SQLite's message, kept across the rollback. */
	assert_int_equal(D->begin(f->c, 1), WQ__SQL_OK);
	assert_int_equal(D->script(f->c, "SELECT * FROM no_such_table"), WQ__SQL_ERROR);
	D->rollback(f->c);
	assert_non_null(strstr(D->errmsg(f->c), "no such table"));
	D->rollback(f->c); /* nothing open: nothing happens */
	assert_int_equal(D->commit(f->c), WQ__SQL_ERROR);
}

static void test_changes_returning(void **state)
{
	struct fixture *f = *state;
	struct wq__cursor cur;
	int n = 0;

	assert_int_equal(D->script(f->c, "CREATE TABLE r (k INTEGER, v INTEGER); "
					 "INSERT INTO r VALUES (1, 0), (2, 0), (3, 0)"),
			 WQ__SQL_OK);
	assert_int_equal(run(f->c, "UPDATE r SET v = 1 WHERE k < 3", NULL, 0, &cur), 0);
	assert_int_equal(D->step(&cur), 0);
	assert_int_equal(D->changes(&cur), 2);
	sqlite3_finalize(cur.st);
	assert_int_equal(run(f->c, "UPDATE r SET v = 2 WHERE k > 1 RETURNING k", NULL, 0, &cur),
			 0);
	while (D->step(&cur) == 1)
		assert_int_equal(D->changes(&cur), ++n);
	assert_int_equal(n, 2);
	assert_int_equal(D->changes(&cur), 2);
	sqlite3_finalize(cur.st);
	assert_int_equal(run(f->c, "SELECT k FROM r", NULL, 0, &cur), 0);
	assert_int_equal(D->step(&cur), 1);
	assert_int_equal(D->changes(&cur), 0);
	sqlite3_finalize(cur.st);
}

/* Two connections to one file: a held write lock is BUSY after the (shortened) wait; a
 * read snapshot that another writer overtook is BUSY (BUSY_SNAPSHOT) at once. */
static void test_busy(void **state)
{
	struct fixture *f = *state;
	struct wq__conn *b;
	struct wq__cursor *cur;
	struct wq__arg v = WQ__AI(50);
	char msg[256];

	migrate(f->c);
	assert_int_equal(D->open(f->db, &b, msg, sizeof(msg)), WQ__SQL_OK);
	sqlite3_busy_timeout(b->db, 50);

	assert_int_equal(D->begin(f->c, 1), WQ__SQL_OK);
	assert_int_equal(D->begin(b, 1), WQ__SQL_BUSY);
	assert_true(strlen(D->errmsg(b)) > 0);
	assert_int_equal(D->commit(f->c), WQ__SQL_OK);

	assert_int_equal(D->begin(b, 0), WQ__SQL_OK);
	assert_int_equal(D->exec(b, SQL_SCHEMA_VERSION, NULL, 0, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	D->done(cur);
	assert_int_equal(D->begin(f->c, 1), WQ__SQL_OK);
	assert_int_equal(D->exec(f->c, SQL_SET_VERSION, &v, 1, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 0);
	D->done(cur);
	assert_int_equal(D->commit(f->c), WQ__SQL_OK);
	assert_int_equal(D->exec(b, SQL_SET_VERSION, &v, 1, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), -WQ__SQL_BUSY);
	D->done(cur);
	D->rollback(b);
	assert_true(sqlite3_get_autocommit(b->db));
	D->close(b);
}

/* The busy handler's schedule: a try every 1 ms, never SQLite's 100 ms pauses; it gives
 * up (SQLITE_BUSY) once BUSY_TIMEOUT_MS have passed since the wait began. */
static void busy_wait_schedule(void **state)
{
	struct fixture *f = *state;
	struct timespec t0, t1;
	long ms;

	assert_int_equal(busy_wait(f->c, 0), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 1; i <= 20; i++)
		assert_int_equal(busy_wait(f->c, i), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	/* 20 pauses of 1 ms; SQLite's own first 20 pause 1,128 ms */
	assert_true(ms < 500);
	f->c->busy_since.tv_sec -= BUSY_TIMEOUT_MS / 1000 + 1;
	assert_int_equal(busy_wait(f->c, 21), 0);
}

/* A writer whose peer takes the write lock back after a short gap, again and again (a
 * worker beside another worker's loop, lanes and intake, all committing back to back),
 * gets it while the peer keeps going: the gap is caught by a try, not slept through
 * (busy_wait). SQLite's own pauses grow to 100 ms: 10 tries a second, each with a chance
 * of ~1 in 50 of falling into a ~0.1 ms gap between 5 ms transactions. */
struct hog {
	struct wq__conn *c;
	int stop;    /* set by the test: __atomic */
	int cycles;  /* write transactions done: __atomic */
	int holding; /* inside one (the write lock held): __atomic */
};

/* The test's bound: the peer's transactions of ~5 ms each before the writer must have had
 * the lock. busy_wait got it within 5-34 of them (20 runs), SQLite's own busy wait
 * within 63-644 (six runs; most of them past 200): 200 is ~1,000 tries of the first,
 * ~20 of the second. */
#define HOG_CYCLES 200

static void *hog_main(void *arg)
{
	struct hog *h = arg;
	const struct timespec hold = {0, 5000000}, gap = {0, 20000};

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&h->cycles, __ATOMIC_ACQUIRE) < HOG_CYCLES) {
		if (D->begin(h->c, 1) != WQ__SQL_OK)
			continue; /* the test's writer has it: take it back after */
		__atomic_store_n(&h->holding, 1, __ATOMIC_RELEASE);
		nanosleep(&hold, NULL);
		__atomic_store_n(&h->holding, 0, __ATOMIC_RELEASE);
		D->commit(h->c);
		__atomic_add_fetch(&h->cycles, 1, __ATOMIC_RELEASE);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static void busy_wait_takes_short_gaps(void **state)
{
	struct fixture *f = *state;
	struct hog h = {f->c, 0, 0, 0};
	struct wq__conn *b;
	pthread_t th;
	char msg[256];
	int at;

	migrate(f->c);
	assert_int_equal(D->open(f->db, &b, msg, sizeof(msg)), WQ__SQL_OK);
	assert_int_equal(pthread_create(&th, NULL, hog_main, &h), 0);
	/* the peer is taking the lock again and again, and holds it now: the first try
	 * fails and the wait begins */
	while (__atomic_load_n(&h.cycles, __ATOMIC_ACQUIRE) < 2 ||
	       !__atomic_load_n(&h.holding, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_int_equal(D->begin(b, 1), WQ__SQL_OK);
	at = __atomic_load_n(&h.cycles, __ATOMIC_ACQUIRE);
	D->commit(b);
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	D->close(b);
	if (at >= HOG_CYCLES)
		fail_msg("the write lock was taken only after its peer stopped (%d cycles)", at);
}

static void test_open_refusals(void **state)
{
	struct fixture *f = *state;
	struct wq__conn *c = (struct wq__conn *)1;
	char path[160], msg[256];
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "%s/garbage", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (i = 0; i < 200; i++)
		fputs("this is not a database file at all, just text\n", fp);
	fclose(fp);
	assert_int_equal(D->open(path, &c, msg, sizeof(msg)), WQ__SQL_CORRUPT);
	assert_null(c);
	assert_non_null(strstr(msg, "is not a SQLite database"));
	assert_non_null(strstr(msg, path));

	setenv("WAKEQ_SQLITE_SYNCHRONOUS", "sometimes", 1);
	assert_int_equal(D->open(f->db, &c, msg, sizeof(msg)), WQ__SQL_ERROR);
	assert_null(c);
	assert_non_null(strstr(msg, "WAKEQ_SQLITE_SYNCHRONOUS=sometimes"));
	setenv("WAKEQ_SQLITE_SYNCHRONOUS", "normal", 1);
	assert_int_equal(D->open(f->db, &c, msg, sizeof(msg)), WQ__SQL_OK);
	assert_int_equal(scalar(c, "PRAGMA synchronous"), 1);
	D->close(c);
	unsetenv("WAKEQ_SQLITE_SYNCHRONOUS");

	snprintf(path, sizeof(path), "%s/no/such/dir/db", f->dir);
	assert_int_equal(D->open(path, &c, msg, sizeof(msg)), WQ__SQL_IO);
	assert_non_null(strstr(msg, "cannot open database"));
	assert_int_equal(D->open("sqlite:", &c, msg, sizeof(msg)), WQ__SQL_ERROR);
	assert_non_null(strstr(msg, "empty database path"));

	assert_int_equal(D->open(":memory:", &c, msg, sizeof(msg)), WQ__SQL_OK);
	assert_int_equal(scalar(c, "SELECT 1"), 1);
	D->close(c);
}

/* Every descriptor SQLite holds on the database files is close-on-exec. */
static void test_cloexec(void **state)
{
	struct fixture *f = *state;
	DIR *d;
	struct dirent *e;
	char link[64], target[512];
	ssize_t n;
	int seen = 0, fd;

	migrate(f->c); /* a write: the WAL and shm files are open now */
	d = opendir("/proc/self/fd");
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strncmp(target, f->dir, strlen(f->dir)) != 0)
			continue;
		seen++;
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	}
	closedir(d);
	assert_true(seen >= 3); /* db, -wal, -shm */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_forms),
		cmocka_unit_test_setup_teardown(test_migrations_and_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_floors_existing_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_partial_indexes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_running_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_claim_live_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_next_due_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_task_facts_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_finish_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_tasks_rebuilt_children_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wal_dirsync_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind_and_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewrite_params, setup, teardown),
		cmocka_unit_test_setup_teardown(test_constraint_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes_returning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(busy_wait_schedule, setup, teardown),
		cmocka_unit_test_setup_teardown(busy_wait_takes_short_gaps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cloexec, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
