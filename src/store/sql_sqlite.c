/*
 * sql_sqlite.c — the SQLite driver under the store operations (the contract is sql.h).
 *
 * Several processes share one database file: WAL journal, a busy_timeout, and every write
 * transaction opened with BEGIN IMMEDIATE so a writer takes the write lock up front (a
 * deferred transaction that reads and then writes can deadlock against another one doing
 * the same, and in WAL mode can fail with SQLITE_BUSY_SNAPSHOT without ever waiting).
 * open() sets the connection up exactly as sqlite.c's sq_open/set_pragmas did.
 *
 * Statements: the text of statement `id` is wq__sql_text(&wq__sqlite_dialect, id), with
 * $N placeholders. SQLite reads "$1" as a *named* parameter numbered by first appearance
 * ("SELECT $2, $1" binds $2 as parameter 1), so the text is rewritten to ?N at prepare
 * time, outside quoted text and comments (rewrite_params). Each statement is prepared
 * once per connection (SQLITE_PREPARE_PERSISTENT) and cached by id; exec() resets it,
 * binds, and hands out the cursor of that id (one per id, inside the connection: two
 * different statements may be open at once, the same one cannot).
 *
 * Binding: arguments are bound without copy (SQLITE_STATIC); done() unbinds, so the
 * caller's memory must live until then (sql.h). The storage class follows the argument
 * type, which keeps the columns as sqlite.c stored them:
 *   WQ__ARG_TEXT  -> TEXT, strlen bytes (NULL binds ""); a TEXT argument with len > 0 is
 *                    bound with exactly len bytes (TEXT storage, may hold any bytes).
 *                    The payload is TEXT (sqlite.c: bind_text64 into payload TEXT).
 *   WQ__ARG_BLOB  -> BLOB of len bytes (len 0: an empty blob, never NULL). The result
 *                    is BLOB (sqlite.c: bind_blob64 into result BLOB).
 *   WQ__ARG_I64   -> INTEGER;  WQ__ARG_NULL -> NULL.
 * The driver cannot tell which column a parameter feeds, so it never converts: a caller
 * that wants TEXT storage for bytes with a length passes TEXT with len > 0.
 *
 * Errors: every failure maps its extended result code to enum wq__sqlerr (sqlerr) and
 * copies sqlite3_errmsg() into the connection at failure time: a later ROLLBACK would
 * overwrite SQLite's own message.
 *
 * Descriptors: SQLite's unix VFS opens the database, journal, WAL and shm files with
 * O_CLOEXEC (robust_open), so nothing leaks into handlers (checked by the driver test).
 */
#include "sql.h"
#include "statements.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BUSY_TIMEOUT_MS 10000 /* as sqlite.c */
#define WQ_SQLITE_MIN_VERSION 3035000 /* RETURNING, ON CONFLICT DO UPDATE */

extern const struct wq__dialect wq__sqlite_dialect; /* dialect_sqlite.c */

/* One executing statement: the cached sqlite3_stmt of one id. */
struct wq__cursor {
	struct wq__conn *c;
	sqlite3_stmt *st; /* borrowed from c->st[id] */
	int64_t rows;     /* rows stepped so far (RETURNING: one per changed row) */
	int64_t changes;  /* -1 until SQLITE_DONE */
};

struct wq__conn {
	sqlite3 *db;
	char *path;                             /* owned */
	sqlite3_stmt *st[WQ__SQL_COUNT];        /* owned; prepared on first use */
	struct wq__cursor cur[WQ__SQL_COUNT];
	sqlite3_stmt *begin_w, *begin_r, *commit, *rollback; /* owned */
	char err[512];                          /* the last failure's message */
};

/* ------------------------------------------------------------------ errors ---- */

/* The core's view of a SQLite (extended) result code. */
static enum wq__sqlerr sqlerr(int rc)
{
	switch (rc) {
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_PRIMARYKEY:
		return WQ__SQL_UNIQUE;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return WQ__SQL_FOREIGN;
	case SQLITE_IOERR_NOMEM:
		return WQ__SQL_NOMEM;
	}
	switch (rc & 0xff) {
	case SQLITE_OK:
		return WQ__SQL_OK;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return WQ__SQL_BUSY;
	case SQLITE_NOMEM:
		return WQ__SQL_NOMEM;
	case SQLITE_TOOBIG:
		return WQ__SQL_TOOBIG;
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_CANTOPEN:
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return WQ__SQL_IO;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return WQ__SQL_CORRUPT;
	default:
		return WQ__SQL_ERROR;
	}
}

/* Records a failure: its message now (before anything else runs on the connection), its
 * code as the core sees it. `msg` NULL means sqlite3_errmsg(). */
static int fail(struct wq__conn *c, int rc, const char *msg)
{
	snprintf(c->err, sizeof(c->err), "%s", msg ? msg : sqlite3_errmsg(c->db));
	return sqlerr(rc);
}

/* ------------------------------------------------------------------ statements ---- */

/*
 * Rewrites $N placeholders to ?N in place (same length). Text in '...' (string
 * literals, '' is an escaped quote), "..." and `...` (identifiers), [...] and comments
 * (-- to the end of the line, slash-star to star-slash) is left alone: a '$1' there is
 * data. A $ not followed by a digit is left alone too.
 */
static void rewrite_params(char *sql)
{
	char *p = sql, *end;
	char close;

	while (*p) {
		switch (*p) {
		case '\'':
		case '"':
		case '`':
		case '[':
			close = *p == '[' ? ']' : *p;
			/* A doubled quote inside is an escaped one: scanning it as a close
			 * followed by an open gives the same result. */
			end = strchr(p + 1, close);
			p = end ? end + 1 : p + strlen(p);
			break;
		case '-':
			if (p[1] == '-') {
				end = strchr(p, '\n');
				p = end ? end + 1 : p + strlen(p);
			} else {
				p++;
			}
			break;
		case '/':
			if (p[1] == '*') {
				end = strstr(p + 2, "*/");
				p = end ? end + 2 : p + strlen(p);
			} else {
				p++;
			}
			break;
		case '$':
			if (p[1] >= '0' && p[1] <= '9')
				*p = '?';
			p++;
			break;
		default:
			p++;
		}
	}
}

/* Prepares SQL text with $N placeholders (persistent: it lives in a cache). */
static int prepare(struct wq__conn *c, const char *text, sqlite3_stmt **out)
{
	size_t n = strlen(text) + 1;
	char *sql = malloc(n);
	int rc;

	*out = NULL;
	if (!sql)
		return fail(c, SQLITE_NOMEM, "out of memory");
	memcpy(sql, text, n);
	rewrite_params(sql);
	rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(*out);
		*out = NULL;
		return fail(c, rc, NULL);
	}
	return WQ__SQL_OK;
}

/* Binds one argument to parameter i (1-based); an SQLite result code. */
static int bind_arg(sqlite3_stmt *st, int i, const struct wq__arg *a)
{
	switch (a->type) {
	case WQ__ARG_NULL:
		return sqlite3_bind_null(st, i);
	case WQ__ARG_I64:
		return sqlite3_bind_int64(st, i, (sqlite3_int64)a->i);
	case WQ__ARG_TEXT:
		if (!a->p)
			return sqlite3_bind_text(st, i, "", 0, SQLITE_STATIC);
		if (a->len > 0)
			return sqlite3_bind_text64(st, i, a->p, a->len, SQLITE_STATIC, SQLITE_UTF8);
		return sqlite3_bind_text(st, i, a->p, -1, SQLITE_STATIC);
	case WQ__ARG_BLOB:
		if (a->len == 0)
			return sqlite3_bind_zeroblob(st, i, 0);
		if (!a->p)
			return SQLITE_MISUSE;
		return sqlite3_bind_blob64(st, i, a->p, a->len, SQLITE_STATIC);
	}
	return SQLITE_MISUSE;
}

/* Resets `st` and binds args to it: the cursor of a statement ready to step. Every
 * parameter of the statement must get an argument (an unbound one would silently be
 * NULL); arguments beyond the statement's highest $N are ignored (a dialect variant may
 * not need all of them). */
static int cursor_start(struct wq__conn *c, struct wq__cursor *cur, sqlite3_stmt *st,
			const struct wq__arg *args, int nargs)
{
	int i, rc, nparams = sqlite3_bind_parameter_count(st);
	char msg[96];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (nargs < nparams) {
		snprintf(msg, sizeof(msg), "statement takes %d arguments, %d given", nparams,
			 nargs);
		return fail(c, SQLITE_MISUSE, msg);
	}
	for (i = 0; i < nparams; i++) {
		rc = bind_arg(st, i + 1, &args[i]);
		if (rc != SQLITE_OK) {
			rc = fail(c, rc, rc == SQLITE_MISUSE ? "NULL blob with a length" : NULL);
			sqlite3_clear_bindings(st);
			return rc;
		}
	}
	cur->c = c;
	cur->st = st;
	cur->rows = 0;
	cur->changes = -1;
	return WQ__SQL_OK;
}

static int sq_exec(struct wq__conn *c, int id, const struct wq__arg *args, int nargs,
		   struct wq__cursor **out)
{
	const char *text;
	int rc;

	*out = NULL;
	if (id < 0 || id >= WQ__SQL_COUNT)
		return fail(c, SQLITE_MISUSE, "no such statement");
	if (!c->st[id]) {
		text = wq__sql_text(&wq__sqlite_dialect, id);
		if (!text)
			return fail(c, SQLITE_MISUSE, "statement has no SQLite text");
		rc = prepare(c, text, &c->st[id]);
		if (rc)
			return rc;
	}
	rc = cursor_start(c, &c->cur[id], c->st[id], args, nargs);
	if (!rc)
		*out = &c->cur[id];
	return rc;
}

static int sq_step(struct wq__cursor *cur)
{
	int rc = sqlite3_step(cur->st);

	if (rc == SQLITE_ROW) {
		cur->rows++;
		return 1;
	}
	if (rc == SQLITE_DONE) {
		cur->changes = sqlite3_changes(cur->c->db);
		return 0;
	}
	return -fail(cur->c, rc, NULL);
}

static int sq_is_null(struct wq__cursor *cur, int col)
{
	return sqlite3_column_type(cur->st, col) == SQLITE_NULL;
}

static int64_t sq_col_i64(struct wq__cursor *cur, int col)
{
	return sqlite3_column_int64(cur->st, col);
}

/* Text first, then bytes: the order SQLite documents for a stable length. A value
 * that cannot be converted (out of memory) reads as "". */
static const char *sq_col_text(struct wq__cursor *cur, int col, size_t *len)
{
	const unsigned char *text = sqlite3_column_text(cur->st, col);

	if (len)
		*len = text ? (size_t)sqlite3_column_bytes(cur->st, col) : 0;
	return text ? (const char *)text : "";
}

/* sqlite3_changes() is set when a statement completes; a RETURNING statement makes all
 * its changes in the first step but completes after its last row. So: the exact count
 * once stepped to the end, and before that the rows returned so far — for a statement
 * with RETURNING, one row per changed row; step to the end for the total. */
static int64_t sq_changes(struct wq__cursor *cur)
{
	if (cur->changes >= 0)
		return cur->changes;
	return sqlite3_stmt_readonly(cur->st) ? 0 : cur->rows;
}

static void sq_done(struct wq__cursor *cur)
{
	if (cur && cur->st) {
		sqlite3_reset(cur->st);
		sqlite3_clear_bindings(cur->st);
	}
}

/* ------------------------------------------------------------------ transactions ---- */

/* Runs one of the cached transaction statements (prepared on first use). */
static int tx_run(struct wq__conn *c, sqlite3_stmt **st, const char *sql)
{
	int rc;

	if (!*st) {
		rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
		if (rc != SQLITE_OK) {
			sqlite3_finalize(*st);
			*st = NULL;
			return fail(c, rc, NULL);
		}
	}
	rc = sqlite3_step(*st);
	rc = rc == SQLITE_DONE ? WQ__SQL_OK : fail(c, rc, NULL);
	sqlite3_reset(*st);
	return rc;
}

static int sq_begin(struct wq__conn *c, int write)
{
	return write ? tx_run(c, &c->begin_w, "BEGIN IMMEDIATE") : tx_run(c, &c->begin_r, "BEGIN");
}

static int sq_commit(struct wq__conn *c)
{
	return tx_run(c, &c->commit, "COMMIT");
}

/* SQLite may already have rolled the transaction back on its own (after SQLITE_FULL,
 * SQLITE_IOERR, ...); then there is nothing to do. The message of the failure that led
 * here is kept. */
static void sq_rollback(struct wq__conn *c)
{
	char keep[sizeof(c->err)];

	if (sqlite3_get_autocommit(c->db))
		return;
	memcpy(keep, c->err, sizeof(keep));
	tx_run(c, &c->rollback, "ROLLBACK");
	memcpy(c->err, keep, sizeof(keep));
}

static int sq_script(struct wq__conn *c, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		rc = fail(c, rc, msg);
	sqlite3_free(msg);
	return rc;
}

/* ------------------------------------------------------------------ open / close ---- */

static void sq_close(struct wq__conn *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < WQ__SQL_COUNT; i++)
		sqlite3_finalize(c->st[i]);
	sqlite3_finalize(c->begin_w);
	sqlite3_finalize(c->begin_r);
	sqlite3_finalize(c->commit);
	sqlite3_finalize(c->rollback);
	sqlite3_close_v2(c->db);
	free(c->path);
	free(c);
}

/* "sqlite:PATH", "file:PATH", "sqlite:///abs/path", "file:///abs/path" or a plain path
 * (the core stat()s it before a non-migrating open). */
const char *wq__sqlite_path(const char *url)
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

/* An open failure in sqlite.c's words (db_fail): the path, what failed, SQLite's say. */
static int open_fail(struct wq__conn *c, int rc, const char *what, char *msg, size_t msgsz)
{
	const char *native = sqlite3_errmsg(c->db);

	switch (sqlerr(rc)) {
	case WQ__SQL_BUSY:
		snprintf(msg, msgsz, "database %s is busy (%s): %s", c->path, what, native);
		break;
	case WQ__SQL_NOMEM:
		snprintf(msg, msgsz, "out of memory (database %s, %s)", c->path, what);
		break;
	default:
		snprintf(msg, msgsz, "database %s: %s: %s", c->path, what, native);
	}
	return sqlerr(rc);
}

static int pragma(struct wq__conn *c, const char *sql, char *msg, size_t msgsz)
{
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? WQ__SQL_OK : open_fail(c, rc, sql, msg, msgsz);
}

/* The WAL journal. Switching a fresh file to WAL needs an exclusive lock, and SQLite
 * reports SQLITE_BUSY for it without calling the busy handler when another process is
 * doing the same (concurrent `wakeq init`): wait here, as long as busy_timeout would. */
static int set_wal(struct wq__conn *c, char *msg, size_t msgsz)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *mode;
	int rc, waited = 0;

	rc = sqlite3_prepare_v2(c->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	while (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if ((rc & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
			break;
		sqlite3_reset(st);
		sqlite3_sleep(5);
		waited += 5;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_ROW) {
		if ((rc & 0xff) == SQLITE_NOTADB) {
			snprintf(msg, msgsz, "%s is not a SQLite database", c->path);
			rc = WQ__SQL_CORRUPT;
		} else {
			rc = open_fail(c, rc, "set journal_mode", msg, msgsz);
		}
		goto out;
	}
	mode = sqlite3_column_text(st, 0);
	rc = WQ__SQL_OK;
	if (!mode || (strcmp((const char *)mode, "wal") != 0 &&
		      strcmp((const char *)mode, "memory") != 0)) {
		snprintf(msg, msgsz,
			 "database %s: cannot use the WAL journal (journal mode stays %s)",
			 c->path, mode ? (const char *)mode : "unknown");
		rc = WQ__SQL_ERROR;
	}
out:
	sqlite3_finalize(st);
	return rc;
}

/* The connection's settings, in sqlite.c's order. */
static int set_pragmas(struct wq__conn *c, char *msg, size_t msgsz)
{
	const char *sync = getenv("WAKEQ_SQLITE_SYNCHRONOUS");
	const char *sync_sql;
	int rc;

	if (!sync || !*sync || strcasecmp(sync, "FULL") == 0)
		sync_sql = "PRAGMA synchronous = FULL";
	else if (strcasecmp(sync, "NORMAL") == 0)
		sync_sql = "PRAGMA synchronous = NORMAL";
	else if (strcasecmp(sync, "OFF") == 0)
		sync_sql = "PRAGMA synchronous = OFF";
	else {
		snprintf(msg, msgsz, "WAKEQ_SQLITE_SYNCHRONOUS=%s is not one of NORMAL, FULL, OFF",
			 sync);
		return WQ__SQL_ERROR;
	}

	sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
	rc = set_wal(c, msg, msgsz);
	if (!rc)
		rc = pragma(c, sync_sql, msg, msgsz);
	if (!rc)
		rc = pragma(c, "PRAGMA foreign_keys = ON", msg, msgsz);
	return rc;
}

/* Open failures and what they return: no or empty path, SQLite too old: WQ__SQL_ERROR;
 * out of memory: WQ__SQL_NOMEM; the file cannot be opened: WQ__SQL_IO; not a database:
 * WQ__SQL_CORRUPT; an invalid $WAKEQ_SQLITE_SYNCHRONOUS: WQ__SQL_ERROR (sqlite.c said
 * WQ_ECONFIG); a pragma failing: its mapped code. msg is always set. */
static int sq_open(const char *url, struct wq__conn **out, char *msg, size_t msgsz)
{
	struct wq__conn *c = NULL;
	const char *path;
	size_t n;
	int rc;

	*out = NULL;
	if (!url) {
		snprintf(msg, msgsz, "no database path given");
		return WQ__SQL_ERROR;
	}
	path = wq__sqlite_path(url);
	if (!*path) {
		snprintf(msg, msgsz, "empty database path in '%s'", url);
		return WQ__SQL_ERROR;
	}
	if (sqlite3_libversion_number() < WQ_SQLITE_MIN_VERSION) {
		snprintf(msg, msgsz,
			 "SQLite %s is too old: wakeq needs 3.35.0 or later (RETURNING, upsert)",
			 sqlite3_libversion());
		return WQ__SQL_ERROR;
	}
	n = strlen(path) + 1;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = malloc(n))) {
		free(c);
		snprintf(msg, msgsz, "out of memory (opening %s)", path);
		return WQ__SQL_NOMEM;
	}
	memcpy(c->path, path, n);
	/* One handle is used by one thread at a time (wakeq.h): no connection mutex. The
	 * core never opens a missing file without meaning to create it (sql.h). */
	rc = sqlite3_open_v2(c->path, &c->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		if (!c->db) {
			snprintf(msg, msgsz, "out of memory (opening %s)", path);
			rc = WQ__SQL_NOMEM;
		} else {
			snprintf(msg, msgsz, "cannot open database %s: %s", path,
				 sqlite3_errmsg(c->db));
			rc = (rc & 0xff) == SQLITE_NOMEM ? WQ__SQL_NOMEM : WQ__SQL_IO;
		}
		goto fail;
	}
	sqlite3_extended_result_codes(c->db, 1);
	rc = set_pragmas(c, msg, msgsz);
	if (rc)
		goto fail;
	*out = c;
	return WQ__SQL_OK;
fail:
	sq_close(c);
	return rc;
}

static const char *sq_label(struct wq__conn *c)
{
	return c->path;
}

static const char *sq_errmsg(struct wq__conn *c)
{
	return c->err;
}

const struct wq__sql_driver wq__sqlite_driver = {
	.name = "sqlite",
	.caps = WQ__SQL_CAP_PROBE_FIRST,
	.dialect = &wq__sqlite_dialect,
	.open = sq_open,
	.close = sq_close,
	.label = sq_label,
	.errmsg = sq_errmsg,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.exec = sq_exec,
	.step = sq_step,
	.is_null = sq_is_null,
	.col_i64 = sq_col_i64,
	.col_text = sq_col_text,
	.changes = sq_changes,
	.done = sq_done,
	.script = sq_script,
	.wakeup_fd = NULL,
	.wakeup_drain = NULL,
};
