/* fresh_store.c — see fresh_store.h. */
#include "fresh_store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef WQ_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

static const char *prog = "test";
static const char *backend = "sqlite";
static char tmpdir[64];
static char url[512];
#ifdef WQ_HAVE_POSTGRES
static char pg_maint[512], pg_db[64];

/* One statement on the maintenance connection; 0, or -1 (said on stderr). */
static int pg_command(const char *sql)
{
	PGconn *c = PQconnectdb(pg_maint);
	PGresult *r;
	int ok;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "%s: %s", prog, PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "%s: %s: %s", prog, sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}
#endif

int fresh_store_begin(const char *name, int argc, char **argv)
{
	prog = name;
	backend = argc > 1 ? argv[1] : "sqlite";
	if (strcmp(backend, "sqlite") != 0) {
#ifdef WQ_HAVE_POSTGRES
		const char *pg = getenv("WAKEQ_TEST_PG_URL");

		if (!pg || !*pg) {
			fprintf(stderr, "%s: no $WAKEQ_TEST_PG_URL: skipped\n", prog);
			return 77;
		}
		snprintf(pg_maint, sizeof(pg_maint), "%s", pg);
#else
		fprintf(stderr, "%s: built without PostgreSQL: skipped\n", prog);
		return 77;
#endif
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wq-%s-XXXXXX", prog);
	return mkdtemp(tmpdir) ? 0 : 1;
}

const char *fresh_store_backend(void)
{
	return backend;
}

const char *fresh_store_new(void)
{
	static int n;

	n++;
	if (strcmp(backend, "sqlite") == 0) {
		snprintf(url, sizeof(url), "%s/t%d.db", tmpdir, n);
	} else {
#ifdef WQ_HAVE_POSTGRES
		char sql[128];
		const char *slash = strrchr(pg_maint, '/');

		snprintf(pg_db, sizeof(pg_db), "wq_%s_%ld_%d", prog, (long)getpid(), n);
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", pg_db);
		assert_int_equal(pg_command(sql), 0);
		snprintf(url, sizeof(url), "%.*s/%s", (int)(slash - pg_maint), pg_maint, pg_db);
#endif
	}
	return url;
}

void fresh_store_drop(void)
{
#ifdef WQ_HAVE_POSTGRES
	if (strcmp(backend, "postgres") == 0) {
		char sql[128];

		snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", pg_db);
		pg_command(sql);
	}
#endif
}

void fresh_store_end(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s: could not remove %s\n", prog, tmpdir);
}
