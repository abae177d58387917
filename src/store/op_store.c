/*
 * op_store.c — opening a store: connect through a driver, read the schema version,
 * refuse what this wakeq cannot use, migrate step by step; and the method tables that
 * the core (db.c) picks by URL. One table per driver, the same operations in each.
 */
#include "op.h"
#ifdef WQ_HAVE_POSTGRES
#include "lazy_pq.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Concurrent `wakeq init` runs race on creating schema_version; the loser retries. */
#define MIGRATE_TRIES 10

/* The schema version (0: none), and whether the database holds tables of its own. */
static wq_rc schema_read(struct wq__store *s, int *version, int *foreign, wq_error *err)
{
	int64_t counts[2] = {0, 0}, v = 0; /* has schema_version, other tables */
	static const struct wq__col cols[] = {{'i', 0, 8}, {'i', 8, 8}};
	wq_rc rc;

	rc = wq__select1(s, SQL_HAS_SCHEMA, WQ__NOARGS, WQ__COLS(cols), counts, NULL,
			 "read schema", err);
	if (!rc && counts[0])
		rc = wq__rows(s, SQL_SCHEMA_VERSION, WQ__NOARGS, wq__read_i64, &v, NULL,
			      "read schema version", err);
	if (rc)
		return rc;
	*version = (int)v;
	*foreign = v == 0 && counts[1] > 0;
	return WQ_OK;
}

static wq_rc schema_refuse(struct wq__store *s, int version, int foreign, unsigned flags,
			   wq_error *err)
{
	const char *db = s->drv->label(s->c);

	if (version > WQ_SCHEMA_VERSION)
		return wq__err(err, WQ_ESCHEMA,
			       "database schema version %d is newer than this wakeq (supports %d); "
			       "upgrade wakeq",
			       version, WQ_SCHEMA_VERSION);
	if (version == 0 && foreign)
		return wq__err(err, WQ_ESCHEMA,
			       "database %s is not a wakeq database (it has tables but no "
			       "schema_version)",
			       db);
	if (!(flags & WQ_OPEN_MIGRATE) && version == 0)
		return wq__err(err, WQ_ESCHEMA, "database %s is not initialised (run 'wakeq init')",
			       db);
	if (!(flags & WQ_OPEN_MIGRATE) && version < WQ_SCHEMA_VERSION)
		return wq__err(err, WQ_ESCHEMA,
			       "database schema version %d is older than this wakeq (supports %d); "
			       "run 'wakeq init' to migrate it",
			       version, WQ_SCHEMA_VERSION);
	return WQ_OK;
}

/* A step runs with foreign keys unenforced (see migrate()): it commits only if no row's
 * reference dangles afterwards, which is what enforcement would have guaranteed. */
static wq_rc dangling_refuse(struct wq__store *s, int version, wq_error *err)
{
	int64_t n = 0;
	wq_rc rc;

	rc = wq__rows(s, SQL_MIGRATE_FK_DANGLING, WQ__NOARGS, wq__read_i64, &n, NULL,
		      "check references after migrating", err);
	if (!rc && n > 0)
		rc = wq__err(err, WQ_ESTORE,
			     "database %s: migration to schema version %d would leave %lld "
			     "references dangling; nothing was changed",
			     s->drv->label(s->c), version, (long long)n);
	return rc;
}

/* One migration step in its own write transaction, together with the schema_version row
 * that records it: applied fully or not at all, by one process (the dialect's lock
 * statement, or SQLite's write lock, orders concurrent migrations; each re-reads the
 * version under it). *raced: a concurrent migration got in the way before the lock. */
static wq_rc migrate_step(struct wq__store *s, const struct wq__migration *m, int *raced,
			  wq_error *err)
{
	int version, foreign, e;
	wq_rc rc;

	*raced = 0;
	if ((rc = wq__begin(s, 1, err)))
		return rc;
	s->retry_safe = 1;
	e = s->drv->script(s->c, wq__sql_text(s->d, SQL_MIGRATE_LOCK));
	if (e) {
		*raced = e != WQ__SQL_LOST && e != WQ__SQL_COMMIT_UNKNOWN;
		rc = wq__sql_fail(s, e, "lock schema_version", err);
		goto out;
	}
	rc = schema_read(s, &version, &foreign, err);
	if (!rc)
		rc = schema_refuse(s, version, foreign, WQ_OPEN_MIGRATE, err);
	if (rc || m->version <= version)
		goto out;
	e = s->drv->script(s->c, m->sql);
	if (e == WQ__SQL_BUSY || e == WQ__SQL_LOST)
		rc = wq__sql_fail(s, e, "migrate", err);
	else if (e)
		rc = wq__err(err, WQ_ESTORE, "database %s: migration to schema version %d failed: %s",
			     s->drv->label(s->c), m->version, s->drv->errmsg(s->c));
	if (!rc)
		rc = dangling_refuse(s, m->version, err);
	if (!rc)
		rc = wq__run(s, SQL_SET_VERSION, WQ__ARGS(WQ__AI(m->version)), NULL,
			     "record schema version", err);
out:
	rc = wq__end(s, rc, err);
	if (s->commit_lost) /* the step re-reads the version: one that landed is skipped */
		*raced = 1;
	return rc;
}

static wq_rc migrate(struct wq__store *s, int version, wq_error *err)
{
	const struct wq__migration *m = s->d->migrations;
	size_t i, n = *s->d->nmigrations;
	int raced, tries;
	wq_rc rc;

	if (n == 0 || m[n - 1].version != WQ_SCHEMA_VERSION)
		return wq__err(err, WQ_ESTORE, "%s: no migration to schema version %d (a build "
					       "error)", s->drv->name, WQ_SCHEMA_VERSION);
	/* Foreign keys go unenforced while the steps run, and come back before the store
	 * is used, whether the steps succeeded or not. A step that rebuilds a table (SQLite
	 * cannot alter a CHECK in place) drops the old one, and an enforced ON DELETE
	 * CASCADE would empty its children with it; SQLite switches enforcement only
	 * outside a transaction, so here, around the steps. Each step checks instead
	 * (dangling_refuse). */
	if (s->drv->script(s->c, wq__sql_text(s->d, SQL_MIGRATE_FK_OFF)))
		return wq__err(err, WQ_ESTORE, "database %s: cannot prepare migrating: %s",
			       s->drv->label(s->c), s->drv->errmsg(s->c));
	rc = WQ_OK;
	for (i = 0; i < n && !rc; i++) {
		if (m[i].version <= version)
			continue;
		for (tries = 0;; tries++) {
			rc = migrate_step(s, &m[i], &raced, err);
			if (!rc || !raced || tries + 1 >= MIGRATE_TRIES)
				break;
		}
	}
	if (s->drv->script(s->c, wq__sql_text(s->d, SQL_MIGRATE_FK_ON)) && !rc)
		rc = wq__err(err, WQ_ESTORE, "database %s: cannot enforce foreign keys again "
					     "after migrating: %s",
			     s->drv->label(s->c), s->drv->errmsg(s->c));
	return rc;
}

static void store_close(struct wq__store *s)
{
	if (!s)
		return;
	if (s->c)
		s->drv->close(s->c);
	wq__wakefile_free(s->wake);
	wq__rows_free(s); /* wave4 batch */
	wq__events_drop(s); /* wave7 drain */
	free(s);
}

/* The code of a driver's open() failure (its message says the rest). */
static const wq_rc open_rc[] = {
	[WQ__SQL_BUSY] = WQ_EBUSY,    [WQ__SQL_LOST] = WQ_EBUSY,   [WQ__SQL_NOMEM] = WQ_ENOMEM,
	[WQ__SQL_IO] = WQ_EIO,        [WQ__SQL_TOOBIG] = WQ_ETOOBIG, [WQ__SQL_CORRUPT] = WQ_ESTORE,
	[WQ__SQL_ERROR] = WQ_EINVAL, /* a URL or setting the driver cannot use */
};

static wq_rc store_open(const struct wq__sql_driver *drv, const char *url, unsigned flags,
			struct wq__store **out, wq_error *err)
{
	struct wq__store *s;
	char msg[512] = "";
	int version = 0, foreign = 0, e;
	wq_rc rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return wq__err(err, WQ_ENOMEM, "out of memory (opening %s)", drv->name);
	s->drv = drv;
	s->d = drv->dialect;
	e = drv->open(url, &s->c, msg, sizeof(msg));
	if (e || !s->c) {
		rc = wq__err(err, e > 0 && e <= WQ__SQL_ERROR && open_rc[e] ? open_rc[e] : WQ_ESTORE,
			     "%s", msg[0] ? msg : "cannot open the database");
		goto fail;
	}
	rc = schema_read(s, &version, &foreign, err);
	if (!rc)
		rc = schema_refuse(s, version, foreign, flags, err);
	if (!rc && version < WQ_SCHEMA_VERSION)
		rc = migrate(s, version, err);
	if (rc)
		goto fail;
	*out = s;
	return WQ_OK;
fail:
	store_close(s);
	return rc;
}

static wq_rc open_sqlite(const char *url, unsigned flags, struct wq__store **out,
			 wq_error *err)
{
	const char *path;
	struct stat sb;
	wq_rc rc;

	if (!url)
		return wq__err(err, WQ_EINVAL, "no database path given");
	path = wq__sqlite_path(url);
	if (!*path)
		return wq__err(err, WQ_EINVAL, "empty database path in '%s'", url);
	/* Without MIGRATE nothing is created: a missing file is a store never initialised. */
	if (!(flags & WQ_OPEN_MIGRATE) && strcmp(path, ":memory:") != 0 && stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return wq__err(err, WQ_ESCHEMA,
				       "database %s is not initialised (run 'wakeq init')", path);
		return wq__err(err, WQ_EIO, "database %s: %s", path, strerror(errno));
	}
	rc = store_open(&wq__sqlite_driver, url, flags, out, err);
	/* No wake-up file is no error: workers then find new work at their poll. */
	if (rc == WQ_OK && strcmp(path, ":memory:") != 0)
		(*out)->wake = wq__wakefile_new(path);
	return rc;
}

static int store_wakeup_fd(struct wq__store *s)
{
	return s->drv->wakeup_fd ? s->drv->wakeup_fd(s->c) : -1;
}

static int store_wakeup_drain(struct wq__store *s)
{
	return s->drv->wakeup_drain ? s->drv->wakeup_drain(s->c) : 0;
}

#define WQ__OP_METHOD(name) .name = wq__op_##name,
#define WQ__METHODS(NAME, WRITERS, OPEN, WAKE_FD, WAKE_DRAIN)                               \
	{                                                                                  \
		.version = 1, .name = NAME, .writers = WRITERS, .open = OPEN,              \
		.close = store_close,                                                      \
		.wakeup_fd = WAKE_FD, .wakeup_drain = WAKE_DRAIN, WQ__OPS(WQ__OP_METHOD)   \
	}

/* SQLite: the wake-up file (op_wake.c). */
const struct wq__store_methods wq__sqlite_methods =
	WQ__METHODS("sqlite", 1, open_sqlite, wq__wakefile_fd, wq__wakefile_drain);

#ifdef WQ_HAVE_POSTGRES
static wq_rc open_postgres(const char *url, unsigned flags, struct wq__store **out,
			   wq_error *err)
{
	char msg[512];

	if (!url || !*url)
		return wq__err(err, WQ_EINVAL, "no database URL given");
	if (wq__lazy_pq_load(msg, sizeof msg)) /* libpq is loaded on first use (issue 11) */
		return wq__err(err, WQ_ESTORE, "%s", msg);
	return store_open(&wq__postgres_driver, url, flags, out, err);
}

const struct wq__store_methods wq__postgres_methods =
	WQ__METHODS("postgres", 2, open_postgres, store_wakeup_fd, store_wakeup_drain);
#endif
