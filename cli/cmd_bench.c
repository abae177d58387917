/* cmd_bench.c — `wakeq bench` (issue 11): the workloads of the side-by-side comparison,
 * measured like pgbench on a throwaway store or on --db.
 *
 * One machine-readable line per result on stdout (`workload=W2 backend=sqlite …
 * tasks_per_s=…`; with --json one JSON object per line instead), a table of them at the
 * end when stdout is a terminal, a progress line on stderr when it is one. Figures are for
 * comparing builds, settings or peers on the same machine in the same session (see
 * bench/README.md and docs/performance.md), never absolute claims. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const struct workload {
	const char *name;
	int (*run)(const struct bench_opts *, bench_emit_fn, void *);
} workloads[] = {
	{"W1", bench_w1},   {"W1c", bench_w1c}, {"W1b", bench_w1b}, {"W2", bench_w2},
	{"W2c", bench_w2c}, {"W3", bench_w3},   {"W5", bench_w5},
};
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])

double bench_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_worker_config(const struct bench_opts *o, int concurrency, const char *extra,
			 char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "[worker]\nconcurrency = %d\nprefetch = %d\n%s%s%s%s", concurrency,
		 o->prefetch, o->poll ? "poll_interval = " : "", o->poll ? o->poll : "",
		 o->poll ? "\n" : "", extra ? extra : "");
}

void bench_quiet_log(void *ud, const char *level, const char *line)
{
	(void)ud;
	if (strcmp(level, "error") == 0)
		fprintf(stderr, "%s\n", line);
}

void bench_progress(const struct bench_opts *o, const char *what, long long done,
		    long long total)
{
	static double last;
	double now;

	if (!o->progress)
		return;
	now = bench_clock();
	if (done < total && now - last < 1.0)
		return;
	last = now;
	fprintf(stderr, "\r%s: %lld/%lld%s", what, done, total, done < total ? "" : "\n");
}

/* ---- output ---- */

#define RESULTS_MAX 64

struct out {
	const char *backend, *synchronous;
	int json;
	struct bench_result r[RESULTS_MAX];
	int n;
};

/* The figures derived from seconds. */
static void derive(struct bench_result *r)
{
	if (r->latency || r->seconds <= 0)
		return;
	r->tasks_per_s = (double)r->n / r->seconds;
	r->us_per_task = r->seconds * 1e6 / (double)r->n;
}

static int emit_json(const struct out *x, const struct bench_result *r)
{
	char *text;
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:i}", "workload", r->workload, "backend",
			      x->backend, "synchronous", x->synchronous, "n", (json_int_t)r->n,
			      "concurrency", r->concurrency);

	if (!j)
		return cli_print_json(NULL);
	if (r->handler)
		json_object_set_new(j, "handler", json_string(r->handler));
	if (r->mode)
		json_object_set_new(j, "mode", json_string(r->mode));
	if (r->batch)
		json_object_set_new(j, "batch", json_integer(r->batch));
	if (r->rows)
		json_object_set_new(j, "rows", json_integer(r->rows));
	if (r->prefetch)
		json_object_set_new(j, "prefetch", json_integer(r->prefetch));
	if (r->latency) {
		json_object_set_new(j, "p50_ms", json_real(r->p50_ms));
		json_object_set_new(j, "p99_ms", json_real(r->p99_ms));
		json_object_set_new(j, "max_ms", json_real(r->max_ms));
	} else {
		json_object_set_new(j, "seconds", json_real(r->seconds));
		json_object_set_new(j, "tasks_per_s", json_real(r->tasks_per_s));
		json_object_set_new(j, "us_per_task", json_real(r->us_per_task));
	}
	if (r->max_rss_kib)
		json_object_set_new(j, "max_rss_kib", json_integer(r->max_rss_kib));
	text = json_dumps(j, JSON_COMPACT); /* one object per line */
	json_decref(j);
	if (!text)
		return cli_print_json(NULL);
	printf("%s\n", text);
	fflush(stdout);
	free(text);
	return 0;
}

static void emit_line(const struct out *x, const struct bench_result *r)
{
	printf("workload=%s backend=%s synchronous=%s", r->workload, x->backend, x->synchronous);
	if (r->handler)
		printf(" handler=%s", r->handler);
	if (r->mode)
		printf(" mode=%s", r->mode);
	if (r->batch)
		printf(" batch=%d", r->batch);
	if (r->rows)
		printf(" rows=%lld", r->rows);
	printf(" n=%lld concurrency=%d", r->n, r->concurrency);
	if (r->prefetch)
		printf(" prefetch=%d", r->prefetch);
	if (r->latency)
		printf(" p50_ms=%.3f p99_ms=%.3f max_ms=%.3f", r->p50_ms, r->p99_ms, r->max_ms);
	else
		printf(" seconds=%.3f tasks_per_s=%.0f us_per_task=%.1f", r->seconds,
		       r->tasks_per_s, r->us_per_task);
	if (r->max_rss_kib)
		printf(" max_rss_kib=%ld", r->max_rss_kib);
	printf("\n");
	fflush(stdout);
}

static int emit(void *ctx, const struct bench_result *in)
{
	struct out *x = ctx;
	struct bench_result r = *in;

	derive(&r);
	if (x->n < RESULTS_MAX)
		x->r[x->n++] = r;
	if (x->json)
		return emit_json(x, &r);
	emit_line(x, &r);
	return 0;
}

static void print_table(const struct out *x)
{
	printf("\n%-4s %-8s %-10s %9s %4s %10s %12s %10s %22s\n", "", "backend", "handler", "n",
	       "c", "seconds", "tasks/s", "µs/task", "p50 / p99 / max ms");
	for (int i = 0; i < x->n; i++) {
		const struct bench_result *r = &x->r[i];
		char lat[64] = "-";

		if (r->latency)
			snprintf(lat, sizeof lat, "%.2f / %.2f / %.2f", r->p50_ms, r->p99_ms,
				 r->max_ms);
		printf("%-4s %-8s %-10s %9lld %4d %10.3f %12.0f %10.1f %22s", r->workload,
		       x->backend, r->handler ? r->handler : (r->mode ? r->mode : "-"), r->n,
		       r->concurrency, r->seconds, r->tasks_per_s, r->us_per_task, lat);
		if (r->rows)
			printf("  (%lld finished rows)", r->rows);
		printf("\n");
	}
}

/* ---- options ---- */

/* "10000,100000" into o->rows (ascending). */
static int parse_rows(const char *text, struct bench_opts *o)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(text) >= sizeof buf)
		return cli_errorf(CLI_EXIT_USAGE, "bench: --rows: too long");
	strcpy(buf, text);
	o->nrows = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long v;
		int ex = cli_parse_ll("--rows", tok, 0, 100000000, &v);

		if (ex)
			return ex;
		if (o->nrows == BENCH_ROWS_MAX || (o->nrows && v <= o->rows[o->nrows - 1]))
			return cli_errorf(CLI_EXIT_USAGE,
					  "bench: --rows: at most %d sizes, ascending", BENCH_ROWS_MAX);
		o->rows[o->nrows++] = v;
	}
	return o->nrows ? 0 : cli_errorf(CLI_EXIT_USAGE, "bench: --rows: no size given");
}

static const struct workload *find_workload(const char *name)
{
	for (size_t i = 0; i < NWORKLOADS; i++)
		if (strcasecmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

/* A fresh temporary directory for a throwaway store; its database path into path. */
static int make_tmp(char *dir, size_t dirsz, char *path, size_t pathsz)
{
	const char *tmpdir = getenv("TMPDIR");

	snprintf(dir, dirsz, "%s/wakeq-bench.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir))
		return cli_errorf(CLI_EXIT_ERROR, "bench: cannot create a temporary directory");
	snprintf(path, pathsz, "%s/bench.db", dir);
	return 0;
}

static void remove_tmp(const char *dir, const char *path)
{
	const char *suffix[] = {"", "-wal", "-shm"};

	for (size_t i = 0; i < 3; i++) {
		char f[600];
		snprintf(f, sizeof f, "%s%s", path, suffix[i]);
		unlink(f);
	}
	rmdir(dir);
}

/* Runs one workload on --db, or on a store of its own that is removed afterwards: a
 * benchmark must not touch real work, and each workload starts from an empty store. */
static int run_one(const struct workload *w, struct bench_opts *o, const char *db_opt,
		   struct out *x)
{
	char dir[512], path[600];
	int ex;

	o->url = db_opt;
	o->workload = w->name;
	if (!db_opt) {
		if ((ex = make_tmp(dir, sizeof dir, path, sizeof path)))
			return ex;
		o->url = path;
	}
	x->backend = strncmp(o->url, "postgres", 8) == 0 ? "postgres" : "sqlite";
	ex = w->run(o, emit, x);
	if (!db_opt)
		remove_tmp(dir, path);
	return ex;
}

/* The durability setting behind the figures: SQLite's synchronous ($WAKEQ_SQLITE_
 * SYNCHRONOUS, default FULL); PostgreSQL's is the server's synchronous_commit. */
static const char *synchronous_of(const char *url)
{
	const char *s = getenv("WAKEQ_SQLITE_SYNCHRONOUS");

	if (url && strncmp(url, "postgres", 8) == 0)
		return "server";
	if (!s || !*s || strcasecmp(s, "FULL") == 0)
		return "full";
	return strcasecmp(s, "NORMAL") == 0 ? "normal" : "off";
}

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	const char *wl = "W2", *tasks = NULL, *conc = NULL, *batch = NULL, *rows = NULL;
	const char *pause = NULL, *pos[1], *prefetch = NULL;
	struct bench_opts o = {.n = 2000, .concurrency = 8, .batch = 1000,
			       .handler = "/bin/true", .pause_us = 10000,
			       .rows = {10000, 100000}, .nrows = 2};
	struct out *x = calloc(1, sizeof *x);
	char list[128], *save = NULL, *tok;
	int npos, ex;
	const struct cli_opt opts[] = {
		CLI_VALUE("--workload", &wl),	  CLI_VALUE("--tasks", &tasks),
		CLI_VALUE("--concurrency", &conc), CLI_VALUE("--batch", &batch),
		CLI_VALUE("--rows", &rows),	  CLI_VALUE("--handler", &o.handler),
		CLI_VALUE("--poll", &o.poll),	  CLI_VALUE("--pause", &pause),
		CLI_FLAG("--processes", &o.processes), CLI_FLAG("--json", &x->json),
		CLI_VALUE("--prefetch", &prefetch),
		CLI_END,
	};

	if (!x)
		return cli_errorf(CLI_EXIT_ERROR, "bench: out of memory");
	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) ||
	    (tasks && (ex = cli_parse_int("--tasks", tasks, 1, 100000000, &o.n))) ||
	    (conc && (ex = cli_parse_int("--concurrency", conc, 1, 1024, &o.concurrency))) ||
	    (batch && (ex = cli_parse_int("--batch", batch, 1, WQ_ENQUEUE_MANY_MAX, &o.batch))) ||
	    (rows && (ex = parse_rows(rows, &o))) ||
	    (prefetch && (ex = cli_parse_int("--prefetch", prefetch, 0, 100000, &o.prefetch))))
		goto out;
	if (pause) {
		wq_error err = {0, ""};
		wq_rc rc = wq_duration_parse(pause, &o.pause_us, &err);
		if (rc != WQ_OK && (ex = cli_fail_usage(rc, &err, "bench: --pause")))
			goto out;
	}
	if (strlen(wl) >= sizeof list) {
		ex = cli_errorf(CLI_EXIT_USAGE, "bench: --workload: too long");
		goto out;
	}
	/* every name checked before anything runs */
	strcpy(list, wl);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!find_workload(tok)) {
			ex = cli_errorf(CLI_EXIT_USAGE,
					"bench: unknown workload '%s' (W1, W1c, W1b, W2, W2c, W3, W5)",
					tok);
			goto out;
		}
	if (x->json)
		cli_set_json_errors(1);
	o.progress = isatty(STDERR_FILENO);
	x->synchronous = synchronous_of(cli->db_opt);
	strcpy(list, wl);
	save = NULL;
	for (tok = strtok_r(list, ",", &save); tok && !ex; tok = strtok_r(NULL, ",", &save))
		ex = run_one(find_workload(tok), &o, cli->db_opt, x);
	if (!ex && !x->json && isatty(STDOUT_FILENO))
		print_table(x);
out:
	free(x);
	return ex;
}
