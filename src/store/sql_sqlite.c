/*
 * sql_sqlite.c — the SQLite driver (contract: sql.h).
 *
 * Several processes share one database file: WAL journal, a busy handler (busy_wait),
 * and every write transaction opened with BEGIN IMMEDIATE so a writer takes the write
 * lock up front (a deferred transaction that reads and then writes can deadlock against
 * another one doing the same, and in WAL mode can fail with SQLITE_BUSY_SNAPSHOT without
 * ever waiting).
 *
 * Statements are prepared once per connection, cached by id, $N rewritten to ?N. Each id
 * has its own cursor: two different statements may be open at once, the same one cannot.
 * Binding is without copy (done() unbinds). The storage class follows the argument type,
 * never the column (the driver cannot see it): TEXT -> TEXT (strlen bytes, NULL binds "",
 * exactly len bytes when len > 0), BLOB -> BLOB (len 0: empty, not NULL). So the payload
 * (TEXT) and the result (BLOB) keep the storage classes the old sqlite.c gave them.
 *
 * A failure's message is copied at failure time: a later ROLLBACK would overwrite
 * sqlite3_errmsg(). SQLite opens every file with O_CLOEXEC (checked by the driver test).
 */
#include "sql.h"
#include "statements.h"

#include <sqlite3.h>
#include <ctype.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define BUSY_TIMEOUT_MS 10000
/* busy_wait's pause between tries for a lock (W1c --processes, 8 writers: 0.1 ms
 * pauses 0.6x the enqueues/s of SQLite's own schedule, 1 ms 1.3x, 5 ms 1.3x). */
#define BUSY_PAUSE_NS 1000000
/* SQLite's own wal_autocheckpoint default, kept by wal_hook() which replaces it. */
#define AUTOCHECKPOINT_FRAMES 1000
/* A WAL this long (frames of a page) is checkpointed by the last connection to close;
 * a shorter one is left for the next process (see sq_close). */
#define CLOSE_CHECKPOINT_FRAMES 128
#define WQ_SQLITE_MIN_VERSION 3035000 /* RETURNING, ON CONFLICT DO UPDATE */

struct wq__cursor {
	struct wq__conn *c;
	sqlite3_stmt *st; /* borrowed from c->st[id] */
	int64_t rows;     /* rows stepped so far */
	int64_t changes;  /* -1 until SQLITE_DONE */
};

enum { TX_BEGIN_WRITE, TX_BEGIN_READ, TX_COMMIT, TX_ROLLBACK, TX__COUNT };
static const char *const tx_sql[TX__COUNT] = {"BEGIN IMMEDIATE", "BEGIN", "COMMIT",
					      "ROLLBACK"};

struct wq__conn {
	sqlite3 *db;
	char *path;                      /* owned */
	sqlite3_stmt *st[WQ__SQL_COUNT]; /* owned; prepared on first use */
	sqlite3_stmt *tx[TX__COUNT];     /* owned; prepared on first use */
	struct wq__cursor cur[WQ__SQL_COUNT];
	char err[512];  /* the last failure's message */
	int rofs;       /* opened read-only: the file is on a read-only file system */
	int wal_frames; /* the WAL's length after this connection's last commit */
	int sync_full;  /* synchronous = FULL: every commit syncs the WAL */
	int wal_marked; /* the WAL's directory-sync mark checked (sqlite_vfs.c) */
	struct timespec busy_since; /* busy_wait: when this wait for a lock began */
};

/* The core's view (enum wq__sqlerr) of an extended result code. */
static int sqlerr(int rc)
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

static int on_read_only_fs(const char *path)
{
	struct statvfs sv;

	return path && statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Records a failure (msg NULL: SQLite's own message) and returns its code. */
static int fail(struct wq__conn *c, int rc, const char *msg)
{
	snprintf(c->err, sizeof(c->err), "%s", msg ? msg : sqlite3_errmsg(c->db));
	/* A write on a read-only file system never clears by retrying this connection. It
	 * was opened immutable (open_read_only_fs), or normally when the -wal and -shm
	 * files were left in place (sq_close) and the file system went read-only later. */
	if ((rc & 0xff) == SQLITE_READONLY && (c->rofs || on_read_only_fs(c->path))) {
		snprintf(c->err, sizeof(c->err),
			 "read-only file system: the database can be read, not written");
		return WQ__SQL_ERROR;
	}
	return sqlerr(rc);
}

/* ------------------------------------------------------------------ statements ---- */

/* Rewrites $N to ?N in place. SQLite reads "$1" as a *named* parameter numbered by first
 * appearance ("SELECT $2, $1" would bind $2 first). Quoted text ('...', "...", `...`,
 * [...]; a doubled quote scans as close + open) and comments are left alone. */
static void rewrite_params(char *sql)
{
	char *p = sql, *end;

	while (*p) {
		if (*p == '\'' || *p == '"' || *p == '`' || *p == '[')
			end = strchr(p + 1, *p == '[' ? ']' : *p);
		else if (p[0] == '-' && p[1] == '-')
			end = strchr(p, '\n');
		else if (p[0] == '/' && p[1] == '*')
			end = (end = strstr(p + 2, "*/")) ? end + 1 : NULL;
		else {
			if (p[0] == '$' && p[1] >= '0' && p[1] <= '9')
				*p = '?';
			p++;
			continue;
		}
		p = end ? end + 1 : p + strlen(p); /* unterminated: no SQL after it */
	}
}

static int prepare(struct wq__conn *c, const char *text, sqlite3_stmt **out)
{
	char *sql = strdup(text);
	int rc;

	*out = NULL;
	if (!sql)
		return fail(c, SQLITE_NOMEM, "out of memory");
	rewrite_params(sql);
	rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
	free(sql);
	return rc == SQLITE_OK ? WQ__SQL_OK : fail(c, rc, NULL); /* *out is NULL on failure */
}

static int bind_arg(sqlite3_stmt *st, int i, const struct wq__arg *a)
{
	switch (a->type) {
	case WQ__ARG_NULL:
		return sqlite3_bind_null(st, i);
	case WQ__ARG_I64:
		return sqlite3_bind_int64(st, i, (sqlite3_int64)a->i);
	case WQ__ARG_TEXT:
		if (a->p && a->len > 0)
			return sqlite3_bind_text64(st, i, a->p, a->len, SQLITE_STATIC, SQLITE_UTF8);
		return sqlite3_bind_text(st, i, a->p ? a->p : "", -1, SQLITE_STATIC);
	case WQ__ARG_BLOB:
		if (a->len == 0)
			return sqlite3_bind_zeroblob(st, i, 0);
		if (a->p)
			return sqlite3_bind_blob64(st, i, a->p, a->len, SQLITE_STATIC);
	}
	return SQLITE_MISUSE;
}

/* Resets st and binds args: cur is then ready to step. Every parameter must get an
 * argument (an unbound one would silently be NULL); arguments beyond the highest $N are
 * ignored (a dialect variant may not need them all). */
static int cursor_start(struct wq__conn *c, struct wq__cursor *cur, sqlite3_stmt *st,
			const struct wq__arg *args, int nargs)
{
	int i, rc, nparams = sqlite3_bind_parameter_count(st);
	char msg[96];

	/* No sqlite3_clear_bindings() here: every parameter is bound below (a bind replaces
	 * the value before it), and clearing ~70 of them cost ~850 instructions a task in a
	 * batch of enqueues. A failed bind clears them all (below). */
	sqlite3_reset(st);
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
	*cur = (struct wq__cursor){c, st, 0, -1};
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
		rc = text ? prepare(c, text, &c->st[id]) : fail(c, SQLITE_MISUSE, "no SQLite text");
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

/* Text, then bytes: the order SQLite documents. A value that cannot be converted (out of
 * memory) reads as "". */
static const char *sq_col_text(struct wq__cursor *cur, int col, size_t *len)
{
	const unsigned char *text = sqlite3_column_text(cur->st, col);

	if (len)
		*len = text ? (size_t)sqlite3_column_bytes(cur->st, col) : 0;
	return text ? (const char *)text : "";
}

/* sqlite3_changes() is set when a statement completes, and a RETURNING statement, which
 * makes all its changes in the first step, completes after its last row: until then the
 * count is the rows returned so far (one per changed row). */
static int64_t sq_changes(struct wq__cursor *cur)
{
	if (cur->changes >= 0)
		return cur->changes;
	return sqlite3_stmt_readonly(cur->st) ? 0 : cur->rows;
}

/* The bindings stay until the next run rebinds every parameter (cursor_start): they are
 * SQLITE_STATIC pointers that SQLite reads only when the statement steps, never on reset,
 * rebind or finalize, and nothing here expands a statement's SQL. Clearing them here cost
 * ~420 instructions a task in a batch enqueue. */
static void sq_done(struct wq__cursor *cur)
{
	if (cur && cur->st)
		sqlite3_reset(cur->st);
}

/* ------------------------------------------------------------------ transactions ---- */

/* Runs a transaction statement. A failing ROLLBACK (record 0) keeps the message of the
 * failure that led to it. */
static int tx_run(struct wq__conn *c, int tx, int record)
{
	int rc = SQLITE_OK;

	if (!c->tx[tx])
		rc = sqlite3_prepare_v3(c->db, tx_sql[tx], -1, SQLITE_PREPARE_PERSISTENT,
					&c->tx[tx], NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(c->tx[tx]);
	if (rc == SQLITE_DONE)
		rc = WQ__SQL_OK;
	else
		rc = record ? fail(c, rc, NULL) : sqlerr(rc);
	sqlite3_reset(c->tx[tx]); /* NULL: a no-op */
	return rc;
}

static int sq_begin(struct wq__conn *c, int write)
{
	return tx_run(c, write ? TX_BEGIN_WRITE : TX_BEGIN_READ, 1);
}

static int sq_commit(struct wq__conn *c)
{
	return tx_run(c, TX_COMMIT, 1);
}

/* SQLite may already have rolled back on its own (after SQLITE_FULL, SQLITE_IOERR...). */
static void sq_rollback(struct wq__conn *c)
{
	if (!sqlite3_get_autocommit(c->db))
		tx_run(c, TX_ROLLBACK, 0);
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

/* Checkpoint on close or not (issue 11). The last connection to close checkpoints the
 * WAL into the database and deletes it: two fsyncs, and the next writer's new WAL two
 * more (its header and the directory), so a `wakeq enqueue` with no worker running paid
 * five fsyncs instead of its commit's one. Left in place, the WAL costs the next process
 * that opens the store a read of it (its index in the -shm file is rebuilt): cheap while
 * it is short. So a connection checkpoints on close only once its commits have grown the
 * WAL past CLOSE_CHECKPOINT_FRAMES; a commit is durable in the WAL either way. */
static void sq_close(struct wq__conn *c)
{
	size_t i;

	if (!c)
		return;
	if (c->db && c->wal_frames >= CLOSE_CHECKPOINT_FRAMES)
		sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	for (i = 0; i < WQ__SQL_COUNT; i++)
		sqlite3_finalize(c->st[i]);
	for (i = 0; i < TX__COUNT; i++)
		sqlite3_finalize(c->tx[i]);
	sqlite3_close_v2(c->db);
	free(c->path);
	free(c);
}

/* "sqlite:PATH", "file:PATH", "sqlite:///abs/path", "file:///abs/path" or a plain path. */
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

/* An open failure in the old sqlite.c's words: the path, what failed, SQLite's say. */
static int open_fail(struct wq__conn *c, int rc, const char *what, char *msg, size_t msgsz)
{
	const char *native = sqlite3_errmsg(c->db);
	int os = sqlite3_system_errno(c->db);

	if (sqlerr(rc) == WQ__SQL_BUSY)
		snprintf(msg, msgsz, "database %s is busy (%s): %s", c->path, what, native);
	else if (sqlerr(rc) == WQ__SQL_NOMEM)
		snprintf(msg, msgsz, "out of memory (database %s, %s)", c->path, what);
	else if (sqlerr(rc) == WQ__SQL_IO && os != 0)
		/* "disk I/O error" alone does not say a full disk or a read-only file system */
		snprintf(msg, msgsz, "database %s: %s: %s (%s)", c->path, what, native,
			 strerror(os));
	else
		snprintf(msg, msgsz, "database %s: %s: %s", c->path, what, native);
	return sqlerr(rc);
}

static int pragma(struct wq__conn *c, const char *sql, char *msg, size_t msgsz)
{
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? WQ__SQL_OK : open_fail(c, rc, sql, msg, msgsz);
}

/* Switching a fresh file to WAL needs an exclusive lock, and SQLite reports SQLITE_BUSY
 * for it without calling the busy handler when another process is doing the same
 * (concurrent `wakeq init`): wait here, as long as busy_wait would. */
static int set_wal(struct wq__conn *c, char *msg, size_t msgsz)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
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
	} else {
		mode = (const char *)sqlite3_column_text(st, 0);
		rc = WQ__SQL_OK;
		if (!mode || (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)) {
			snprintf(msg, msgsz,
				 "database %s: cannot use the WAL journal (journal mode stays %s)",
				 c->path, mode ? mode : "unknown");
			rc = WQ__SQL_IO; /* e.g. no shared memory on this file system */
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* After each commit: SQLite's automatic checkpoint (which this hook replaces), the
 * WAL's length for sq_close, and once per connection the WAL's directory-sync mark
 * (sqlite_vfs.c): in synchronous=FULL this commit synced the WAL, and with it the
 * directory if this connection opened the WAL without the mark. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct wq__conn *c = arg;

	c->wal_frames = frames;
	if (c->sync_full && !c->wal_marked) {
		c->wal_marked = 1;
		wq__sqlite_wal_mark(sqlite3_filename_wal(sqlite3_db_filename(db, name)));
	}
	if (frames >= AUTOCHECKPOINT_FRAMES)
		sqlite3_wal_checkpoint(db, name); /* passive: a failure is retried next time */
	return SQLITE_OK;
}

/* The busy handler: waits for a lock another connection holds, trying again every 1 ms,
 * for BUSY_TIMEOUT_MS in all. SQLite's own (sqlite3_busy_timeout) pauses up to 100 ms
 * between tries, and peers that take the write lock back within each pause (another
 * worker's loop, lane and intake committing back to back on a loaded machine) can keep
 * a writer waiting for seconds: most likely how a worker's loop, its heartbeat due,
 * made no progress for 2.2 s while the other worker committed, until its lease (ten
 * heartbeats in the test) ran out and its running tasks were interrupted
 * (t_intake_imap_many under ASan). Tries every 1 ms catch the short gaps between the
 * peers' transactions (store/test_sql_sqlite busy_wait_takes_short_gaps). */
static int busy_wait(void *arg, int tries)
{
	struct wq__conn *c = arg;
	struct timespec now, pause = {0, BUSY_PAUSE_NS};

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (tries == 0)
		c->busy_since = now;
	else if ((now.tv_sec - c->busy_since.tv_sec) * 1000 +
			 (now.tv_nsec - c->busy_since.tv_nsec) / 1000000 >=
		 BUSY_TIMEOUT_MS)
		return 0; /* SQLITE_BUSY, reported as the store being busy */
	nanosleep(&pause, NULL);
	return 1;
}

static int set_pragmas(struct wq__conn *c, char *msg, size_t msgsz)
{
	const char *sync = getenv("WAKEQ_SQLITE_SYNCHRONOUS");
	const char *sync_sql;
	int rc;

	if (!sync || !*sync || strcasecmp(sync, "FULL") == 0) {
		sync_sql = "PRAGMA synchronous = FULL";
		c->sync_full = 1;
	}
	else if (strcasecmp(sync, "NORMAL") == 0)
		sync_sql = "PRAGMA synchronous = NORMAL";
	else if (strcasecmp(sync, "OFF") == 0)
		sync_sql = "PRAGMA synchronous = OFF";
	else {
		snprintf(msg, msgsz, "WAKEQ_SQLITE_SYNCHRONOUS=%s is not one of NORMAL, FULL, OFF",
			 sync);
		return WQ__SQL_ERROR;
	}
	sqlite3_busy_handler(c->db, busy_wait, c);
	sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL); /* sq_close */
	sqlite3_wal_hook(c->db, wal_hook, c);
	rc = set_wal(c, msg, msgsz);
	if (!rc)
		rc = pragma(c, sync_sql, msg, msgsz);
	if (!rc)
		rc = pragma(c, "PRAGMA foreign_keys = ON", msg, msgsz);
	return rc;
}

/* The file is on a read-only file system: WAL needs its -shm file (created or written
 * by every reader), so a normal open fails ("unable to open database file"). Nothing can
 * change the file while the file system stays read-only, so it is opened immutable:
 * reads work, every write fails naming the cause (fail()). Other opens are kept. */
static int open_read_only_fs(struct wq__conn *c, char *msg, size_t msgsz)
{
	struct stat wal;
	char *uri;
	int rc;

	if (!on_read_only_fs(c->path))
		return -1;
	/* An immutable open ignores the -wal file: with transactions still in it (a crash
	 * before the file system went read-only) it would read an old state. */
	uri = sqlite3_mprintf("%s-wal", c->path);
	if (!uri)
		return -1;
	if (stat(uri, &wal) == 0 && wal.st_size > 0) {
		sqlite3_free(uri);
		snprintf(msg, msgsz,
			 "database %s is on a read-only file system and its -wal file was left "
			 "behind (a process did not close it): it may hold transactions not yet "
			 "in the database, so it can be opened only where it can be written",
			 c->path);
		return WQ__SQL_IO;
	}
	sqlite3_free(uri);
	/* the path percent-encoded: '?', '#' and '%' must not end or escape it */
	uri = sqlite3_mprintf("file:");
	for (const unsigned char *p = (const unsigned char *)c->path; uri && *p; p++)
		uri = (isalnum(*p) || strchr("/-._~", *p)) ? sqlite3_mprintf("%z%c", uri, *p)
							    : sqlite3_mprintf("%z%%%02X", uri, *p);
	if (uri)
		uri = sqlite3_mprintf("%z?immutable=1", uri);
	if (!uri) {
		snprintf(msg, msgsz, "out of memory (opening %s)", c->path);
		return WQ__SQL_NOMEM;
	}
	sqlite3_close_v2(c->db);
	c->db = NULL;
	rc = sqlite3_open_v2(uri, &c->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
			     NULL);
	sqlite3_free(uri);
	if (rc != SQLITE_OK || !c->db) {
		snprintf(msg, msgsz, "cannot open database %s (read-only file system): %s", c->path,
			 c->db ? sqlite3_errmsg(c->db) : "out of memory");
		return WQ__SQL_IO;
	}
	sqlite3_extended_result_codes(c->db, 1);
	c->rofs = 1;
	return WQ__SQL_OK;
}

/* Failures: no or empty path, SQLite too old, an invalid $WAKEQ_SQLITE_SYNCHRONOUS:
 * ERROR; cannot open, no WAL: IO; not a database: CORRUPT; a pragma: its code. The file
 * is created if missing: the core stat()s it first unless it means to create it. */
static int sq_open(const char *url, struct wq__conn **out, char *msg, size_t msgsz)
{
	struct wq__conn *c;
	const char *path = url ? wq__sqlite_path(url) : NULL;
	int rc;

	*out = NULL;
	if (!path || !*path) {
		if (url)
			snprintf(msg, msgsz, "empty database path in '%s'", url);
		else
			snprintf(msg, msgsz, "no database path given");
		return WQ__SQL_ERROR;
	}
	if (sqlite3_libversion_number() < WQ_SQLITE_MIN_VERSION) {
		snprintf(msg, msgsz, "SQLite %s is too old: wakeq needs 3.35.0 or later",
			 sqlite3_libversion());
		return WQ__SQL_ERROR;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		snprintf(msg, msgsz, "out of memory (opening %s)", path);
		return WQ__SQL_NOMEM;
	}
	/* One handle is used by one thread at a time (wakeq.h): no connection mutex. */
	rc = sqlite3_open_v2(c->path, &c->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			     wq__sqlite_vfs());
	if (rc != SQLITE_OK && !c->db) {
		snprintf(msg, msgsz, "out of memory (opening %s)", path);
		rc = WQ__SQL_NOMEM;
	} else if (rc != SQLITE_OK) {
		snprintf(msg, msgsz, "cannot open database %s: %s", path, sqlite3_errmsg(c->db));
		rc = (rc & 0xff) == SQLITE_NOMEM ? WQ__SQL_NOMEM : WQ__SQL_IO;
	} else {
		sqlite3_extended_result_codes(c->db, 1);
		rc = set_pragmas(c, msg, msgsz);
		if (rc != WQ__SQL_OK) {
			int ro = open_read_only_fs(c, msg, msgsz);

			if (ro >= 0)
				rc = ro;
		}
	}
	if (rc) {
		sq_close(c);
		return rc;
	}
	*out = c;
	return WQ__SQL_OK;
}

static const char *sq_label(struct wq__conn *c)
{
	return c->path;
}

static const char *sq_errmsg(struct wq__conn *c)
{
	return c->err;
}

/* No wake-ups: a SQLite worker polls. */
const struct wq__sql_driver wq__sqlite_driver = {
	.name = "sqlite",
	.caps = WQ__SQL_CAP_PROBE_FIRST | WQ__SQL_CAP_IN_PROCESS,
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
};
