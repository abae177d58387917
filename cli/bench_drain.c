/* bench_drain.c — W2 (in-process no-op handler), W2c (command handler, /bin/true) and W5
 * (claim + finish cost per task with 10k / 100k / 1M finished rows in the store).
 *
 * The tasks are put in place first with wq_enqueue_many (untimed); the figure is the
 * worker's run until idle: claim, start, record, from the start of wq_worker_run until it
 * returns with nothing left. Every drained task must end succeeded (checked). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

int bench_fill(wq_db *db, const struct bench_opts *o, const char *kind, long long n)
{
	int b = o->batch > 0 ? o->batch : 1000;
	wq_enqueue_opts *items = calloc((size_t)b, sizeof *items);
	wq_enqueued *out = calloc((size_t)b, sizeof *out);
	wq_error err = {0, ""};
	int ex = 0;

	if (!items || !out) {
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: out of memory");
		goto out;
	}
	for (int i = 0; i < b; i++)
		items[i] = (wq_enqueue_opts){.kind = kind, .payload = "{\"n\":0}"};
	for (long long done = 0; done < n;) {
		size_t k = (size_t)(n - done < b ? n - done : b);
		wq_rc rc = wq_enqueue_many(db, items, k, out, NULL, &err);

		if (rc != WQ_OK) {
			ex = cli_fail_ctx(rc, &err, "bench: enqueue batch");
			break;
		}
		done += (long long)k;
		bench_progress(o, "fill", done, n);
	}
out:
	free(items);
	free(out);
	return ex;
}

static wq_job_result noop(wq_job *job, void *ud)
{
	(void)job;
	(void)ud;
	return WQ_JOB_SUCCEEDED;
}

/* Tasks of kind in state st (wq_stats: one read). */
static long long count_of(wq_db *db, const char *kind, const char *st, int *ex)
{
	wq_stats s;
	wq_error err = {0, ""};
	long long n = 0;
	wq_rc rc = wq_stats_get(db, &s, &err);

	if (rc != WQ_OK) {
		*ex = cli_fail_ctx(rc, &err, "bench: stats");
		return -1;
	}
	for (size_t i = 0; i < s.ntasks; i++)
		if (strcmp(s.tasks[i].kind, kind) == 0 && strcmp(s.tasks[i].state, st) == 0)
			n += s.tasks[i].count;
	wq_stats_free(&s);
	return n;
}

int bench_drain(wq_db *db, const struct bench_opts *o, const char *kind, const char *handler,
		double *seconds)
{
	char text[1024];
	wq_config *cfg = NULL;
	wq_worker *w = NULL;
	wq_error err = {0, ""};
	wq_worker_opts wo = {.until_idle = 1, .db_url = o->url, .log = bench_quiet_log};
	long long left;
	double t0;
	int ex = 0;
	wq_rc rc;

	bench_worker_config(o, o->concurrency, handler, text, sizeof text);
	if ((rc = wq_config_parse(text, "bench", &cfg, &err)) != WQ_OK)
		return cli_fail_usage(rc, &err, "bench: worker configuration");
	if ((rc = wq_worker_new(db, cfg, &wo, &w, &err)) != WQ_OK ||
	    (!handler && (rc = wq_worker_register(w, kind, noop, NULL, &err)) != WQ_OK)) {
		ex = cli_fail_ctx(rc, &err, "bench: worker");
		goto out;
	}
	t0 = bench_clock();
	rc = wq_worker_run(w, &err);
	*seconds = bench_clock() - t0;
	if (rc != WQ_OK) {
		ex = cli_fail_ctx(rc, &err, "bench: worker");
		goto out;
	}
	left = count_of(db, kind, "pending", &ex);
	if (!ex && left != 0)
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: %lld tasks of %s are still pending", left,
				kind);
out:
	wq_worker_free(w);
	wq_config_free(cfg);
	return ex;
}

/* W2 and W2c: N tasks, then one drain; every task must have succeeded. */
static int drain_workload(const struct bench_opts *o, struct bench_result *r, const char *kind,
			  const char *handler, bench_emit_fn emit, void *ctx)
{
	struct rusage ru;
	wq_db *db = NULL;
	long long before, after;
	int ex;

	if ((ex = cli_open_url(o->url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	before = count_of(db, kind, "succeeded", &ex);
	if (!ex)
		ex = bench_fill(db, o, kind, o->n);
	if (!ex)
		ex = bench_drain(db, o, kind, handler, &r->seconds);
	if (!ex && (after = count_of(db, kind, "succeeded", &ex)) - before != o->n && !ex)
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: %lld of %d tasks succeeded", after - before,
				o->n);
	wq_db_close(db);
	if (ex)
		return ex;
	getrusage(RUSAGE_SELF, &ru);
	r->max_rss_kib = ru.ru_maxrss;
	return emit(ctx, r);
}

int bench_w2(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W2", .handler = "in-process", .n = o->n,
				 .concurrency = o->concurrency, .prefetch = o->prefetch};

	return drain_workload(o, &r, "bench-w2", NULL, emit, ctx);
}

int bench_w2c(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W2c", .handler = o->handler, .n = o->n,
				 .concurrency = o->concurrency, .prefetch = o->prefetch};
	char kind[256];

	snprintf(kind, sizeof kind, "[kind.bench-w2c]\ncommand = %s\n", o->handler);
	return drain_workload(o, &r, "bench-w2c", kind, emit, ctx);
}

#define W5_FILL_CHUNK 10000 /* finished rows grown per fill and drain */

/* W5: for each size in o->rows (ascending), grow the finished rows to it (kind
 * bench-w5-fill, enqueued in batches and drained in-process, untimed), then time the
 * drain of N fresh tasks: claim + finish per task at that table size. */
int bench_w5(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	wq_db *db = NULL;
	long long have;
	double unused;
	int ex;

	if ((ex = cli_open_url(o->url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	have = count_of(db, "bench-w5-fill", "succeeded", &ex);
	for (int i = 0; i < o->nrows && !ex; i++) {
		struct bench_result r = {.workload = "W5", .handler = "in-process", .n = o->n,
					 .concurrency = o->concurrency, .rows = o->rows[i],
					 .prefetch = o->prefetch};

		/* In chunks: the claim's cost grows with the pending rows (see
		 * docs/performance.md, W5), so a million pending at once would take hours. */
		while (!ex && have < o->rows[i]) {
			long long chunk = o->rows[i] - have < W5_FILL_CHUNK ? o->rows[i] - have
									 : W5_FILL_CHUNK;

			ex = bench_fill(db, o, "bench-w5-fill", chunk);
			if (!ex)
				ex = bench_drain(db, o, "bench-w5-fill", NULL, &unused);
			have += chunk;
		}
		if (!ex)
			ex = bench_fill(db, o, "bench-w5", o->n);
		if (!ex)
			ex = bench_drain(db, o, "bench-w5", NULL, &r.seconds);
		if (!ex)
			ex = emit(ctx, &r);
	}
	wq_db_close(db);
	return ex;
}
