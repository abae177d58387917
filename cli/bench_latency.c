/* bench_latency.c — W3: from an enqueue in another process to the start of its handler.
 *
 * A child process (forked before this process has threads or an open store) owns its own
 * connection; for each sample it waits for a byte on a pipe, reads the monotonic clock
 * (system-wide, so both processes compare it) and enqueues a task carrying that stamp.
 * The worker here runs an in-process handler that reads the clock first thing and hands
 * the difference to the pacing thread, which then pauses a random time, uniform in
 * [0, --pause], before the next sample so that arrivals are not locked to a poll. The first
 * sample is a warm-up (it waits for the worker to be up) and is not counted. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define SAMPLE_TIMEOUT_MS 60000

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The child: one enqueue per byte read; EOF ends it. */
static void producer(const char *url, int go)
{
	wq_enqueue_opts eo = {.kind = "bench-w3"};
	wq_enqueued out;
	wq_error err = {0, ""};
	wq_db *db = NULL;
	char payload[64], b;
	int ex = cli_open_url(url, 0, &db);

	while (!ex && read(go, &b, 1) == 1) {
		snprintf(payload, sizeof payload, "{\"t\":%" PRId64 "}", mono_ns());
		eo.payload = payload;
		wq_rc rc = wq_enqueue(db, &eo, &out, &err);
		if (rc != WQ_OK)
			ex = cli_fail_ctx(rc, &err, "bench: W3 enqueue");
	}
	wq_db_close(db);
	_exit(ex);
}

struct w3 {
	const struct bench_opts *o;
	wq_worker *w;
	int go;      /* write end: one byte per sample */
	int done[2]; /* the handler writes the latency (int64_t ns) here */
	double *ms;  /* o->n samples */
	int ex;
};

static wq_job_result handler(wq_job *job, void *ud)
{
	int64_t now = mono_ns(), lat;
	struct w3 *x = ud;
	size_t len;
	const char *p = wq_job_payload(job, &len), *t = memchr(p, ':', len);

	lat = t ? now - strtoll(t + 1, NULL, 10) : -1;
	if (write(x->done[1], &lat, sizeof lat) != (ssize_t)sizeof lat)
		return WQ_JOB_FAIL;
	return WQ_JOB_SUCCEEDED;
}

/* One sample: ask the producer, wait for the handler's answer. */
static int sample(struct w3 *x, double *ms)
{
	struct pollfd pfd = {x->done[0], POLLIN, 0};
	int64_t lat;
	int r;

	if (write(x->go, "g", 1) != 1)
		return cli_errorf(CLI_EXIT_ERROR, "bench: W3: the producer process is gone");
	do
		r = poll(&pfd, 1, SAMPLE_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0 || read(x->done[0], &lat, sizeof lat) != (ssize_t)sizeof lat || lat < 0)
		return cli_errorf(CLI_EXIT_ERROR, "bench: W3: no handler start within %d s",
				  SAMPLE_TIMEOUT_MS / 1000);
	*ms = (double)lat / 1e6;
	return 0;
}

static void *pacer(void *arg)
{
	struct w3 *x = arg;
	double warm;

	x->ex = sample(x, &warm);
	for (int i = 0; i < x->o->n && !x->ex; i++) {
		int64_t pause = (int64_t)((double)x->o->pause_us * drand48());
		struct timespec ts = {pause / 1000000, (pause % 1000000) * 1000};

		nanosleep(&ts, NULL);
		x->ex = sample(x, &x->ms[i]);
		bench_progress(x->o, "W3", i + 1, x->o->n);
	}
	wq_worker_stop(x->w); /* drain: nothing runs; it returns */
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(const double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* The worker and the pacing thread; the child is running. */
static int measure(struct w3 *x, struct bench_result *r)
{
	char text[512];
	wq_config *cfg = NULL;
	wq_db *db = NULL;
	wq_error err = {0, ""};
	wq_worker_opts wo = {.db_url = x->o->url, .log = bench_quiet_log};
	pthread_t th;
	int ex, started = 0;
	wq_rc rc;

	bench_worker_config(x->o, 1, NULL, text, sizeof text);
	if ((rc = wq_config_parse(text, "bench", &cfg, &err)) != WQ_OK)
		return cli_fail_usage(rc, &err, "bench: worker configuration");
	if ((ex = cli_open_url(x->o->url, 0, &db)))
		goto out;
	if ((rc = wq_worker_new(db, cfg, &wo, &x->w, &err)) != WQ_OK ||
	    (rc = wq_worker_register(x->w, "bench-w3", handler, x, &err)) != WQ_OK) {
		ex = cli_fail_ctx(rc, &err, "bench: worker");
		goto out;
	}
	if (pthread_create(&th, NULL, pacer, x) != 0) {
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: cannot start a thread");
		goto out;
	}
	started = 1;
	if ((rc = wq_worker_run(x->w, &err)) != WQ_OK)
		ex = cli_fail_ctx(rc, &err, "bench: worker");
	if (ex) /* the worker failed: the pacer's next sample times out; end it sooner */
		close(x->go), x->go = -1;
out:
	if (started)
		pthread_join(th, NULL);
	if (!ex)
		ex = x->ex;
	if (!ex) {
		qsort(x->ms, (size_t)x->o->n, sizeof *x->ms, cmp_double);
		r->latency = 1;
		r->p50_ms = pct(x->ms, x->o->n, 0.50);
		r->p99_ms = pct(x->ms, x->o->n, 0.99);
		r->max_ms = x->ms[x->o->n - 1];
	}
	wq_worker_free(x->w);
	wq_db_close(db);
	wq_config_free(cfg);
	return ex;
}

int bench_w3(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W3", .handler = "in-process", .n = o->n,
				 .concurrency = 1};
	struct w3 x = {.o = o, .done = {-1, -1}};
	int go[2] = {-1, -1}, ex, st = 0;
	wq_db *db = NULL;
	pid_t child;

	if ((ex = cli_open_url(o->url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	wq_db_close(db); /* the child must not inherit an open connection */
	if (!(x.ms = calloc((size_t)o->n, sizeof *x.ms)) || pipe2(go, O_CLOEXEC) ||
	    pipe2(x.done, O_CLOEXEC)) {
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: W3: cannot set up");
		goto out;
	}
	fflush(NULL);
	if ((child = fork()) < 0) {
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: W3: cannot fork");
		goto out;
	}
	if (child == 0) {
		close(go[1]);
		producer(o->url, go[0]);
	}
	close(go[0]);
	go[0] = -1;
	x.go = go[1];
	srand48((long)getpid());
	ex = measure(&x, &r);
	if (x.go >= 0)
		close(x.go); /* EOF: the producer ends */
	go[1] = -1;
	if (waitpid(child, &st, 0) == child && !ex && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: W3: the producer process failed");
out:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (x.done[i] >= 0)
			close(x.done[i]);
	}
	free(x.ms);
	return ex ? ex : emit(ctx, &r);
}
