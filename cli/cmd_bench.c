/* cmd_bench.c — `wakeq bench`: throughput of the whole path on a throwaway store.
 *
 * Enqueues N tasks through the public API (one transaction each, as `wakeq enqueue`
 * does), then runs a worker with a trivial command handler until idle, and reports both
 * rates and the peak memory. Figures are for comparing two builds or two settings on the
 * same machine in the same session (see bench/README.md), never absolute claims. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

struct bench {
	int tasks, concurrency;
	const char *handler;
	double enqueue_s, run_s;
	long rss_kib, children_rss_kib;
};

static double seconds_since(int64_t start)
{
	return (double)(wq_now() - start) / 1e6;
}

static int bench_enqueue(wq_db *db, struct bench *b)
{
	wq_enqueue_opts o = {.kind = "bench", .payload = "{\"n\":0}"};
	wq_enqueued out;
	wq_error err = {0};
	int64_t t0 = wq_now();

	for (int i = 0; i < b->tasks; i++) {
		wq_rc rc = wq_enqueue(db, &o, &out, &err);
		if (rc != WQ_OK)
			return cli_fail_ctx(rc, &err, "bench: enqueue");
	}
	b->enqueue_s = seconds_since(t0);
	return 0;
}

static void quiet_log(void *ud, const char *level, const char *line)
{
	(void)ud;
	if (strcmp(level, "error") == 0)
		fprintf(stderr, "%s\n", line);
}

static int bench_run(wq_db *db, const char *url, struct bench *b)
{
	char text[1024];
	wq_config *cfg = NULL;
	wq_worker *w = NULL;
	wq_error err = {0};
	wq_worker_opts o = {.until_idle = 1, .db_url = url, .log = quiet_log};
	int64_t t0;
	int ex = 0;
	wq_rc rc;

	snprintf(text, sizeof text,
		 "[worker]\nconcurrency = %d\npoll_interval = 10ms\nheartbeat = 1s\n"
		 "[kind.bench]\ncommand = %s\n",
		 b->concurrency, b->handler);
	rc = wq_config_parse(text, "bench", &cfg, &err);
	if (rc != WQ_OK)
		return cli_fail_usage(rc, &err, "bench: --handler");
	if ((rc = wq_worker_new(db, cfg, &o, &w, &err)) != WQ_OK) {
		ex = cli_fail_ctx(rc, &err, "bench: worker");
		goto cleanup;
	}
	t0 = wq_now();
	if ((rc = wq_worker_run(w, &err)) != WQ_OK) {
		ex = cli_fail_ctx(rc, &err, "bench: worker");
		goto cleanup;
	}
	b->run_s = seconds_since(t0);
cleanup:
	wq_worker_free(w);
	wq_config_free(cfg);
	return ex;
}

static int bench_report(const struct bench *b, const char *backend, int json)
{
	double enq = b->tasks / (b->enqueue_s > 0 ? b->enqueue_s : 1e-9);
	double run = b->tasks / (b->run_s > 0 ? b->run_s : 1e-9);

	if (json)
		return cli_print_json(json_pack("{s:s, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:I, s:I}",
						"backend", backend, "tasks", b->tasks,
						"concurrency", b->concurrency, "handler", b->handler,
						"enqueue_seconds", b->enqueue_s, "enqueue_per_second", enq,
						"run_seconds", b->run_s, "run_per_second", run,
						"max_rss_kib", (json_int_t)b->rss_kib,
						"handler_max_rss_kib", (json_int_t)b->children_rss_kib));
	printf("backend       %s\n", backend);
	printf("tasks         %d (concurrency %d, handler %s)\n", b->tasks, b->concurrency,
	       b->handler);
	printf("enqueue       %.3f s  %.0f tasks/s (one transaction each)\n", b->enqueue_s, enq);
	printf("claim+run     %.3f s  %.0f tasks/s (spawn, record, until idle)\n", b->run_s, run);
	printf("max RSS       %ld KiB (wakeq), %ld KiB (largest handler)\n", b->rss_kib,
	       b->children_rss_kib);
	return 0;
}

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	const char *tasks = NULL, *conc = NULL, *pos[1], *url;
	struct bench b = {.tasks = 2000, .concurrency = 8, .handler = "/bin/true"};
	char dir[256], path[300];
	int json = 0, npos, ex, tmp = 0;
	const struct cli_opt opts[] = {
		CLI_VALUE("--tasks", &tasks),	CLI_VALUE("--concurrency", &conc),
		CLI_VALUE("--handler", &b.handler), CLI_FLAG("--json", &json),
		CLI_END,
	};
	struct rusage ru;
	wq_db *db = NULL;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) ||
	    (tasks && (ex = cli_parse_int("--tasks", tasks, 1, 10000000, &b.tasks))) ||
	    (conc && (ex = cli_parse_int("--concurrency", conc, 1, 1024, &b.concurrency))))
		return ex;
	/* A store of its own unless --db names one: a benchmark must not touch real work. */
	url = cli->db_opt;
	if (!url) {
		const char *tmpdir = getenv("TMPDIR");
		size_t l;

		snprintf(dir, sizeof dir - 7, "%s/wakeq-bench.", tmpdir && *tmpdir ? tmpdir : "/tmp");
		l = strlen(dir);
		memset(dir + l, 'X', 6); /* mkdtemp's template: six characters it replaces */
		dir[l + 6] = '\0';
		if (!mkdtemp(dir))
			return cli_errorf(CLI_EXIT_ERROR, "bench: cannot create a temporary directory");
		snprintf(path, sizeof path, "%s/bench.db", dir);
		url = path;
		tmp = 1;
	}
	if ((ex = cli_open_url(url, WQ_OPEN_MIGRATE, &db)) || (ex = bench_enqueue(db, &b)) ||
	    (ex = bench_run(db, url, &b)))
		goto cleanup;
	getrusage(RUSAGE_SELF, &ru);
	b.rss_kib = ru.ru_maxrss;
	getrusage(RUSAGE_CHILDREN, &ru);
	b.children_rss_kib = ru.ru_maxrss;
	ex = bench_report(&b, wq_db_backend(db), json);
cleanup:
	wq_db_close(db);
	if (tmp) {
		const char *suffix[] = {"", "-wal", "-shm"};
		for (size_t i = 0; i < 3; i++) {
			char f[320];
			snprintf(f, sizeof f, "%s%s", path, suffix[i]);
			unlink(f);
		}
		rmdir(dir);
	}
	return ex;
}
