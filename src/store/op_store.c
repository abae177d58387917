/*
 * op_store.c — opening a store: connect through a driver, read the schema version,
 * refuse what this wakeq cannot use, migrate step by step; and the method tables that
 * the core (db.c) picks by URL. One table per driver, the same operations in each.
 */
#include "op.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Concurrent `wakeq init` runs race on creating schema_version; the loser retries. */
#define MIGRATE_TRIES 10

struct schema_seen {
	int64_t has, others, version;
};

static wq_rc read_counts(const struct wq__row *r, void *ctx)
{
	struct schema_seen *sv = ctx;

	sv->has = wq__i64(r, 0);
	sv->others = wq__i64(r, 1);
	return WQ_OK;
}

static wq_rc read_version(const struct wq__row *r, void *ctx)
{
	((struct schema_seen *)ctx)->version = wq__i64(r, 0);
	return WQ_OK;
}

/* The schema version (0: none), and whether the database holds tables of its own. */
static wq_rc schema_read(struct wq__store *s, int *version, int *foreign, wq_error *err)
{
	struct schema_seen sv = {0, 0, 0};
	wq_rc rc;

	rc = wq__rows(s, SQL_HAS_SCHEMA, WQ__NOARGS, read_counts, &sv, NULL, "read schema", err);
	if (!rc && sv.has)
		rc = wq__rows(s, SQL_SCHEMA_VERSION, WQ__NOARGS, read_version, &sv, NULL,
			      "read schema version", err);
	if (rc)
		return rc;
	*version = (int)sv.version;
	*foreign = sv.version == 0 && sv.others > 0;
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
	rc = wq__begin(s, 1, err);
	s->retry_safe = 1;
	if (rc)
		return rc;
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

	for (i = 0; i < n; i++) {
		if (m[i].version <= version)
			continue;
		for (tries = 0;; tries++) {
			rc = migrate_step(s, &m[i], &raced, err);
			if (!rc || !raced || tries + 1 >= MIGRATE_TRIES)
				break;
		}
		if (rc)
			return rc;
	}
	return WQ_OK;
}

static void store_close(struct wq__store *s)
{
	if (!s)
		return;
	if (s->c)
		s->drv->close(s->c);
	free(s);
}

static wq_rc open_fail_rc(int e)
{
	switch (e) {
	case WQ__SQL_BUSY:
	case WQ__SQL_LOST:
		return WQ_EBUSY;
	case WQ__SQL_NOMEM:
		return WQ_ENOMEM;
	case WQ__SQL_IO:
		return WQ_EIO;
	case WQ__SQL_TOOBIG:
		return WQ_ETOOBIG;
	case WQ__SQL_CORRUPT:
		return WQ_ESTORE;
	default: /* a URL or setting the driver cannot use */
		return WQ_EINVAL;
	}
}

static wq_rc store_open(const struct wq__sql_driver *drv, const char *url, unsigned flags,
			struct wq__store **out, wq_error *err)
{
	struct wq__store *s;
	char msg[512] = "";
	int version = 0, foreign = 0, e;
	wq_rc rc;

	_Static_assert(WQ_SCHEMA_VERSION >= 4, "schema v4: instances.host_id, id floors");
	s = calloc(1, sizeof(*s));
	if (!s)
		return wq__err(err, WQ_ENOMEM, "out of memory (opening %s)", drv->name);
	s->drv = drv;
	s->d = drv->dialect;
	e = drv->open(url, &s->c, msg, sizeof(msg));
	if (e || !s->c) {
		rc = wq__err(err, open_fail_rc(e), "%s", msg[0] ? msg : "cannot open the database");
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
	return store_open(&wq__sqlite_driver, url, flags, out, err);
}

static int store_wakeup_fd(struct wq__store *s)
{
	return s->drv->wakeup_fd ? s->drv->wakeup_fd(s->c) : -1;
}

static int store_wakeup_drain(struct wq__store *s)
{
	return s->drv->wakeup_drain ? s->drv->wakeup_drain(s->c) : 0;
}

#define WQ__METHODS(NAME, OPEN, WAKE_FD, WAKE_DRAIN)                                        \
	{                                                                                  \
		.version = 1, .name = NAME, .open = OPEN, .close = store_close,            \
		.enqueue = wq__op_enqueue, .get = wq__op_get, .list = wq__op_list,         \
		.result = wq__op_result, .events = wq__op_events, .claim = wq__op_claim,   \
		.finish = wq__op_finish, .cancel = wq__op_cancel,                          \
		.resolve = wq__op_resolve, .event = wq__op_event,                          \
		.cancel_requests = wq__op_cancel_requests,                                 \
		.interrupted_of_kind = wq__op_interrupted_of_kind,                         \
		.next_due = wq__op_next_due,                                               \
		.instance_register = wq__op_instance_register,                             \
		.instance_heartbeat = wq__op_instance_heartbeat,                           \
		.instance_unregister = wq__op_instance_unregister,                         \
		.instance_list = wq__op_instance_list,                                     \
		.instance_reap = wq__op_instance_reap,                                     \
		.reap_orphans = wq__op_reap_orphans, .wakeup_fd = WAKE_FD,                 \
		.wakeup_drain = WAKE_DRAIN, .operation_find = wq__op_operation_find,       \
		.attempts = wq__op_attempts, .effect_begin = wq__op_effect_begin,          \
		.effect_done = wq__op_effect_done, .prune = wq__op_prune,                  \
		.doctor = wq__op_doctor, .delivery_claim = wq__op_delivery_claim,          \
		.delivery_finish = wq__op_delivery_finish,                                 \
		.delivery_recover = wq__op_delivery_recover,                               \
		.delivery_next = wq__op_delivery_next,                                     \
		.delivery_list = wq__op_delivery_list,                                     \
		.delivery_retry = wq__op_delivery_retry, .inbox_list = wq__op_inbox_list,  \
		.inbox_read = wq__op_inbox_read,                                           \
	}

/* SQLite has no wake-ups: workers poll. */
const struct wq__store_methods wq__sqlite_methods =
	WQ__METHODS("sqlite", open_sqlite, NULL, NULL);

#ifdef WQ_HAVE_POSTGRES
static wq_rc open_postgres(const char *url, unsigned flags, struct wq__store **out,
			   wq_error *err)
{
	if (!url || !*url)
		return wq__err(err, WQ_EINVAL, "no database URL given");
	return store_open(&wq__postgres_driver, url, flags, out, err);
}

const struct wq__store_methods wq__postgres_methods =
	WQ__METHODS("postgres", open_postgres, store_wakeup_fd, store_wakeup_drain);
#endif
