/*
 * sql.h — the thin driver interface under the store operations.
 *
 * The store operations (src/store/op_*.c) hold every lifecycle decision once: which
 * state follows, which event with which detail, what a stale attempt records. They
 * reach the database only through a driver (sql_sqlite.c, sql_postgres.c), which runs
 * statements and nothing else: it never decides a state, never builds an event, never
 * writes a user-facing message. Its errors are a small set of codes (enum wq__sqlerr);
 * the core words them (wq__sql_fail in sql.c).
 *
 * Statements are written once, in statements.h, with $N placeholders. A statement whose
 * text differs between dialects is declared there with a NULL text and its two variants
 * live in the dialect files (dialect_sqlite.c, dialect_postgres.c) next to each dialect's
 * schema and migrations. Drivers prepare a statement on first use on a connection and
 * cache it by id (SQLite rewrites $N to ?N at prepare time: SQLite reads "$1" as a *name*
 * numbered by first appearance, so passing it through is wrong).
 *
 * Invariants every driver keeps:
 *  - One statement is open (stepping) at a time per connection; wq__sql_done() ends it.
 *    Bound argument memory must stay valid until then (drivers may bind without copy).
 *  - A failed call inside a transaction leaves it open; the caller rolls back.
 *  - rollback() is safe to call at any time (nothing open: nothing happens).
 *  - No driver reads a clock for data: times are arguments.
 */
#ifndef WQ_SQL_H
#define WQ_SQL_H

#include "wakeq.h"

#include <stddef.h>
#include <stdint.h>

struct wq__conn; /* driver-private connection */
struct wq__cursor; /* driver-private: one executing statement */

/* What went wrong, as the core needs to know it. 0 is success. */
enum wq__sqlerr {
	WQ__SQL_OK = 0,
	WQ__SQL_BUSY,           /* lock / serialization failure after the driver's own wait */
	WQ__SQL_UNIQUE,         /* unique or primary key violation */
	WQ__SQL_FOREIGN,        /* foreign key violation */
	WQ__SQL_LOST,           /* connection lost; nothing of the open transaction remains;
				 * the driver reconnects (with backoff) on a later call */
	WQ__SQL_COMMIT_UNKNOWN, /* COMMIT sent, no answer: it may or may not have committed */
	WQ__SQL_TOOBIG,         /* a value beyond the database's limits */
	WQ__SQL_NOMEM,
	WQ__SQL_IO,             /* disk full, I/O error, read-only, permission */
	WQ__SQL_CORRUPT,        /* the database file is malformed: not transient */
	WQ__SQL_ERROR,          /* anything else (a bug in a statement, a constraint) */
};

/* Capability flags of a driver (wq__sql_driver.caps). */
enum {
	WQ__SQL_CAP_SKIP_LOCKED = 1u << 0, /* FOR UPDATE SKIP LOCKED in claims */
	WQ__SQL_CAP_NOTIFY = 1u << 1,      /* statement SQL_NOTIFY wakes LISTENers; wakeup_fd */
	WQ__SQL_CAP_COMMIT_LOST = 1u << 2, /* commit() may answer WQ__SQL_COMMIT_UNKNOWN */
	WQ__SQL_CAP_PROBE_FIRST = 1u << 3, /* single writer: probe with a read before a write
					    * transaction, so idle workers never take the lock */
	WQ__SQL_CAP_AUTOCOMMIT = 1u << 4,  /* a write statement outside a transaction is its
					    * own transaction, never run twice by the driver:
					    * a lost answer is WQ__SQL_COMMIT_UNKNOWN. One round
					    * trip instead of three (BEGIN, statement, COMMIT) */
	/* wave5 drain: statements run inside this process (no round trips): a cached
	 * one-row statement per row costs less than one statement expanding a JSON array of
	 * rows (op_rows.c) */
	WQ__SQL_CAP_IN_PROCESS = 1u << 7,
};

/* One bound argument. Build them with the WQ__A* macros. */
enum wq__argtype { WQ__ARG_NULL, WQ__ARG_I64, WQ__ARG_TEXT, WQ__ARG_BLOB };

struct wq__arg {
	enum wq__argtype type;
	int64_t i;
	const char *p; /* TEXT: NUL-terminated (NULL binds ""); BLOB: len bytes */
	size_t len;
};

#define WQ__AI(v) ((struct wq__arg){WQ__ARG_I64, (int64_t)(v), NULL, 0})
#define WQ__AT(s) ((struct wq__arg){WQ__ARG_TEXT, 0, (s), 0})
#define WQ__AB(b, n) ((struct wq__arg){WQ__ARG_BLOB, 0, (const char *)(b), (n)})
#define WQ__ANULL ((struct wq__arg){WQ__ARG_NULL, 0, NULL, 0})

/* A driver: a table of functions. Every int-returning function returns an enum
 * wq__sqlerr; the native message of the last failure is errmsg(). */
struct wq__sql_driver {
	const char *name; /* "sqlite", "postgres" */
	unsigned caps;
	const struct wq__dialect *dialect;

	/* Connects (no schema work). On failure *out is NULL and msg (msgsz bytes) says why
	 * in one line. */
	int (*open)(const char *url, struct wq__conn **out, char *msg, size_t msgsz);
	void (*close)(struct wq__conn *c);
	/* A short name of the database for messages: a path, or host:port/dbname. Never a
	 * password. */
	const char *(*label)(struct wq__conn *c);
	/* The native message of the last failure on this connection, one line. */
	const char *(*errmsg)(struct wq__conn *c);

	/* Transactions. write: SQLite BEGIN IMMEDIATE; PostgreSQL BEGIN (READ COMMITTED).
	 * A begin on a connection that died while idle reconnects first (nothing was done). */
	int (*begin)(struct wq__conn *c, int write);
	int (*commit)(struct wq__conn *c);
	void (*rollback)(struct wq__conn *c);

	/* Runs statement `id` (enum wq__sql_id) with nargs arguments. On success *cur is the
	 * open statement: step it for rows, then wq__sql_done. On failure *cur is NULL.
	 * Outside a transaction a driver runs a statement again after a reconnect only when
	 * that is safe: a read, or a statement that never reached the server. */
	int (*exec)(struct wq__conn *c, int id, const struct wq__arg *args, int nargs,
		    struct wq__cursor **cur);
	/* The next row: 1 row, 0 no more rows, or -(enum wq__sqlerr) on failure. */
	int (*step)(struct wq__cursor *cur);
	/* Column reads of the current row, 0-based. text returns "" for NULL and never
	 * NULL; its length (bytes, without the NUL) in *len when len is non-NULL. The memory
	 * is valid until the next step or done. */
	int (*is_null)(struct wq__cursor *cur, int col);
	int64_t (*col_i64)(struct wq__cursor *cur, int col);
	const char *(*col_text)(struct wq__cursor *cur, int col, size_t *len);
	/* Rows changed by the statement (valid after the first step). */
	int64_t (*changes)(struct wq__cursor *cur);
	/* Ends the statement (resets it for reuse). NULL is fine. */
	void (*done)(struct wq__cursor *cur);

	/* Runs SQL text with no arguments by the simple protocol (schema scripts with
	 * several statements). */
	int (*script)(struct wq__conn *c, const char *sql);

	/* Wake-ups (WQ__SQL_CAP_NOTIFY; NULL otherwise). Semantics as store.h's
	 * wakeup_fd / wakeup_drain: fd after subscribing (LISTEN, redone by the driver after
	 * every reconnect), -1 when there is no connection now; drain 1 / 0 / -1. */
	int (*wakeup_fd)(struct wq__conn *c);
	int (*wakeup_drain)(struct wq__conn *c);

	/* wave5 pgw (NULL: not available). Inside a write transaction: runs statement id,
	 * whose rows and answer the caller does not read, possibly without waiting for it
	 * (PostgreSQL: it stays in the pipeline, with COMMIT after it). Its failure may
	 * come with the next call on the connection instead — commit() included, which
	 * then commits nothing — so the caller does nothing after it that depends on it. */
	int (*exec_queued)(struct wq__conn *c, int id, const struct wq__arg *args, int nargs);
};

/* What a dialect provides besides its driver: the statements whose text differs, and
 * the schema. */
struct wq__migration {
	int version;     /* the schema version after this step */
	const char *sql; /* run by script() inside a write transaction */
};

struct wq__dialect {
	/* The complete text of statement `id` in this dialect: statements.h's text with the
	 * dialect's fragments (D_... macros) expanded, or the dialect's own variant where
	 * statements.h gives NULL. */
	const char *(*variant)(int id);
	const struct wq__migration *migrations; /* in order, append only */
	const size_t *nmigrations;              /* (a pointer: defined in schema_*.c) */
};

extern const struct wq__dialect wq__sqlite_dialect;
extern const struct wq__dialect wq__postgres_dialect;

/* The channel PostgreSQL wake-ups are sent on (SQL_NOTIFY) and LISTENed to. */
#define WQ__SQL_NOTIFY_CHANNEL "wakeq"

extern const struct wq__sql_driver wq__sqlite_driver;
#ifdef WQ_HAVE_POSTGRES
extern const struct wq__sql_driver wq__postgres_driver;
#endif

/* The text of statement `id` for a dialect (sql.c): d->variant(id). */
const char *wq__sql_text(const struct wq__dialect *d, int id);

/* The file path of a SQLite URL ("sqlite:PATH", "file:PATH", "sqlite:///abs", a plain
 * path) — sql_sqlite.c. The core checks that the file exists before open() when it may
 * not create one. */
const char *wq__sqlite_path(const char *url);

/* SQLite's unix VFS that syncs a WAL file's directory once per file, not once per
 * process (sqlite_vfs.c): its name for sqlite3_open_v2, or NULL (the default VFS); and
 * the mark a connection sets after a synchronous=FULL commit (its WAL and directory
 * synced). */
const char *wq__sqlite_vfs(void);
void wq__sqlite_wal_mark(const char *wal_path);
/* 1 when the WAL at wal_path carries the mark naming it and its directory as they are
 * now (sqlite_vfs.c): then a connection opening it skips the directory sync. */
int wq__sqlite_wal_has_mark(const char *wal_path);

/* Schema step 5 (wave 12), the same text on both stores (schema_sqlite.c says why). */
#define WQ__SCHEMA_STEP5_HELD                                                              \
	"-- wave12 held: tasks waiting behind their turn-lock key out of the claim's range\n" \
	"ALTER TABLE tasks ADD COLUMN held INTEGER NOT NULL DEFAULT 0;\n"                     \
	"DROP INDEX tasks_claim;\n"                                                           \
	"CREATE INDEX tasks_claim ON tasks (state, kind, held, order_at, id) WHERE state = "  \
	"'pending' OR state = 'running' OR state = 'interrupted';\n"

/* The SQLite schema steps (schema_sqlite.c). */
extern const struct wq__migration wq__sqlite_migrations[];
extern const size_t wq__sqlite_nmigrations;

#ifdef WQ_HAVE_POSTGRES
/* The PostgreSQL schema steps (schema_postgres.c), for dialect_postgres.c. */
extern const struct wq__migration wq__postgres_migrations[];
extern const size_t wq__postgres_nmigrations;
#endif

#endif /* WQ_SQL_H */
