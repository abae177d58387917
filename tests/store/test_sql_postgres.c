/*
 * test_sql_postgres.c — the PostgreSQL driver (sql_postgres.c) on its own, against a
 * throwaway server: run through scripts/with-postgres (WAKEQ_TEST_PG_URL, a maintenance
 * URL); exits 77 (skipped) without it. It creates its own database and drops it.
 *
 * The driver is built into this program with schema_postgres.c and error.c, NOT with
 * libwakeq: the statement texts here are the test's own (wq__sql_text and
 * wq__postgres_dialect below stand in for sql.c and dialect_postgres.c), so the driver is
 * tested apart from the core's statements.
 *
 * Every wait is a bounded poll on a state (a socket's readiness, a row in
 * pg_stat_activity), never a sleep.
 *
 * Failpoints: this program defines a few libpq functions itself (below), which the driver
 * linked into it calls instead of libpq's; they pass through to libpq's unless a test arms
 * one to fail inside a pipeline while the connection stays good.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "store/sql.h"
#include "store/statements.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ stand-ins for the core ---- */

/* The test's statements, on the first ids of the core's list. */
enum {
	T_HAS_SCHEMA,
	T_VERSION,
	T_SET_VERSION,
	T_TASK_INSERT,
	T_TASK_GET,
	T_INSTANCE_INSERT,
	T_ATTEMPT_INSERT,
	T_PID,
	T_NOTIFY,
	T_SLEEP_IF,
	T_INSERT_SLEEP_IF,
	T_COUNT
};
_Static_assert((int)T_COUNT <= (int)WQ__SQL_COUNT, "the test needs T_COUNT statement ids");

static const char *const texts[T_COUNT] = {
	[T_HAS_SCHEMA] = "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_tables "
			 "WHERE schemaname = current_schema() AND tablename = 'schema_version') "
			 "THEN 1 ELSE 0 END",
	[T_VERSION] = "SELECT coalesce(max(version), 0) FROM schema_version",
	[T_SET_VERSION] = "INSERT INTO schema_version (version) VALUES ($1)",
	[T_TASK_INSERT] =
		"INSERT INTO tasks (kind, operation, payload, payload_size, payload_sha256, "
		"payload_version, priority, state, due_at, order_at, created_at, updated_at, "
		"max_attempts, result, has_result) VALUES ('k', $1, $2, $3, '', 1, 0, 'pending', "
		"$4, $4, $4, $4, 3, $5, 1) RETURNING id",
	[T_TASK_GET] = "SELECT id, payload, result, notify, (result IS NOT NULL)::int "
		       "FROM tasks WHERE id = $1",
	[T_INSTANCE_INSERT] = "INSERT INTO instances (id, host, host_id, pid, proc_start, "
			      "started_at, heartbeat_at) VALUES ($1, 'h', $2, 1, 1, 1, 1)",
	[T_ATTEMPT_INSERT] = "INSERT INTO attempts (task_id, attempt, instance, started_at) "
			     "VALUES ($1, 1, 'i', 1)",
	[T_PID] = "SELECT pg_backend_pid()",
	[T_NOTIFY] = "SELECT pg_notify('" WQ__SQL_NOTIFY_CHANNEL "', '')",
	/* Sleeps on backend $1 only: a re-run on a new connection answers at once. */
	[T_SLEEP_IF] = "SELECT pg_backend_pid() FROM (SELECT CASE WHEN pg_backend_pid() = $1 "
		       "THEN pg_sleep(60) END) s",
	/* wave5 pgw: a write that sleeps on backend $2 only */
	[T_INSERT_SLEEP_IF] = "INSERT INTO instances (id, host, host_id, pid, proc_start, "
			      "started_at, heartbeat_at) SELECT $1, 'h', '', 1, 1, 1, 1 FROM "
			      "(SELECT CASE WHEN pg_backend_pid() = $2 THEN pg_sleep(60) END) s",
};

static const char migrate_lock[] = "CREATE TABLE IF NOT EXISTS schema_version "
				   "(version integer NOT NULL); "
				   "LOCK TABLE schema_version IN EXCLUSIVE MODE";

const struct wq__dialect wq__postgres_dialect = {.variant = NULL};

const char *wq__sql_text(const struct wq__dialect *d, int id)
{
	(void)d;
	return id >= 0 && id < T_COUNT ? texts[id] : NULL;
}

/* ------------------------------------------------------------ helpers ---- */

static const struct wq__sql_driver *D = &wq__postgres_driver;
static char maint_url[512], db_url[512], db_name[64];

/* A plain libpq connection of the test (the "other process"). */
static PGconn *other(void)
{
	PGconn *pg = PQconnectdb(db_url);

	assert_int_equal(PQstatus(pg), CONNECTION_OK);
	return pg;
}

static void other_sql(PGconn *pg, const char *sql)
{
	PGresult *res = PQexec(pg, sql);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
}

static struct wq__conn *open_db(void)
{
	struct wq__conn *c = NULL;
	char msg[256] = "";

	if (D->open(db_url, &c, msg, sizeof(msg)) != WQ__SQL_OK)
		fail_msg("open: %s", msg);
	return c;
}

/* Runs a one-row, one-column integer read outside a transaction. */
static int64_t read_i64(struct wq__conn *c, int id, const struct wq__arg *args, int n)
{
	struct wq__cursor *cur;
	int64_t v;
	int rc = D->exec(c, id, args, n, &cur);

	if (rc != WQ__SQL_OK)
		fail_msg("exec %d: %d %s", id, rc, D->errmsg(c));
	assert_int_equal(D->step(cur), 1);
	v = D->col_i64(cur, 0);
	assert_int_equal(D->step(cur), 0);
	D->done(cur);
	return v;
}

/* Runs a statement whose rows do not matter; returns its code. */
static int run(struct wq__conn *c, int id, const struct wq__arg *args, int n)
{
	struct wq__cursor *cur = NULL;
	int rc = D->exec(c, id, args, n, &cur);

	D->done(cur);
	return rc;
}

/* Terminates backend `pid` from another connection and waits (bounded) until the
 * driver's socket `fd` has the end of stream: the session is gone for certain. */
static void terminate(int fd, int64_t pid)
{
	PGconn *pg = other();
	char sql[128];
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%lld)", (long long)pid);
	other_sql(pg, sql);
	PQfinish(pg);
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_true(p.revents & (POLLRDHUP | POLLHUP));
}

/* The migrations, run as op_schema.c does (store-requests.md P3). */
static void migrate(struct wq__conn *c)
{
	struct wq__arg v;
	int64_t version;
	size_t i;

	for (i = 0; i < wq__postgres_nmigrations; i++) {
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		assert_int_equal(D->script(c, migrate_lock), WQ__SQL_OK);
		version = read_i64(c, T_HAS_SCHEMA, NULL, 0) ? read_i64(c, T_VERSION, NULL, 0) : 0;
		if (wq__postgres_migrations[i].version <= version) {
			D->rollback(c);
			continue;
		}
		if (D->script(c, wq__postgres_migrations[i].sql) != WQ__SQL_OK)
			fail_msg("step %d: %s", wq__postgres_migrations[i].version, D->errmsg(c));
		v = WQ__AI(wq__postgres_migrations[i].version);
		assert_int_equal(run(c, T_SET_VERSION, &v, 1), WQ__SQL_OK);
		assert_int_equal(D->commit(c), WQ__SQL_OK);
	}
}

/* ------------------------------------------------------------ failpoints ---- */

/* The n-th call (n > 0) of a function made in pipeline mode fails as libpq does when it
 * runs out of memory: nothing of it is done and the connection stays CONNECTION_OK
 * (PQgetResult answers NULL, its result left unread). 0: off; it disarms when it fires. */
enum { FP_SEND_PARAMS, FP_SEND_PREPARED, FP_SYNC, FP_GET_RESULT, FP_COUNT };
static int failpoint[FP_COUNT];

static int fires(int fp, PGconn *conn)
{
	if (failpoint[fp] <= 0 || PQpipelineStatus(conn) == PQ_PIPELINE_OFF)
		return 0;
	return --failpoint[fp] == 0;
}

/* libpq's own function (the next definition of the name after this program's). */
static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
		      const char *const *paramValues, const int *paramLengths,
		      const int *paramFormats, int resultFormat)
{
	int (*f)(PGconn *, const char *, int, const Oid *, const char *const *, const int *,
		 const int *, int) = real("PQsendQueryParams");

	if (fires(FP_SEND_PARAMS, conn))
		return 0;
	return f(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
		 resultFormat);
}

int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams,
			const char *const *paramValues, const int *paramLengths,
			const int *paramFormats, int resultFormat)
{
	int (*f)(PGconn *, const char *, int, const char *const *, const int *, const int *,
		 int) = real("PQsendQueryPrepared");

	if (fires(FP_SEND_PREPARED, conn))
		return 0;
	return f(conn, stmtName, nParams, paramValues, paramLengths, paramFormats,
		 resultFormat);
}

int PQpipelineSync(PGconn *conn)
{
	int (*f)(PGconn *) = real("PQpipelineSync");

	return fires(FP_SYNC, conn) ? 0 : f(conn);
}

PGresult *PQgetResult(PGconn *conn)
{
	PGresult *(*f)(PGconn *) = real("PQgetResult");

	return fires(FP_GET_RESULT, conn) ? NULL : f(conn);
}

/* ------------------------------------------------------------ tests ---- */

static void test_open_fail(void **state)
{
	struct wq__conn *c = (struct wq__conn *)1;
	char msg[256], url[600];

	(void)state;
	/* A port where nothing listens: retryable, one line, no password. */
	snprintf(url, sizeof(url), "postgresql://postgres:secret@127.0.0.1:1/x");
	assert_int_equal(D->open(url, &c, msg, sizeof(msg)), WQ__SQL_BUSY);
	assert_null(c);
	assert_null(strchr(msg, '\n'));
	assert_null(strstr(msg, "secret"));
	assert_non_null(strstr(msg, "127.0.0.1:1/x"));
	/* No such database: the server refuses. */
	snprintf(url, sizeof(url), "%.*s/wq_no_such_db", (int)(strrchr(maint_url, '/') - maint_url),
		 maint_url);
	assert_int_equal(D->open(url, &c, msg, sizeof(msg)), WQ__SQL_IO);
	assert_int_equal(D->open("postgresql://[", &c, msg, sizeof(msg)), WQ__SQL_ERROR);
}

static void test_migrate(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-1"), WQ__AT("boot/ns")};

	(void)state;
	migrate(c);
	migrate(c); /* a second run finds every step done */
	assert_int_equal(read_i64(c, T_VERSION, NULL, 0),
			 wq__postgres_migrations[wq__postgres_nmigrations - 1].version);
	/* v4's column */
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_string_equal(D->label(c), strchr(db_url, '@') + 1);
	D->close(c);
}

static void test_rows(void **state)
{
	static const char blob[] = {'a', 0, (char)0xff, '\\', 'x', 0, '\n'};
	const char *payload = "{\"name\":\"caf\xc3\xa9\"}";
	struct wq__conn *c = open_db();
	struct wq__cursor *cur, *cur2;
	struct wq__arg a[5] = {WQ__AT("op-1"), WQ__AT(payload), WQ__AI(strlen(payload)),
			       WQ__AI(1000), WQ__AB(blob, sizeof(blob))};
	struct wq__arg id;
	const char *t;
	size_t len;
	int64_t task;

	(void)state;
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(D->exec(c, T_TASK_INSERT, a, 5, &cur), WQ__SQL_OK);
	assert_int_equal(D->changes(cur), 1);
	assert_int_equal(D->step(cur), 1);
	task = D->col_i64(cur, 0);
	assert_true(task > 0);
	assert_int_equal(D->step(cur), 0);
	D->done(cur);
	assert_int_equal(D->commit(c), WQ__SQL_OK);

	/* Two cursors open at once; bytes come back exactly, with their length. */
	id = WQ__AI(task);
	assert_int_equal(D->exec(c, T_TASK_GET, &id, 1, &cur), WQ__SQL_OK);
	assert_int_equal(D->exec(c, T_PID, NULL, 0, &cur2), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	assert_int_equal(D->step(cur2), 1);
	assert_true(D->col_i64(cur2, 0) > 0);
	t = D->col_text(cur, 1, &len);
	assert_int_equal(len, strlen(payload));
	assert_memory_equal(t, payload, len);
	t = D->col_text(cur, 2, &len);
	assert_int_equal(len, sizeof(blob));
	assert_memory_equal(t, blob, sizeof(blob));
	assert_true(D->is_null(cur, 3));
	assert_false(D->is_null(cur, 2));
	t = D->col_text(cur, 3, &len);
	assert_string_equal(t, "");
	assert_int_equal(len, 0);
	assert_int_equal(D->col_i64(cur, 4), 1);
	assert_int_equal(D->step(cur), 0);
	D->done(cur2);
	D->done(cur);

	/* An empty blob is an empty value, not NULL. */
	a[0] = WQ__AT("op-2");
	a[4] = WQ__AB("", 0);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(D->exec(c, T_TASK_INSERT, a, 5, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	id = WQ__AI(D->col_i64(cur, 0));
	D->done(cur);
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	assert_int_equal(D->exec(c, T_TASK_GET, &id, 1, &cur), WQ__SQL_OK);
	assert_int_equal(D->step(cur), 1);
	assert_false(D->is_null(cur, 2));
	D->col_text(cur, 2, &len);
	assert_int_equal(len, 0);
	D->done(cur);
	D->close(c);
}

static void test_errors(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-dup"), WQ__AT("")};
	struct wq__arg bad[5] = {WQ__AT("op-bad"), WQ__AT("{\"a\":\"\xff\"}"), WQ__AI(8),
				 WQ__AI(1), WQ__ANULL};
	struct wq__arg missing = WQ__AI(999999);
	struct wq__cursor *cur = (struct wq__cursor *)1;

	(void)state;
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(D->exec(c, T_INSTANCE_INSERT, a, 2, &cur), WQ__SQL_UNIQUE);
	assert_null(cur);
	assert_non_null(strstr(D->errmsg(c), "duplicate key"));
	assert_null(strchr(D->errmsg(c), '\n'));
	/* The failed statement left the transaction open (aborted): COMMIT turns ROLLBACK. */
	assert_int_equal(D->commit(c), WQ__SQL_ERROR);
	assert_string_equal(D->errmsg(c), "the transaction was rolled back");

	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(run(c, T_ATTEMPT_INSERT, &missing, 1), WQ__SQL_FOREIGN);
	D->rollback(c);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(run(c, T_TASK_INSERT, bad, 5), WQ__SQL_ERROR); /* 22021 */
	D->rollback(c);
	D->rollback(c); /* nothing open: nothing happens */
	/* Too few arguments: an error, the connection stays good. */
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 1), WQ__SQL_ERROR);
	assert_true(read_i64(c, T_PID, NULL, 0) > 0);
	/* Extra arguments are not sent. */
	assert_true(read_i64(c, T_PID, a, 2) > 0);
	D->close(c);
}

static void test_lost(void **state)
{
	struct wq__conn *c = open_db();
	int64_t pid, pid2;
	int fd;

	(void)state;
	/* Died while idle, outside a transaction: the call runs on a new connection. */
	pid = read_i64(c, T_PID, NULL, 0);
	fd = D->wakeup_fd(c);
	assert_true(fd >= 0);
	terminate(fd, pid);
	pid2 = read_i64(c, T_PID, NULL, 0);
	assert_true(pid2 != pid);

	/* Inside a transaction: LOST, and every later statement of it too (generation),
	 * commit included; after rollback the next call works. */
	fd = D->wakeup_fd(c);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(read_i64(c, T_PID, NULL, 0), pid2);
	terminate(fd, pid2);
	assert_int_equal(run(c, T_PID, NULL, 0), WQ__SQL_LOST);
	assert_int_equal(run(c, T_PID, NULL, 0), WQ__SQL_LOST);
	assert_int_equal(D->commit(c), WQ__SQL_LOST);
	D->rollback(c);
	pid = read_i64(c, T_PID, NULL, 0);
	assert_true(pid != pid2);

	/* Died while idle inside a transaction, before COMMIT: known lost, not unknown. */
	fd = D->wakeup_fd(c);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	terminate(fd, pid);
	assert_int_equal(D->commit(c), WQ__SQL_LOST);
	D->rollback(c);

	/* Died while idle, then begin: BEGIN runs again on the new connection. */
	pid = read_i64(c, T_PID, NULL, 0);
	terminate(D->wakeup_fd(c), pid);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_true(read_i64(c, T_PID, NULL, 0) != pid);
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	D->close(c);
}

/* Terminates backend `pid` once it sleeps (pg_sleep), i.e. in the middle of a statement
 * or of a COMMIT. */
struct killer {
	int64_t pid;
	int done;
};

static void *kill_when_sleeping(void *arg)
{
	struct killer *k = arg;
	PGconn *pg = PQconnectdb(db_url); /* no cmocka assert off the main thread */
	struct timespec pause = {0, 5 * 1000 * 1000};
	char sql[256];
	PGresult *res;
	int i;

	snprintf(sql, sizeof(sql),
		 "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %lld "
		 "AND wait_event = 'PgSleep'",
		 (long long)k->pid);
	for (i = 0; i < 2000 && !k->done; i++) { /* 10 s at most */
		res = PQexec(pg, sql);
		k->done = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
			  PQgetvalue(res, 0, 0)[0] == 't';
		PQclear(res);
		if (!k->done)
			nanosleep(&pause, NULL);
	}
	PQfinish(pg);
	return NULL;
}

/* The connection breaks during a statement. Outside a transaction (a read) it runs again
 * once on the new connection; inside one it is LOST. */
static void test_lost_midway(void **state)
{
	struct wq__conn *c = open_db();
	struct killer k = {0};
	struct wq__arg a;
	pthread_t th;

	(void)state;
	k.pid = read_i64(c, T_PID, NULL, 0);
	a = WQ__AI(k.pid);
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	assert_true(read_i64(c, T_SLEEP_IF, &a, 1) != k.pid);
	pthread_join(th, NULL);
	assert_true(k.done);

	k.done = 0;
	k.pid = read_i64(c, T_PID, NULL, 0);
	a = WQ__AI(k.pid);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(read_i64(c, T_PID, NULL, 0), k.pid); /* BEGIN sent with it */
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	assert_int_equal(run(c, T_SLEEP_IF, &a, 1), WQ__SQL_LOST);
	pthread_join(th, NULL);
	assert_true(k.done);
	D->rollback(c);
	assert_true(read_i64(c, T_PID, NULL, 0) != k.pid);
	D->close(c);
}

/* The number of instances rows named id (another connection). */
static int instances_named(PGconn *pg, const char *id)
{
	const char *v[1] = {id};
	PGresult *res = PQexecParams(pg, "SELECT count(*) FROM instances WHERE id = $1", 1,
				     NULL, v, NULL, NULL, 0);
	int n;

	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return n;
}

/* wave5 pgw: BEGIN rides with a transaction's first statement (one pipeline). The
 * connection breaks during that first statement, a write: nothing of the transaction is
 * left on the server, so it runs once more with BEGIN on the new connection and commits
 * exactly once. A failure of the first statement leaves the pipeline: the transaction
 * rolls back and the connection goes on. BEGIN alone, then commit: nothing is sent. */
static void test_pipelined_begin(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-piped"), WQ__AI(0)};
	struct wq__arg dup[2] = {WQ__AT("inst-piped"), WQ__AT("")};
	struct killer k = {0};
	PGconn *pg = other();
	pthread_t th;

	(void)state;
	a[0] = WQ__AT("inst-warm"); /* prepared now, so that it rides with BEGIN below */
	assert_int_equal(run(c, T_INSERT_SLEEP_IF, a, 2), WQ__SQL_OK);
	a[0] = WQ__AT("inst-piped");
	k.pid = read_i64(c, T_PID, NULL, 0);
	a[1] = WQ__AI(k.pid);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	assert_int_equal(run(c, T_INSERT_SLEEP_IF, a, 2), WQ__SQL_OK);
	pthread_join(th, NULL);
	assert_true(k.done);
	assert_true(read_i64(c, T_PID, NULL, 0) != k.pid); /* the same transaction, anew */
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	assert_int_equal(instances_named(pg, "inst-piped"), 1);

	/* the first statement fails (the row exists): UNIQUE, nothing kept, and the
	 * connection is usable at once, in and out of transactions */
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(run(c, T_INSTANCE_INSERT, dup, 2), WQ__SQL_UNIQUE);
	D->rollback(c);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	dup[0] = WQ__AT("inst-piped2");
	assert_int_equal(run(c, T_INSTANCE_INSERT, dup, 2), WQ__SQL_OK);
	assert_int_equal(read_i64(c, T_PID, NULL, 0), read_i64(c, T_PID, NULL, 0));
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	assert_int_equal(instances_named(pg, "inst-piped2"), 1);

	/* an empty transaction */
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	assert_true(read_i64(c, T_PID, NULL, 0) > 0);
	PQfinish(pg);
	D->close(c);
}

/* wave5 pgw: statements queued in the pipeline (exec_queued) ride with COMMIT. They
 * commit with it; one that fails fails the commit with its own code and nothing of the
 * transaction is kept; the connection goes on. COMMIT in the pipeline without an
 * answer: COMMIT_UNKNOWN (the slow deferred trigger of test_commit_unknown). */
static void test_queued(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-q0"), WQ__AT("")};
	struct killer k = {0};
	PGconn *pg = other();
	pthread_t th;

	(void)state;
	assert_non_null(D->exec_queued);
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK); /* prepared now */
	k.pid = read_i64(c, T_PID, NULL, 0);                              /* likewise */
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	a[0] = WQ__AT("inst-q1");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	a[0] = WQ__AT("inst-q2");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	/* wave7 pg: a statement riding with the queued ones answers its own rows */
	assert_int_equal(read_i64(c, T_PID, NULL, 0), k.pid);
	a[0] = WQ__AT("inst-q2b");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(D->commit(c), WQ__SQL_OK);
	assert_int_equal(instances_named(pg, "inst-q2b"), 1);
	assert_int_equal(instances_named(pg, "inst-q1"), 1);
	assert_int_equal(instances_named(pg, "inst-q2"), 1);

	/* a failing one (the row exists) between two good ones */
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	a[0] = WQ__AT("inst-q3");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	a[0] = WQ__AT("inst-q1");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	a[0] = WQ__AT("inst-q4");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(D->commit(c), WQ__SQL_UNIQUE);
	D->rollback(c);
	assert_int_equal(instances_named(pg, "inst-q3"), 0);
	assert_int_equal(instances_named(pg, "inst-q4"), 0);
	/* ... and a statement after a failing queued one fails with it */
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(read_i64(c, T_PID, NULL, 0), read_i64(c, T_PID, NULL, 0));
	a[0] = WQ__AT("inst-q1");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(run(c, T_PID, NULL, 0), WQ__SQL_UNIQUE);
	D->rollback(c);
	assert_true(read_i64(c, T_PID, NULL, 0) > 0);

	other_sql(pg, "CREATE FUNCTION slow_q() RETURNS trigger LANGUAGE plpgsql AS "
		      "$$BEGIN PERFORM pg_sleep(60); RETURN NULL; END$$");
	other_sql(pg, "CREATE CONSTRAINT TRIGGER slow_q AFTER INSERT ON instances "
		      "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
		      "WHEN (NEW.id = 'inst-q-slow') EXECUTE FUNCTION slow_q()");
	k.pid = read_i64(c, T_PID, NULL, 0);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(read_i64(c, T_PID, NULL, 0), k.pid);
	a[0] = WQ__AT("inst-q-slow");
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	assert_int_equal(D->commit(c), WQ__SQL_COMMIT_UNKNOWN);
	pthread_join(th, NULL);
	assert_true(k.done);
	D->rollback(c);
	assert_true(read_i64(c, T_PID, NULL, 0) != k.pid); /* reconnected */
	other_sql(pg, "DROP TRIGGER slow_q ON instances");
	PQfinish(pg);
	D->close(c);
}

static void test_commit_unknown(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-slow"), WQ__AT("")};
	struct killer k = {0};
	pthread_t th;
	PGconn *pg = other();

	(void)state;
	other_sql(pg, "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS "
		      "$$BEGIN PERFORM pg_sleep(60); RETURN NULL; END$$");
	other_sql(pg, "CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON instances "
		      "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
		      "WHEN (NEW.id = 'inst-slow') EXECUTE FUNCTION slow()");
	k.pid = read_i64(c, T_PID, NULL, 0);
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	assert_int_equal(D->commit(c), WQ__SQL_COMMIT_UNKNOWN);
	pthread_join(th, NULL);
	assert_true(k.done);
	D->rollback(c);
	assert_true(read_i64(c, T_PID, NULL, 0) != k.pid); /* reconnected */
	other_sql(pg, "DROP TRIGGER slow ON instances");
	PQfinish(pg);
	D->close(c);
}

/* A write outside a transaction (autocommit): run once on the new connection when the
 * old one was found dead before it was sent; COMMIT_UNKNOWN, never repeated, when it was
 * sent and the answer was lost (it may have committed). */
static void test_autocommit_write(void **state)
{
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-auto"), WQ__AT("")};
	struct killer k = {0};
	pthread_t th;
	PGconn *pg = other();
	PGresult *res;
	int64_t pid;

	(void)state;
	assert_true(D->caps & WQ__SQL_CAP_AUTOCOMMIT);
	pid = read_i64(c, T_PID, NULL, 0);
	terminate(D->wakeup_fd(c), pid);
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	assert_true(read_i64(c, T_PID, NULL, 0) != pid);

	other_sql(pg, "CREATE OR REPLACE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS "
		      "$$BEGIN PERFORM pg_sleep(60); RETURN NULL; END$$");
	other_sql(pg, "CREATE TRIGGER slow_auto AFTER INSERT ON instances FOR EACH ROW "
		      "WHEN (NEW.id = 'inst-auto2') EXECUTE FUNCTION slow()");
	a[0] = WQ__AT("inst-auto2");
	k.pid = read_i64(c, T_PID, NULL, 0);
	assert_int_equal(pthread_create(&th, NULL, kill_when_sleeping, &k), 0);
	/* A repeat would sleep 60 s on the new backend and then answer OK. */
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_COMMIT_UNKNOWN);
	pthread_join(th, NULL);
	assert_true(k.done);
	res = PQexec(pg, "SELECT count(*) FROM instances WHERE id = 'inst-auto2'");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(res, 0, 0), "0");
	PQclear(res);
	assert_true(read_i64(c, T_PID, NULL, 0) != k.pid); /* reconnected */
	other_sql(pg, "DROP TRIGGER slow_auto ON instances");
	PQfinish(pg);
	D->close(c);
}

/* The number of instances rows named id, after `pid`'s session is gone for certain: the
 * rows a backend had not committed are rolled back by then (not merely invisible). */
static int instances_after(PGconn *pg, int64_t pid, const char *id)
{
	char sql[128];
	PGresult *res;
	int i, gone = 0;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity WHERE pid = %lld",
		 (long long)pid);
	for (i = 0; i < 1000 && !gone; i++) { /* bounded: the backend exits promptly */
		res = PQexec(pg, sql);
		assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
		gone = strcmp(PQgetvalue(res, 0, 0), "0") == 0;
		PQclear(res);
		if (!gone)
			poll(NULL, 0, 10);
	}
	assert_true(gone);
	return instances_named(pg, id);
}

/* A pipeline that fails while libpq still calls the connection good (the failpoints
 * above: a send refused, an answer missing) must not leave the handle in pipeline mode,
 * where libpq refuses ROLLBACK and every later BEGIN: the session is given up (a new
 * backend). A transaction's first statement, which BEGIN rides with, then runs again on
 * the new connection and the transaction commits once; a queued statement's pipeline is
 * LOST; COMMIT in the pipeline is COMMIT_UNKNOWN, unless a queued statement's ERROR was
 * read first (nothing committed: that error). After each, the handle works. */
static void test_pipeline_fails(void **state)
{
	static const struct {
		int fp, n;
	} first[] = {
		{FP_SEND_PARAMS, 1},   /* BEGIN not queued */
		{FP_SEND_PREPARED, 1}, /* BEGIN queued, the statement not */
		{FP_SYNC, 1},          /* both queued, no sync */
		{FP_GET_RESULT, 1},    /* BEGIN's answer missing */
		{FP_GET_RESULT, 3},    /* the statement's answer missing */
	}, queued[] = {
		{FP_SYNC, 1},       /* the queued statement never synced */
		{FP_GET_RESULT, 1}, /* its answer missing */
	}, commit[] = {
		{FP_SEND_PARAMS, 1}, /* COMMIT not queued */
		{FP_SYNC, 1},        /* COMMIT queued, no sync */
		{FP_GET_RESULT, 3},  /* COMMIT's answer missing */
	};
	struct wq__conn *c = open_db();
	struct wq__arg a[2] = {WQ__AT("inst-fp"), WQ__AT("")};
	PGconn *pg = other();
	char id[32];
	int64_t pid;
	size_t i;

	(void)state;
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK); /* prepared now */
	for (i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
		snprintf(id, sizeof(id), "inst-fp-first%zu", i);
		a[0] = WQ__AT(id);
		pid = read_i64(c, T_PID, NULL, 0);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		failpoint[first[i].fp] = first[i].n;
		assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
		assert_int_equal(failpoint[first[i].fp], 0); /* it fired */
		assert_int_equal(D->commit(c), WQ__SQL_OK);
		assert_int_equal(instances_named(pg, id), 1);
		assert_true(read_i64(c, T_PID, NULL, 0) != pid);
	}
	for (i = 0; i < sizeof(queued) / sizeof(queued[0]); i++) {
		snprintf(id, sizeof(id), "inst-fp-queued%zu", i);
		a[0] = WQ__AT(id);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		pid = read_i64(c, T_PID, NULL, 0); /* BEGIN sent with it */
		assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
		failpoint[queued[i].fp] = queued[i].n;
		assert_int_equal(run(c, T_PID, NULL, 0), WQ__SQL_LOST);
		assert_int_equal(failpoint[queued[i].fp], 0);
		assert_int_equal(D->commit(c), WQ__SQL_LOST);
		D->rollback(c);
		assert_int_equal(instances_after(pg, pid, id), 0);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
		assert_int_equal(D->commit(c), WQ__SQL_OK);
		assert_int_equal(instances_named(pg, id), 1);
	}
	/* The session went with COMMIT possibly on its way: libpq's goodbye (PQreset) flushes
	 * what its buffer holds, and a COMMIT queued without its sync did commit when this
	 * was written. libpq's business, so not asserted: it is why the answer is unknown. */
	for (i = 0; i < sizeof(commit) / sizeof(commit[0]); i++) {
		snprintf(id, sizeof(id), "inst-fp-commit%zu", i);
		a[0] = WQ__AT(id);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		/* run at once: prepared on this connection, so the next one is queued */
		assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
		pid = read_i64(c, T_PID, NULL, 0);
		snprintf(id, sizeof(id), "inst-fp-commit%zu-q", i);
		a[0] = WQ__AT(id);
		assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
		failpoint[commit[i].fp] = commit[i].n;
		assert_int_equal(D->commit(c), WQ__SQL_COMMIT_UNKNOWN);
		assert_int_equal(failpoint[commit[i].fp], 0);
		D->rollback(c);
		assert_true(read_i64(c, T_PID, NULL, 0) != pid);
		assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
		assert_true(read_i64(c, T_PID, NULL, 0) > 0);
		assert_int_equal(D->commit(c), WQ__SQL_OK);
	}
	/* A queued statement's ERROR read, then COMMIT's answer missing: the server aborted
	 * the transaction at that statement, so the answer is its error, not unknown. */
	a[0] = WQ__AT("inst-fp-unique");
	assert_int_equal(D->begin(c, 1), WQ__SQL_OK);
	assert_int_equal(run(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK); /* prepares it */
	pid = read_i64(c, T_PID, NULL, 0);
	a[0] = WQ__AT("inst-fp"); /* exists */
	assert_int_equal(D->exec_queued(c, T_INSTANCE_INSERT, a, 2), WQ__SQL_OK);
	failpoint[FP_GET_RESULT] = 3; /* its error, its NULL, then COMMIT's */
	assert_int_equal(D->commit(c), WQ__SQL_UNIQUE);
	assert_int_equal(failpoint[FP_GET_RESULT], 0);
	D->rollback(c);
	assert_true(read_i64(c, T_PID, NULL, 0) != pid);
	assert_int_equal(instances_after(pg, pid, "inst-fp-unique"), 0);
	PQfinish(pg);
	D->close(c);
}

/* Waits (bounded) until fd is readable. */
static void readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	assert_int_equal(poll(&p, 1, 10000), 1);
}

/* Waits (bounded: 10 s) for a wake-up on c: drain, else wait on fd, as a worker does. */
static int wait_wakeup(struct wq__conn *c, int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int i, r;

	for (i = 0; i < 100; i++) {
		r = D->wakeup_drain(c);
		if (r != 0)
			return r;
		poll(&p, 1, 100);
	}
	return 0;
}

static void test_wakeup(void **state)
{
	struct wq__conn *c = open_db(), *c2 = open_db();
	PGconn *pg = other();
	int fd, fd2, flags;
	int64_t pid;

	(void)state;
	fd = D->wakeup_fd(c);
	assert_true(fd >= 0);
	flags = fcntl(fd, F_GETFD);
	assert_true(flags >= 0 && (flags & FD_CLOEXEC));
	assert_int_equal(D->wakeup_drain(c), 0);

	/* A NOTIFY from another connection. */
	other_sql(pg, "NOTIFY " WQ__SQL_NOTIFY_CHANNEL);
	assert_int_equal(wait_wakeup(c, fd), 1);
	assert_int_equal(D->wakeup_drain(c), 0);

	/* The driver's own statement, committed on a second driver connection, and read
	 * off the socket by other calls first: kept for drain. */
	assert_int_equal(D->begin(c2, 1), WQ__SQL_OK);
	assert_int_equal(run(c2, T_NOTIFY, NULL, 0), WQ__SQL_OK);
	assert_int_equal(D->commit(c2), WQ__SQL_OK);
	readable(fd);
	pid = read_i64(c, T_PID, NULL, 0);
	assert_int_equal(D->wakeup_drain(c), 1);
	assert_int_equal(D->wakeup_drain(c), 0);

	/* After a reconnect: -1, even if the new descriptor has the same number. LISTEN is
	 * redone by the reconnect itself: a NOTIFY sent before the next wakeup_fd arrives. */
	terminate(fd, pid);
	assert_int_equal(D->wakeup_drain(c), -1);
	assert_true(read_i64(c, T_PID, NULL, 0) != pid); /* reconnects */
	assert_int_equal(D->wakeup_drain(c), -1);
	other_sql(pg, "NOTIFY " WQ__SQL_NOTIFY_CHANNEL);
	fd2 = D->wakeup_fd(c);
	assert_true(fd2 >= 0);
	flags = fcntl(fd2, F_GETFD);
	assert_true(flags >= 0 && (flags & FD_CLOEXEC));
	assert_int_equal(wait_wakeup(c, fd2), 1);
	assert_int_equal(D->wakeup_drain(c), 0);
	PQfinish(pg);
	D->close(c2);
	D->close(c);
}

/* ------------------------------------------------------------ main ---- */

static int db_setup(void)
{
	const char *env = getenv("WAKEQ_TEST_PG_URL");
	const char *slash;
	PGconn *pg;
	char sql[128];
	PGresult *res;
	int ok;

	if (!env || !*env)
		return 77;
	snprintf(maint_url, sizeof(maint_url), "%s", env);
	slash = strrchr(maint_url, '/');
	if (!slash)
		return 1;
	snprintf(db_name, sizeof(db_name), "wq_sqlpg_%ld", (long)getpid());
	snprintf(db_url, sizeof(db_url), "%.*s/%s", (int)(slash - maint_url), maint_url, db_name);
	pg = PQconnectdb(maint_url);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db_name);
	res = PQexec(pg, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
	PQfinish(pg);
	return ok ? 0 : 1;
}

static void db_drop(void)
{
	PGconn *pg = PQconnectdb(maint_url);
	char sql[128];

	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db_name);
	PQclear(PQexec(pg, sql));
	PQfinish(pg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_fail),
		cmocka_unit_test(test_migrate),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_lost_midway),
		cmocka_unit_test(test_pipelined_begin),
		cmocka_unit_test(test_queued),
		cmocka_unit_test(test_commit_unknown),
		cmocka_unit_test(test_autocommit_write),
		cmocka_unit_test(test_pipeline_fails),
		cmocka_unit_test(test_wakeup),
	};
	int rc = db_setup();

	if (rc == 77)
		fprintf(stderr, "no PostgreSQL server (run through scripts/with-postgres): skipped\n");
	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	db_drop();
	return rc;
}
