/* store_pg_plan_cases.h — wave7 pg: plans of the multi-row statements on PostgreSQL that
 * statistics could turn into sequential scans; included by test_store.c. SQLite has no
 * plan hint (its texts are NULL) and returns at once. */

#ifdef WQ_HAVE_POSTGRES
/* The plan of text on the store's database, under the plan hint (SQL_PLAN_BY_INDEX) as
 * op_rows.c sends it, made generic as a prepared statement's is after its fifth run,
 * with $1 = arg; malloc'd. */
static char *pg_generic_plan(const char *hint, const char *text, const char *arg)
{
	PGconn *pg = PQconnectdb(url);
	char sql[512], *lit;
	PGresult *r;
	size_t n = 0;
	char *plan = calloc(1, 1);

	assert_int_equal(PQstatus(pg), CONNECTION_OK);
	PQclear(PQexec(pg, "BEGIN"));
	PQclear(PQexec(pg, hint));
	PQclear(PQexec(pg, "SET LOCAL plan_cache_mode = force_generic_plan"));
	r = PQprepare(pg, "wq_t", text, 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fail_msg("prepare: %s", PQerrorMessage(pg));
	PQclear(r);
	lit = PQescapeLiteral(pg, arg, strlen(arg));
	assert_non_null(lit);
	snprintf(sql, sizeof(sql), "EXPLAIN EXECUTE wq_t(%s)", lit);
	PQfreemem(lit);
	r = PQexec(pg, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("explain: %s", PQerrorMessage(pg));
	for (int i = 0; i < PQntuples(r); i++) {
		const char *line = PQgetvalue(r, i, 0);

		plan = realloc(plan, n + strlen(line) + 2);
		assert_non_null(plan);
		n += (size_t)sprintf(plan + n, "%s\n", line);
	}
	PQclear(r);
	PQclear(PQexec(pg, "ROLLBACK"));
	PQfinish(pg);
	return plan;
}
#endif

/* The finishes of a batch's attempts (SQL_ATTEMPTS_FINISH_MANY) find their rows through
 * attempts_pkey on a store of 2,000 attempts analyzed as such: without the hint the
 * generic plan is a hash join over a sequential scan of every attempt (and stays so
 * while the table grows, until an ANALYZE). */
static void attempts_finish_planned_by_index(void **state)
{
#ifdef WQ_HAVE_POSTGRES
	struct fx *f = *state;
	const char *hint = wq__sql_text(f->s->d, SQL_PLAN_BY_INDEX);
	struct wq__claimed c;
	char arg[128], *plan;
	int64_t id;
	wq_error e;

	if (!hint)
		return; /* SQLite: no hint, nothing to plan by hand */
	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	{
		PGconn *pg = PQconnectdb(url);
		PGresult *r;

		assert_int_equal(PQstatus(pg), CONNECTION_OK);
		r = PQexec(pg, "INSERT INTO attempts (task_id, attempt, instance, started_at) "
			       "SELECT a.task_id, a.attempt + g, a.instance, a.started_at FROM "
			       "attempts a CROSS JOIN generate_series(1, 1999) AS g");
		assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
		PQclear(r);
		PQclear(PQexec(pg, "ANALYZE attempts"));
		PQfinish(pg);
	}
	snprintf(arg, sizeof(arg), "[[%" PRId64 ",1,%" PRId64 ",\"succeeded\",\"\",0]]", id,
		 f->now);
	plan = pg_generic_plan(hint, wq__sql_text(f->s->d, SQL_ATTEMPTS_FINISH_MANY), arg);
	if (strstr(plan, "Seq Scan on attempts") || !strstr(plan, "attempts_pkey"))
		fail_msg("the attempts' finish is not planned by index:\n%s", plan);
	free(plan);
#else
	(void)state;
#endif
}

/* wave7 pg: the multi-row finish (SQL_FINISH_SUCCEEDED_MANY) is sent without waiting for
 * its answer, so it checks itself: it fails unless it changed exactly $2 rows. A row
 * whose fence does not hold (another attempt) fails it; the right row answers 1. */
static void finish_many_checks_its_row_count(void **state)
{
#ifdef WQ_HAVE_POSTGRES
	struct fx *f = *state;
	const char *text = wq__sql_text(f->s->d, SQL_FINISH_SUCCEEDED_MANY);
	struct wq__claimed c;
	char rows[256];
	const char *vals[2] = {rows, "1"};
	PGconn *pg;
	PGresult *r;
	int64_t id;
	wq_error e;

	if (!text)
		return; /* SQLite: per-row statements, each answer read */
	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	pg = PQconnectdb(url);
	assert_int_equal(PQstatus(pg), CONNECTION_OK);
	/* attempt 2: not the one running, fenced off */
	snprintf(rows, sizeof(rows), "[[%" PRId64 ",2,\"w1\",%" PRId64 ",\"\",\"\",0,\"\",0,0]]",
		 id, f->now);
	r = PQexecParams(pg, text, 2, NULL, vals, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	assert_non_null(strstr(PQresultErrorMessage(r), "changed 0 of 1 rows"));
	PQclear(r);
	snprintf(rows, sizeof(rows), "[[%" PRId64 ",1,\"w1\",%" PRId64 ",\"\",\"\",0,\"\",0,0]]",
		 id, f->now);
	r = PQexecParams(pg, text, 2, NULL, vals, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(r, 0, 0), "1");
	PQclear(r);
	PQfinish(pg);
#else
	(void)state;
#endif
}
