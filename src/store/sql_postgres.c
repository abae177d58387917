/*
 * sql_postgres.c — the PostgreSQL driver of sql.h, over libpq.
 *
 * Statements are prepared once per connection ("wq_<id>"). Values: integers as decimal
 * text, TEXT as text, BLOB (and TEXT with a len) in binary format with its length; the
 * server checks the encoding of text, so invalid UTF-8 is an ERROR for the core to
 * report. Results come as text; step() decodes bytea columns so col_text() hands out
 * their exact bytes. The PGresult is the cursor's: several cursors may be open at once.
 *
 * Connection loss: a statement that fails because the connection broke tries PQreset
 * once right there and reports LOST; while the server stays down, reconnect attempts are
 * spaced by a backoff (100 ms doubling to 5 s). A generation counter fails every later
 * statement of a transaction begun on an older connection. Prepared statements and
 * LISTEN die with the session: the cache is cleared, LISTEN redone. libpq makes its
 * socket close-on-exec itself (test_sql_postgres checks it, also after a reconnect).
 *
 * Outside a transaction a statement is its own transaction (autocommit). Only what is
 * safe to repeat is repeated after a reconnect: a read (a statement whose text begins
 * with SELECT) that failed because the connection died, and whose connection came back
 * at once, runs again once: it changed nothing. BEGIN likewise, and any statement whose
 * failure came before it was sent (its prepare). A write outside a transaction that was
 * sent and got no answer may or may not have committed: it is COMMIT_UNKNOWN, exactly
 * like a COMMIT whose answer was lost, and never repeated here — the core decides
 * whether a repeat is safe (sql.c, retry_safe).
 *
 * wave5 pgw: begin() sends nothing. BEGIN goes out with the transaction's first statement
 * in one pipeline (libpq pipeline mode: one round trip where there were two). Until it
 * is sent nothing of the transaction is on the server, so a connection found dead then
 * is simply replaced, and a pipeline that lost its connection (no COMMIT in it: the
 * server rolled back whatever it got) runs again once on the new connection, write or
 * read, exactly as a BEGIN alone used to. A commit() with BEGIN still unsent has nothing
 * to commit; it answers as it did for an empty transaction (LOST when the connection
 * died meanwhile).
 *
 * wave5 pgw: exec_queued() sends a statement of the open transaction whose answer nobody
 * reads (the multi-row writes just before COMMIT) without waiting: it stays in the
 * pipeline, and the next call reads its answer first (settle) — commit() sends COMMIT
 * in the same pipeline, so the rows and the COMMIT are one round trip; wave7 pg: a
 * prepared statement (exec) likewise goes after the queued ones in the same pipeline,
 * and its answer is read with theirs. A queued
 * statement's failure fails that next call (the transaction was aborted by the server:
 * nothing commits); a connection lost with COMMIT in the pipeline is COMMIT_UNKNOWN,
 * unless a statement before it had already got the server's ERROR (the transaction was
 * aborted there: that error is the answer).
 *
 * A pipeline that cannot be ended cleanly while libpq still calls the connection good (a
 * send refused for want of memory, an answer missing) would leave libpq in pipeline mode
 * with answers unread, refusing every later PQexec (ROLLBACK, the next BEGIN): the handle
 * wedged. So the session is given up exactly like a broken one (pipeline_end: conn_lost,
 * LOST) — the server rolls back what it got of the transaction, and the rules above
 * decide what runs again.
 */
#include "internal.h"
#include "sql.h"
#include "statements.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RECONNECT_MIN_US (100 * WQ__US_PER_MS)
#define RECONNECT_MAX_US (5 * WQ__US_PER_S)
#define MAX_ARGS 32
#define BYTEAOID 17 /* pg_type.h: a column whose text form step() decodes */

struct wq__conn {
	PGconn *pg;                          /* owned; never NULL after open */
	char label[256];                     /* host:port/dbname, never a password */
	char err[512];                       /* the last failure, one line */
	char lost[256];                      /* why the connection went bad, one line */
	unsigned char prepared[WQ__SQL_COUNT]; /* on the current connection */
	int nparams[WQ__SQL_COUNT];          /* of each prepared statement ($N it uses) */
	/* Of each statement id: 1 a read (safe to run again), 2 a write, 0 not known yet. */
	unsigned char kind[WQ__SQL_COUNT];
	int in_tx;                           /* between begin and commit/rollback */
	int begin_pending;                   /* in_tx, and BEGIN not sent yet (wave5 pgw) */
	int queued;                          /* statements in the pipeline, answers unread */
	unsigned gen, tx_gen;                /* connection generation (now, at begin) */
	int reconnected;                     /* the last loss was followed by a good PQreset */
	int listen_wanted, listening, fd_given; /* fd_given: wakeup_fd handed out the socket */
	unsigned fd_gen;                     /* of this generation */
	int64_t reconnect_at;                /* monotonic µs: no reconnect attempt before */
	int64_t backoff;                     /* µs; 0 while connected */
};

struct wq__cursor {
	PGresult *res;   /* owned */
	int row;         /* current row; -1 before the first step */
	int nfields;
	/* The current row's bytea columns, decoded (PQfreemem'd at the next step / done);
	 * p NULL for other columns. nfields entries when the result has a bytea column. */
	struct { unsigned char *p; size_t n; } *bytes;
};

static const char *nz(const char *s)
{
	return s ? s : "";
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * WQ__US_PER_S + ts.tv_nsec / 1000;
}

/* Copies libpq's (often multi-line, "ERROR:  "-prefixed) text as one line. */
static void one_line(char *dst, size_t dstsz, const char *src)
{
	size_t o = 0;
	int space = 0;

	src = nz(src);
	if (strncmp(src, "ERROR:  ", 8) == 0 || strncmp(src, "FATAL:  ", 8) == 0)
		src += 8;
	for (; *src && o + 1 < dstsz; src++) {
		if (*src == '\n' || *src == '\r' || *src == '\t' || *src == ' ') {
			space = o > 0;
			continue;
		}
		if (space && o + 2 < dstsz)
			dst[o++] = ' ';
		space = 0;
		dst[o++] = *src;
	}
	dst[o] = '\0';
}

/* Records msg as the last failure; returns code. */
static int set_err(struct wq__conn *c, int code, const char *msg)
{
	one_line(c->err, sizeof(c->err), msg);
	return code;
}

static int sqlstate_is(const char *state, const char *want)
{
	return state && strcmp(state, want) == 0;
}

static int conn_ok(const struct wq__conn *c)
{
	return PQstatus(c->pg) == CONNECTION_OK;
}

/* The library never prints: NOTICEs ("relation already exists, skipping") and the FATAL
 * a terminated backend sends while idle would go to stderr by default. */
static void quiet_notices(void *arg, const PGresult *res)
{
}

/* The channel is SQL_NOTIFY's (sql.h), so LISTEN and NOTIFY cannot disagree. */
static void listen_now(struct wq__conn *c)
{
	PGresult *res = PQexec(c->pg, "LISTEN " WQ__SQL_NOTIFY_CHANNEL);

	c->listening = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
}

/*
 * One reconnect attempt if the backoff allows one now. 0 when the connection is good
 * again (prepared statements are redone lazily, LISTEN here), -1 otherwise.
 */
static int reconnect(struct wq__conn *c)
{
	int64_t now = mono_us();

	if (now < c->reconnect_at)
		return -1;
	PQreset(c->pg);
	if (!conn_ok(c)) {
		one_line(c->lost, sizeof(c->lost), PQerrorMessage(c->pg));
		c->backoff = c->backoff ? c->backoff * 2 : RECONNECT_MIN_US;
		if (c->backoff > RECONNECT_MAX_US)
			c->backoff = RECONNECT_MAX_US;
		c->reconnect_at = now + c->backoff;
		return -1;
	}
	PQsetNoticeReceiver(c->pg, quiet_notices, NULL);
	c->backoff = 0;
	c->reconnect_at = 0;
	c->gen++;
	memset(c->prepared, 0, sizeof(c->prepared));
	c->listening = 0;
	if (c->listen_wanted)
		listen_now(c);
	return 0;
}

/* The connection broke during a call: try to get it back right away, and report the
 * call as LOST either way (its transaction, if any, is gone). */
static int conn_lost(struct wq__conn *c)
{
	one_line(c->err, sizeof(c->err), PQerrorMessage(c->pg));
	if (!c->err[0])
		wq__strlcpy(c->err, "connection closed", sizeof(c->err));
	wq__strlcpy(c->lost, c->err, sizeof(c->lost));
	c->listening = 0;
	memset(c->prepared, 0, sizeof(c->prepared));
	c->reconnected = reconnect(c) == 0; /* a failure there writes c->lost only */
	return WQ__SQL_LOST;
}

/* A connection that died while idle has its end of stream, often after a FATAL, waiting
 * in the socket: read it without blocking, so a call outside a transaction starts on a
 * new connection, and commit() knows a transaction that died before COMMIT was sent
 * (LOST, not COMMIT_UNKNOWN). The first read may only take the FATAL (parsed by
 * PQisBusy, swallowed by quiet_notices); the second sees the end. Notifications read on
 * the way stay queued for wakeup_drain(). */
static void probe(struct wq__conn *c)
{
	if (!conn_ok(c))
		return;
	if (PQconsumeInput(c->pg)) {
		PQisBusy(c->pg);
		PQconsumeInput(c->pg);
	}
	if (PQstatus(c->pg) == CONNECTION_BAD)
		one_line(c->lost, sizeof(c->lost), PQerrorMessage(c->pg));
}

/* Before a call outside a transaction: a connection known to be bad gets one reconnect
 * attempt (if the backoff allows); LOST while the server stays out of reach. */
static int conn_ready(struct wq__conn *c)
{
	probe(c);
	if (conn_ok(c) || reconnect(c) == 0)
		return WQ__SQL_OK;
	return set_err(c, WQ__SQL_LOST, c->lost[0] ? c->lost : "no connection");
}

/* Before a statement: outside a transaction, conn_ready; inside, the transaction must
 * still be on the connection it began on. */
static int call_ready(struct wq__conn *c)
{
	int rc;

	if (!c->in_tx)
		return conn_ready(c);
	if (c->begin_pending) { /* nothing of it sent yet: any good connection will do */
		rc = conn_ready(c);
		c->tx_gen = c->gen;
		return rc;
	}
	if (c->gen != c->tx_gen || !conn_ok(c))
		return set_err(c, WQ__SQL_LOST, "the connection was lost: the transaction "
						      "is gone");
	return WQ__SQL_OK;
}

/* SQLSTATE (or class) → code, first match wins. 57P0x, 08: the server ends the session;
 * but 08P01 on a good connection is a refused message (a bad Bind: a bug). 26000: a
 * prepared statement vanished (a pooler, DISCARD): prepared again next time. */
static const struct {
	const char *state;
	int code;
} sqlstates[] = {
	{"57P01", WQ__SQL_LOST},  {"57P02", WQ__SQL_LOST},   {"57P03", WQ__SQL_LOST},
	{"08P01", WQ__SQL_ERROR}, {"08", WQ__SQL_LOST},      {"40001", WQ__SQL_BUSY},
	{"40P01", WQ__SQL_BUSY},  {"55P03", WQ__SQL_BUSY},   {"53300", WQ__SQL_BUSY},
	{"57014", WQ__SQL_BUSY},  {"26000", WQ__SQL_BUSY},   {"53200", WQ__SQL_NOMEM},
	{"54000", WQ__SQL_TOOBIG}, {"53100", WQ__SQL_IO},    {"58", WQ__SQL_IO},
	{"23505", WQ__SQL_UNIQUE}, {"23503", WQ__SQL_FOREIGN}, {"XX001", WQ__SQL_CORRUPT},
	{"XX002", WQ__SQL_CORRUPT}, /* anything else (22021 bad encoding too): ERROR */
};

/* Maps a failed statement's result (res may be NULL: no answer, NOMEM) by its SQLSTATE
 * alone and records its message; the connection's state is pg_fail's business. */
static int map_result(struct wq__conn *c, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	size_t i;

	one_line(c->err, sizeof(c->err), primary ? primary
						 : res ? PQresultErrorMessage(res)
						       : PQerrorMessage(c->pg));
	if (!res)
		return WQ__SQL_NOMEM;
	if (sqlstate_is(state, "26000"))
		memset(c->prepared, 0, sizeof(c->prepared));
	for (i = 0; state && i < sizeof(sqlstates) / sizeof(sqlstates[0]); i++)
		if (strncmp(state, sqlstates[i].state, strlen(sqlstates[i].state)) == 0)
			return sqlstates[i].code;
	return WQ__SQL_ERROR;
}

/* Maps a failed statement (res may be NULL) and records its message. Reads the
 * connection's state, so call it before any other statement. */
static int pg_fail(struct wq__conn *c, const PGresult *res)
{
	if (PQstatus(c->pg) == CONNECTION_BAD)
		return conn_lost(c);
	return map_result(c, res);
}

static int result_ok(const PGresult *res)
{
	ExecStatusType st = PQresultStatus(res);

	return res && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
}

/* Runs text without values by the simple protocol (transaction control, scripts). */
static int simple(struct wq__conn *c, const char *sql)
{
	PGresult *res = PQexec(c->pg, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = WQ__SQL_OK;

	if (!res || (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK))
		rc = pg_fail(c, res);
	PQclear(res);
	return rc;
}

/*
 * Connection options. Those before "dbname" are defaults the URL may override: a bounded
 * connect, TCP keepalives so a vanished server is noticed, a lock wait as long as
 * SQLite's busy_timeout (then BUSY), and an idle transaction (a stopped process holding
 * row locks) ended after a minute. client_encoding comes after, so it always wins: all
 * text is UTF-8. No time zone or statement timeout: times are bigint microseconds.
 */
static PGconn *connect_db(const char *url)
{
	static const char *const keys[] = {
		"connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
		"keepalives_count", "application_name", "options", "dbname", "client_encoding",
		NULL,
	};
	const char *vals[] = {
		"10", "1", "30", "10", "3", "wakeq",
		"-c lock_timeout=10s -c idle_in_transaction_session_timeout=60s", url, "UTF8",
		NULL,
	};

	return PQconnectdbParams(keys, vals, 1);
}

/* host:port/dbname; the password is never part of it. */
static void make_label(PGconn *pg, char *dst, size_t dstsz)
{
	const char *db = PQdb(pg), *host = PQhost(pg), *port = PQport(pg);

	snprintf(dst, dstsz, "%s:%s/%s", host && *host ? host : "localhost",
		 port && *port ? port : "5432", nz(db));
}

static void pg_close(struct wq__conn *c)
{
	if (!c)
		return;
	PQfinish(c->pg);
	free(c);
}

static int pg_open(const char *url, struct wq__conn **out, char *msg, size_t msgsz)
{
	struct wq__conn *c = NULL;
	PQconninfoOption *opts;
	char *perr = NULL, line[256];
	PGPing ping;
	int rc;

	*out = NULL;
	if (!url || !*url) {
		snprintf(msg, msgsz, "no database URL given");
		return WQ__SQL_ERROR;
	}
	opts = PQconninfoParse(url, &perr);
	if (!opts) {
		one_line(line, sizeof(line), perr);
		snprintf(msg, msgsz, perr ? "invalid PostgreSQL URL: %s" : "out of memory%s", line);
		rc = perr ? WQ__SQL_ERROR : WQ__SQL_NOMEM;
		PQfreemem(perr);
		return rc;
	}
	PQconninfoFree(opts);

	c = calloc(1, sizeof(*c));
	if (!c || !(c->pg = connect_db(url))) {
		snprintf(msg, msgsz, "out of memory (opening PostgreSQL)");
		free(c);
		return WQ__SQL_NOMEM;
	}
	PQsetNoticeReceiver(c->pg, quiet_notices, NULL);
	make_label(c->pg, c->label, sizeof(c->label));
	if (!conn_ok(c)) {
		one_line(line, sizeof(line), PQerrorMessage(c->pg));
		snprintf(msg, msgsz, "cannot connect to PostgreSQL database %s: %s", c->label,
			 line);
		/* A server that is down or starting up is worth retrying (BUSY); one that
		 * answers and refuses (authentication, no such database) is not (IO). */
		ping = PQping(url);
		pg_close(c);
		return ping == PQPING_NO_RESPONSE || ping == PQPING_REJECT ? WQ__SQL_BUSY
									 : WQ__SQL_IO;
	}
	*out = c;
	return WQ__SQL_OK;
}

static const char *pg_label(struct wq__conn *c)
{
	return c->label;
}

static const char *pg_errmsg(struct wq__conn *c)
{
	return c->err;
}

/* Default isolation of a database may differ: ask for READ COMMITTED by name. The
 * `write` flag changes nothing (a READ ONLY transaction would refuse FOR UPDATE). */
#define BEGIN_SQL "BEGIN ISOLATION LEVEL READ COMMITTED"

/*
 * Leaves pipeline mode: OK when every answer was read (broken 0) and the connection is
 * good. Otherwise the session is given up (conn_lost: PQreset, a new generation, LOST),
 * also when libpq still calls it good: answers left unread keep libpq in pipeline mode,
 * where it refuses every PQexec, and what the server got of the pipeline is not known.
 * The server rolls back whatever it had of an open transaction.
 */
static int pipeline_end(struct wq__conn *c, int broken)
{
	char why[200];
	int was_ok = conn_ok(c), rc;

	c->queued = 0;
	if (!broken && was_ok && PQexitPipelineMode(c->pg) && conn_ok(c))
		return WQ__SQL_OK;
	if (!was_ok)
		return conn_lost(c);
	one_line(why, sizeof(why), PQerrorMessage(c->pg));
	rc = conn_lost(c); /* records libpq's last message, often empty here */
	snprintf(c->err, sizeof(c->err), "a pipeline could not be completed (%s): the "
		 "session was given up", why[0] ? why : "an answer was missing");
	return rc;
}

/* 1 when res is the server's ERROR for a statement of the transaction — not a FATAL that
 * ends the session (it may come after a COMMIT went through), not libpq's own report of
 * a lost connection (no SQLSTATE): the server aborted the transaction there, so nothing
 * after it in the pipeline, COMMIT included, committed. */
static int server_aborted(struct wq__conn *c, const PGresult *res)
{
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);

	return sev && strcmp(sev, "ERROR") == 0 && PQresultErrorField(res, PG_DIAG_SQLSTATE) &&
	       map_result(c, res) != WQ__SQL_LOST;
}

/* The bound values of one statement, in libpq's form. */
struct params {
	const char *val[MAX_ARGS];
	int len[MAX_ARGS];
	int fmt[MAX_ARGS];
	char num[MAX_ARGS][24];
};

/* wave7 pg: a prepared statement sent last in a pipeline (settle), with its values. */
struct last_stmt {
	const char *name;
	int n;
	const struct params *p;
};

/*
 * Ends the pipeline of queued statements: sends `last` after them when non-NULL (COMMIT),
 * or else the prepared statement `ps` when non-NULL (wave7 pg: a statement of the
 * transaction riding with the queued ones), a sync, and reads every answer. The first
 * failure (a queued statement's, or the last one's) as a code, its message recorded;
 * *last_res (may be NULL) gets the last one's result (owned) when it succeeded. A
 * pipeline that cannot be read to its end gives up the session (pipeline_end): LOST —
 * but a server ERROR read before that keeps its own code (the transaction was aborted
 * there; see server_aborted).
 */
static int settle(struct wq__conn *c, const char *last, const struct last_stmt *ps,
		  PGresult **last_res)
{
	PGresult *r, *bad = NULL;
	int n = c->queued, i, broken = 0, rc, sent;

	if (last_res)
		*last_res = NULL;
	if (last || ps) {
		sent = last ? PQsendQueryParams(c->pg, last, 0, NULL, NULL, NULL, NULL, 0)
			    : PQsendQueryPrepared(c->pg, ps->name, ps->n, ps->p->val, ps->p->len,
						  ps->p->fmt, 0);
		if (sent)
			n++;
		else
			broken = 1;
	}
	if (!broken && !PQpipelineSync(c->pg))
		broken = 1;
	for (i = 0; i < n && !broken; i++) { /* per query: its result, then NULL */
		if (!(r = PQgetResult(c->pg))) {
			broken = 1;
			break;
		}
		PQclear(PQgetResult(c->pg));
		if (result_ok(r) && (last || ps) && i == n - 1 && last_res)
			*last_res = r;
		else if (!result_ok(r) && !bad && PQresultStatus(r) != PGRES_PIPELINE_ABORTED)
			bad = r;
		else
			PQclear(r);
	}
	if (!broken)
		PQclear(PQgetResult(c->pg)); /* PGRES_PIPELINE_SYNC */
	rc = pipeline_end(c, broken);
	if (bad && (rc == WQ__SQL_OK || server_aborted(c, bad)))
		rc = map_result(c, bad); /* the connection is good, or it does not matter */
	if (rc && last_res) {
		PQclear(*last_res);
		*last_res = NULL;
	}
	PQclear(bad);
	return rc;
}

static int pg_begin(struct wq__conn *c, int write)
{
	int rc;

	rc = conn_ready(c);
	if (rc)
		return rc;
	c->in_tx = 1;
	c->tx_gen = c->gen;
	c->begin_pending = 1; /* sent with the first statement (see the top of this file) */
	return WQ__SQL_OK;
}

/* Sends a pending BEGIN on its own (before a statement that cannot ride with it). */
static int begin_now(struct wq__conn *c)
{
	int rc;

	if (!c->begin_pending)
		return WQ__SQL_OK;
	c->begin_pending = 0;
	c->reconnected = 0;
	rc = simple(c, BEGIN_SQL);
	if (rc == WQ__SQL_LOST && c->reconnected) {
		/* died while idle: nothing was done; start over on the new connection */
		c->reconnected = 0;
		rc = simple(c, BEGIN_SQL);
	}
	c->tx_gen = c->gen;
	return rc;
}

/* Ends an open transaction without keeping anything. After a connection loss the server
 * has rolled it back already; then there is nothing to do. */
static void pg_rollback(struct wq__conn *c)
{
	c->in_tx = 0;
	c->begin_pending = 0;
	if (c->queued)
		settle(c, NULL, NULL, NULL); /* answers that no longer matter */
	if (conn_ok(c) && PQtransactionStatus(c->pg) != PQTRANS_IDLE)
		PQclear(PQexec(c->pg, "ROLLBACK"));
}

/* No answer to COMMIT (the connection broke, the session ended): COMMIT_UNKNOWN. A COMMIT
 * the server turned into ROLLBACK (a failure inside went unnoticed): ERROR. */
static int pg_commit(struct wq__conn *c)
{
	PGresult *res;
	int rc = WQ__SQL_OK;

	probe(c);
	if (c->begin_pending) { /* nothing was sent: nothing to commit */
		c->begin_pending = 0;
		rc = c->gen != c->tx_gen || !conn_ok(c)
			     ? set_err(c, WQ__SQL_LOST, "the connection was lost: the "
							"transaction is gone")
			     : WQ__SQL_OK;
		pg_rollback(c);
		return rc;
	}
	rc = call_ready(c); /* known lost before COMMIT was sent: nothing committed */
	if (rc) {
		pg_rollback(c);
		return rc;
	}
	if (c->queued) { /* COMMIT rides with the queued statements */
		rc = settle(c, "COMMIT", NULL, &res);
		if (rc == WQ__SQL_LOST)
			rc = WQ__SQL_COMMIT_UNKNOWN; /* COMMIT was in the pipeline */
	} else {
		res = PQexec(c->pg, "COMMIT");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = pg_fail(c, res);
		if (rc == WQ__SQL_LOST)
			rc = WQ__SQL_COMMIT_UNKNOWN;
	}
	if (!rc && strcmp(PQcmdStatus(res), "COMMIT") != 0)
		rc = set_err(c, WQ__SQL_ERROR, "the transaction was rolled back");
	PQclear(res);
	c->in_tx = 0;
	if (rc)
		pg_rollback(c);
	return rc;
}

/* Prepares statement `id` on this connection and learns how many parameters it takes,
 * so that extra trailing arguments (a dialect variant that needs fewer) are not sent. */
static int prepare(struct wq__conn *c, int id, const char *name)
{
	const char *text = wq__sql_text(wq__postgres_driver.dialect, id);
	PGresult *res;
	int rc = WQ__SQL_OK;

	if (!text)
		return set_err(c, WQ__SQL_ERROR, "a statement without PostgreSQL text");
	res = PQprepare(c->pg, name, text, 0, NULL);
	/* 42P05: prepared already on this session (the cache was cleared by a 26000). */
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    !sqlstate_is(res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL, "42P05")) {
		rc = pg_fail(c, res);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	res = PQdescribePrepared(c->pg, name);
	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		c->nparams[id] = PQnparams(res);
		c->prepared[id] = 1;
	} else {
		rc = pg_fail(c, res);
	}
	PQclear(res);
	return rc;
}

static int params_set(struct wq__conn *c, struct params *p, const struct wq__arg *args,
		      int nargs)
{
	int i;

	if (nargs < 0 || nargs > MAX_ARGS)
		return set_err(c, WQ__SQL_ERROR, "too many statement arguments");
	for (i = 0; i < nargs; i++) {
		p->len[i] = 0;
		p->fmt[i] = 0;
		switch (args[i].type) {
		case WQ__ARG_NULL:
			p->val[i] = NULL;
			break;
		case WQ__ARG_I64:
			snprintf(p->num[i], sizeof(p->num[i]), "%" PRId64, args[i].i);
			p->val[i] = p->num[i];
			break;
		case WQ__ARG_TEXT:
			p->val[i] = nz(args[i].p);
			if (args[i].len == 0 || !args[i].p)
				break;
			/* exactly len bytes, as sql_sqlite.c: binary format, which for text
			 * is the bytes themselves (the server still checks the encoding) */
			/* fall through */
		case WQ__ARG_BLOB:
			if (args[i].len > INT_MAX)
				return set_err(c, WQ__SQL_TOOBIG, "a value of 2 GiB or more");
			p->val[i] = args[i].p ? args[i].p : "";
			p->len[i] = (int)args[i].len;
			p->fmt[i] = 1;
			break;
		default:
			return set_err(c, WQ__SQL_ERROR, "unknown argument type");
		}
	}
	return WQ__SQL_OK;
}

static void cursor_row_free(struct wq__cursor *cur)
{
	int i;

	for (i = 0; cur->bytes && i < cur->nfields; i++) {
		PQfreemem(cur->bytes[i].p);
		cur->bytes[i].p = NULL;
	}
}

static void pg_done(struct wq__cursor *cur)
{
	if (!cur)
		return;
	cursor_row_free(cur);
	free(cur->bytes);
	PQclear(cur->res);
	free(cur);
}

/* The cursor over a successful result (taken over); bytea columns get decode slots. */
static int cursor_init(struct wq__conn *c, struct wq__cursor *cur, PGresult *res)
{
	int i;

	cur->res = res;
	cur->row = -1;
	cur->nfields = PQnfields(res);
	for (i = 0; i < cur->nfields && PQftype(res, i) != BYTEAOID; i++)
		;
	if (i < cur->nfields)
		cur->bytes = calloc((size_t)cur->nfields, sizeof(*cur->bytes));
	if (i < cur->nfields && !cur->bytes)
		return set_err(c, WQ__SQL_NOMEM, "out of memory (a result row)");
	return WQ__SQL_OK;
}

/* 1 when statement `id` only reads: its text begins with SELECT (a data-modifying CTE
 * begins with WITH, and counts as a write). */
static int is_read(struct wq__conn *c, int id)
{
	const char *t;

	if (!c->kind[id]) {
		t = nz(wq__sql_text(wq__postgres_driver.dialect, id));
		while (*t == ' ' || *t == '\n' || *t == '\t' || *t == '(')
			t++;
		c->kind[id] = strncasecmp(t, "SELECT", 6) == 0 ? 1 : 2;
	}
	return c->kind[id] == 1;
}

/*
 * BEGIN and prepared statement `name` as one pipeline (one round trip). OK with *out the
 * statement's result (owned); else the first failure (BEGIN's, else the statement's) as
 * a code, recorded. A pipeline not read to its end gives up the session (pipeline_end):
 * LOST, and the server kept nothing of the transaction.
 */
static int begin_pipelined(struct wq__conn *c, const char *name, int n,
			   const struct params *p, PGresult **out)
{
	PGresult *b = NULL, *res = NULL;
	int sent, rc;

	*out = NULL;
	c->begin_pending = 0;
	c->tx_gen = c->gen;
	if (!PQenterPipelineMode(c->pg))
		return pipeline_end(c, 1);
	sent = PQsendQueryParams(c->pg, BEGIN_SQL, 0, NULL, NULL, NULL, NULL, 0) &&
	       PQsendQueryPrepared(c->pg, name, n, p->val, p->len, p->fmt, 0) &&
	       PQpipelineSync(c->pg);
	if (sent) {
		/* per query: its result, then NULL; then the sync's result */
		if ((b = PQgetResult(c->pg)) != NULL && PQgetResult(c->pg) == NULL &&
		    (res = PQgetResult(c->pg)) != NULL)
			PQclear(PQgetResult(c->pg)); /* NULL after the statement's result */
		PQclear(PQgetResult(c->pg)); /* PGRES_PIPELINE_SYNC */
	}
	rc = pipeline_end(c, !sent || !b || !res);
	if (b && PQresultStatus(b) != PGRES_COMMAND_OK) { /* BEGIN failed: report that */
		PQclear(res);
		res = b;
		b = NULL;
	}
	PQclear(b);
	if (!rc && !result_ok(res))
		rc = map_result(c, res); /* the connection is good: pipeline_end said so */
	if (rc) {
		PQclear(res);
		return rc;
	}
	*out = res;
	return WQ__SQL_OK;
}

static int pg_exec(struct wq__conn *c, int id, const struct wq__arg *args, int nargs,
		   struct wq__cursor **out)
{
	struct params p;
	struct wq__cursor *cur;
	char name[24];
	PGresult *res;
	/* see the top of this file: outside a transaction, or in one not sent yet */
	int rc, sent, retry = !c->in_tx || c->begin_pending, piped;

	*out = NULL;
	if (id < 0 || id >= WQ__SQL_COUNT)
		return set_err(c, WQ__SQL_ERROR, "no such statement");
	rc = params_set(c, &p, args, nargs);
	if (rc)
		return rc;
	cur = calloc(1, sizeof(*cur));
	if (!cur)
		return set_err(c, WQ__SQL_NOMEM, "out of memory (a statement)");
	snprintf(name, sizeof(name), "wq_%d", id);
	for (;;) {
		rc = call_ready(c);
		if (!rc && c->queued && c->prepared[id] && nargs >= c->nparams[id]) {
			/* wave7 pg: it rides with the queued statements (one round trip);
			 * their failure is its (the transaction was aborted there) */
			struct last_stmt ps = {name, c->nparams[id], &p};

			rc = settle(c, NULL, &ps, &res);
			if (!rc && !(rc = cursor_init(c, cur, res))) {
				*out = cur;
				return WQ__SQL_OK;
			}
			break; /* cursor_init took res: pg_done frees it */
		}
		if (!rc && c->queued) /* the answers of the queued statements first */
			rc = settle(c, NULL, NULL, NULL);
		if (rc)
			break;
		c->reconnected = 0;
		sent = 0;
		piped = c->begin_pending && c->prepared[id];
		rc = piped ? WQ__SQL_OK : begin_now(c);
		if (rc == WQ__SQL_OK && !c->prepared[id])
			rc = prepare(c, id, name);
		if (rc == WQ__SQL_OK) {
			sent = 1;
			if (nargs < c->nparams[id]) {
				rc = set_err(c, WQ__SQL_ERROR, "too few arguments");
				break;
			}
			if (piped) {
				rc = begin_pipelined(c, name, c->nparams[id], &p, &res);
			} else {
				res = PQexecPrepared(c->pg, name, c->nparams[id], p.val, p.len,
						     p.fmt, 0);
				rc = result_ok(res) ? WQ__SQL_OK : pg_fail(c, res);
			}
			if (!rc) {
				rc = cursor_init(c, cur, res); /* takes res over */
				if (rc)
					break;
				*out = cur;
				return WQ__SQL_OK;
			}
			PQclear(res);
		}
		/* An autocommitted write sent without an answer: it may have committed. */
		if (rc == WQ__SQL_LOST && !c->in_tx && sent && !is_read(c, id)) {
			rc = WQ__SQL_COMMIT_UNKNOWN;
			break;
		}
		if (rc != WQ__SQL_LOST || !retry || !c->reconnected)
			break;
		retry = 0;
		/* a transaction's first statement (retry says so): BEGIN goes again with
		 * it; nothing of the transaction survived the old connection */
		c->begin_pending = c->in_tx;
	}
	pg_done(cur);
	return rc;
}

/* Sends statement `id` of the open transaction into the pipeline without reading its
 * answer (see the top of this file); one not prepared yet, or outside a transaction,
 * runs at once instead. */
static int pg_exec_queued(struct wq__conn *c, int id, const struct wq__arg *args, int nargs)
{
	struct wq__cursor *cur = NULL;
	struct params p;
	char name[24];
	int rc;

	if (id < 0 || id >= WQ__SQL_COUNT || !c->in_tx || !c->prepared[id] ||
	    (!c->queued && c->begin_pending)) {
		rc = pg_exec(c, id, args, nargs, &cur); /* BEGIN rides with it that way */
		pg_done(cur);
		return rc;
	}
	rc = params_set(c, &p, args, nargs);
	if (!rc)
		rc = call_ready(c);
	if (!rc && nargs < c->nparams[id])
		rc = set_err(c, WQ__SQL_ERROR, "too few arguments");
	if (rc)
		return rc;
	if (!c->queued && !PQenterPipelineMode(c->pg))
		return pipeline_end(c, 1); /* libpq busy mid-transaction: not usable */
	snprintf(name, sizeof(name), "wq_%d", id);
	if (PQsendQueryPrepared(c->pg, name, c->nparams[id], p.val, p.len, p.fmt, 0)) {
		c->queued++;
		return WQ__SQL_OK;
	}
	/* Not sent (no memory, or the connection broke): complete messages of it may be in
	 * libpq's buffer, so no sync follows them; the session goes, the transaction too. */
	return pipeline_end(c, 1);
}

/* The next row; its bytea columns are decoded here, where a failure can be reported. */
static int pg_step(struct wq__cursor *cur)
{
	const unsigned char *v;
	int i;

	cursor_row_free(cur);
	if (cur->row + 1 >= PQntuples(cur->res))
		return 0;
	cur->row++;
	for (i = 0; cur->bytes && i < cur->nfields; i++) {
		if (PQftype(cur->res, i) != BYTEAOID || PQgetisnull(cur->res, cur->row, i))
			continue;
		v = (const unsigned char *)PQgetvalue(cur->res, cur->row, i);
		cur->bytes[i].p = PQunescapeBytea(v, &cur->bytes[i].n);
		if (!cur->bytes[i].p)
			return -WQ__SQL_NOMEM;
	}
	return 1;
}

static int pg_is_null(struct wq__cursor *cur, int col)
{
	return PQgetisnull(cur->res, cur->row, col);
}

static int64_t pg_col_i64(struct wq__cursor *cur, int col)
{
	if (PQgetisnull(cur->res, cur->row, col))
		return 0;
	return strtoll(PQgetvalue(cur->res, cur->row, col), NULL, 10);
}

/* libpq gives "" for NULL; a bytea column's bytes are step()'s decoding. */
static const char *pg_col_text(struct wq__cursor *cur, int col, size_t *len)
{
	const char *v = PQgetvalue(cur->res, cur->row, col);
	size_t n = (size_t)PQgetlength(cur->res, cur->row, col);

	if (PQftype(cur->res, col) == BYTEAOID) {
		v = cur->bytes && cur->bytes[col].p ? (const char *)cur->bytes[col].p : "";
		n = cur->bytes && cur->bytes[col].p ? cur->bytes[col].n : 0;
	}
	if (len)
		*len = v ? n : 0;
	return v ? v : "";
}

static int64_t pg_changes(struct wq__cursor *cur)
{
	return strtoll(PQcmdTuples(cur->res), NULL, 10);
}

static int pg_script(struct wq__conn *c, const char *sql)
{
	int rc = call_ready(c);

	if (!rc && c->queued)
		rc = settle(c, NULL, NULL, NULL);
	if (!rc)
		rc = begin_now(c);
	return rc ? rc : simple(c, sql);
}

/* The socket changes with every reconnect, which any call may do, and often keeps its
 * number: so wakeup_drain answers -1 whenever the connection is not the one whose socket
 * wakeup_fd handed out, and the caller re-arms its watch. */
static int pg_wakeup_fd(struct wq__conn *c)
{
	c->fd_given = 0;
	if (conn_ready(c) != WQ__SQL_OK)
		return -1;
	c->listen_wanted = 1;
	if (!c->listening)
		listen_now(c);
	if (!c->listening) {
		if (PQstatus(c->pg) == CONNECTION_BAD)
			conn_lost(c);
		return -1;
	}
	c->fd_given = 1;
	c->fd_gen = c->gen;
	return PQsocket(c->pg);
}

static int pg_wakeup_drain(struct wq__conn *c)
{
	PGnotify *note;
	int got = 0;

	if (c->queued) /* mid-transaction: its answers are read by its next call */
		return 0;
	if (!conn_ok(c) || !c->fd_given || c->fd_gen != c->gen || !c->listening)
		return -1;
	probe(c); /* also sees the end of stream right after a FATAL */
	if (!conn_ok(c)) {
		c->listening = 0;
		return -1;
	}
	while ((note = PQnotifies(c->pg)) != NULL) {
		got = 1;
		PQfreemem(note);
	}
	return got;
}

const struct wq__sql_driver wq__postgres_driver = {
	.name = "postgres",
	.caps = WQ__SQL_CAP_SKIP_LOCKED | WQ__SQL_CAP_NOTIFY | WQ__SQL_CAP_COMMIT_LOST |
		WQ__SQL_CAP_AUTOCOMMIT,
	.dialect = &wq__postgres_dialect,
	.open = pg_open, .close = pg_close, .label = pg_label, .errmsg = pg_errmsg,
	.begin = pg_begin, .commit = pg_commit, .rollback = pg_rollback,
	.exec = pg_exec, .step = pg_step, .is_null = pg_is_null, .col_i64 = pg_col_i64,
	.col_text = pg_col_text, .changes = pg_changes, .done = pg_done, .script = pg_script,
	.wakeup_fd = pg_wakeup_fd, .wakeup_drain = pg_wakeup_drain,
	.exec_queued = pg_exec_queued,
};
