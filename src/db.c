/* db.c — opening a store: the URL picks the backend. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const struct wq__store_methods *backend_for(const char *url)
{
	if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
#ifdef WQ_HAVE_POSTGRES
		return &wq__postgres_methods;
#else
		return NULL;
#endif
	}
	return &wq__sqlite_methods;
}

wq_rc wq_db_open(const char *url, unsigned flags, wq_db **out, wq_error *err)
{
	const struct wq__store_methods *m;
	struct wq__store *s = NULL;
	wq_db *db;
	wq_rc rc;

	if (!url || !*url)
		return wq__err(err, WQ_EINVAL, "no database given (use --db or $WAKEQ_DB)");
	m = backend_for(url);
	if (!m)
		return wq__err(err, WQ_EINVAL,
			       "this wakeq was built without PostgreSQL support (libpq)");
	db = calloc(1, sizeof *db);
	if (!db || !(db->url = strdup(url))) {
		free(db);
		return wq__err(err, WQ_ENOMEM, "out of memory opening %s", m->name);
	}
	rc = m->open(url, flags, &s, err);
	if (rc != WQ_OK) {
		free(db->url);
		free(db);
		return rc;
	}
	db->m = m;
	db->s = s;
	wq__enq_group_init(&db->enq);
	*out = db;
	return WQ_OK;
}

void wq_db_close(wq_db *db)
{
	if (!db)
		return;
	db->m->close(db->s);
	wq__enq_group_destroy(&db->enq);
	free(db->url);
	free(db);
}

const char *wq_db_backend(const wq_db *db)
{
	return db ? db->m->name : NULL;
}

int wq_schema_version(void)
{
	return WQ_SCHEMA_VERSION;
}

const char *wq_version(void)
{
	return WQ_VERSION_STRING;
}
