/* bench_enqueue.c — W1 (single durable enqueues), W1c (concurrent enqueuers: threads of
 * one process, or processes) and W1b (wq_enqueue_many batches). The threads of W1c share
 * one wq_db, as the threads of one program would (their enqueues share commits: group
 * commit, src/enqueue_group.c); each process of `--processes` has its own. */
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const char payload[] = "{\"n\":0}";

/* n single enqueues of kind, one transaction each. */
static int enqueue_loop(wq_db *db, const struct bench_opts *o, const char *kind,
			long long n, int report)
{
	wq_enqueue_opts eo = {.kind = kind, .payload = payload};
	wq_enqueued out;
	wq_error err = {0, ""};

	for (long long i = 0; i < n; i++) {
		wq_rc rc = wq_enqueue(db, &eo, &out, &err);
		if (rc != WQ_OK)
			return cli_fail_ctx(rc, &err, "bench: enqueue");
		if (report)
			bench_progress(o, o->workload, i + 1, n);
	}
	return 0;
}

/* W1 and W1b: one connection, N tasks of kind, one by one or in batches. */
static int one_connection(const struct bench_opts *o, struct bench_result *r, const char *kind,
			  int batched, bench_emit_fn emit, void *ctx)
{
	wq_db *db = NULL;
	double t0;
	int ex;

	if ((ex = cli_open_url(o->url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	t0 = bench_clock();
	ex = batched ? bench_fill(db, o, kind, o->n) : enqueue_loop(db, o, kind, o->n, 1);
	r->seconds = bench_clock() - t0;
	wq_db_close(db);
	return ex ? ex : emit(ctx, r);
}

int bench_w1(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W1", .n = o->n, .concurrency = 1};

	return one_connection(o, &r, "bench-w1", 0, emit, ctx);
}

/* ---- W1c ---- */

/* The start line of the enqueuer threads: they wait until go is set. */
struct start {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int go;
};

struct enqueuer {
	const struct bench_opts *o;
	struct start *start;
	wq_db *db;
	long long n;
	int ex;
};

static void *enqueuer_main(void *arg)
{
	struct enqueuer *e = arg;

	pthread_mutex_lock(&e->start->mu);
	while (!e->start->go)
		pthread_cond_wait(&e->start->cv, &e->start->mu);
	pthread_mutex_unlock(&e->start->mu);
	e->ex = enqueue_loop(e->db, e->o, "bench-w1c", e->n, 0);
	return NULL;
}

/* The share of enqueuer i of n tasks over c enqueuers. */
static long long share(long long n, int c, int i)
{
	return n / c + (i < n % c);
}

static int w1c_threads(const struct bench_opts *o, double *seconds)
{
	int c = o->concurrency, ex = 0, started = 0;
	struct enqueuer *e = calloc((size_t)c, sizeof *e);
	pthread_t *th = calloc((size_t)c, sizeof *th);
	struct start start = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	double t0;

	if (!e || !th) {
		free(e);
		free(th);
		return cli_errorf(CLI_EXIT_ERROR, "bench: out of memory");
	}
	wq_db *db = NULL;

	ex = cli_open_url(o->url, 0, &db);
	for (int i = 0; i < c; i++)
		e[i] = (struct enqueuer){o, &start, db, share(o->n, c, i), 0};
	while (started < c && !ex) {
		if (pthread_create(&th[started], NULL, enqueuer_main, &e[started]) != 0)
			ex = cli_errorf(CLI_EXIT_ERROR, "bench: cannot start a thread");
		else
			started++;
	}
	pthread_mutex_lock(&start.mu);
	for (int i = 0; ex && i < started; i++)
		e[i].n = 0; /* a failed start: the others do nothing */
	start.go = 1;
	t0 = bench_clock();
	pthread_cond_broadcast(&start.cv);
	pthread_mutex_unlock(&start.mu);
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		if (!ex)
			ex = e[i].ex;
	}
	*seconds = bench_clock() - t0;
	wq_db_close(db);
	free(e);
	free(th);
	return ex;
}

/* Processes: each opens its store, then waits for the go (EOF on a pipe, so one close
 * starts them all), enqueues its share and exits with its status. */
static int w1c_processes(const struct bench_opts *o, double *seconds)
{
	int c = o->concurrency, ex = 0, go[2], ready[2], n = 0;
	pid_t *pid = calloc((size_t)c, sizeof *pid);
	double t0;
	char b;

	if (!pid || pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) {
		free(pid);
		return cli_errorf(CLI_EXIT_ERROR, "bench: cannot set up the enqueuer processes");
	}
	fflush(NULL);
	for (; n < c; n++) {
		if ((pid[n] = fork()) < 0)
			break;
		if (pid[n] == 0) {
			wq_db *db = NULL;
			int st;

			close(go[1]);
			close(ready[0]);
			st = cli_open_url(o->url, 0, &db);
			if (write(ready[1], "r", 1) != 1 || st)
				_exit(st ? st : 1);
			if (read(go[0], &b, 1) != 0)
				_exit(1);
			st = enqueue_loop(db, o, "bench-w1c", share(o->n, c, n), 0);
			wq_db_close(db);
			_exit(st);
		}
	}
	close(go[0]);
	close(ready[1]);
	for (int i = 0; i < n; i++) /* every child has its store open */
		if (read(ready[0], &b, 1) != 1)
			break;
	t0 = bench_clock();
	close(go[1]);
	for (int i = 0; i < n; i++) {
		int st = 0;
		if (waitpid(pid[i], &st, 0) == pid[i] && !ex && !(WIFEXITED(st) && !WEXITSTATUS(st)))
			ex = WIFEXITED(st) ? WEXITSTATUS(st) : CLI_EXIT_ERROR;
	}
	*seconds = bench_clock() - t0;
	close(ready[0]);
	free(pid);
	if (n < c && !ex)
		ex = cli_errorf(CLI_EXIT_ERROR, "bench: cannot start enqueuer processes");
	return ex;
}

int bench_w1c(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W1c", .n = o->n, .concurrency = o->concurrency,
				 .mode = o->processes ? "processes" : "threads"};
	wq_db *db = NULL;
	int ex;

	/* the schema first, once: the enqueuers open without migrating */
	if ((ex = cli_open_url(o->url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	wq_db_close(db);
	ex = o->processes ? w1c_processes(o, &r.seconds) : w1c_threads(o, &r.seconds);
	return ex ? ex : emit(ctx, &r);
}

/* ---- W1b ---- */

int bench_w1b(const struct bench_opts *o, bench_emit_fn emit, void *ctx)
{
	struct bench_result r = {.workload = "W1b", .n = o->n, .concurrency = 1,
				 .batch = o->batch};

	return one_connection(o, &r, "bench-w1b", 1, emit, ctx);
}
