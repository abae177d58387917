/*
 * bench.h — `wakeq bench` (issue 11): the workloads and their shared pieces.
 *
 * cmd_bench.c parses the options, gives each workload a store (a fresh throwaway SQLite
 * file, or --db) and prints every result; bench_enqueue.c (W1, W1c, W1b), bench_drain.c
 * (W2, W2c, W5) and bench_latency.c (W3) measure. Every workload uses only the public API,
 * and each its own kind ("bench-w2", …), so that runs sharing one --db do not mix.
 */
#ifndef WAKEQ_BENCH_H
#define WAKEQ_BENCH_H

#include "cli.h"

#define BENCH_ROWS_MAX 8

struct bench_opts {
	const char *workload; /* "W1", "W1c", … */
	const char *url;      /* the store */
	int n;                /* tasks (W3: samples) */
	int concurrency;      /* W1c: enqueuers; W2, W2c, W5: the worker's */
	int processes;        /* W1c: separate processes instead of threads */
	int batch;            /* W1b (and the untimed fills): items per wq_enqueue_many */
	const char *handler;  /* W2c's command */
	const char *poll;     /* the worker's poll_interval, or NULL: its default */
	int64_t pause_us;     /* W3: the pause between samples is uniform in [0, pause_us] */
	long long rows[BENCH_ROWS_MAX]; /* W5: finished rows before each measurement */
	int nrows;
	int progress;         /* print a progress line on stderr (a terminal) */
	int prefetch;         /* W2, W5: the worker's prefetch (wave4 batch); 0: none */
};

/* One result line. Fields that do not apply are 0 / NULL and left out. */
struct bench_result {
	const char *workload, *handler, *mode;
	long long n, rows;
	int concurrency, batch;
	double seconds, tasks_per_s, us_per_task;
	int latency; /* p50/p99/max are set */
	double p50_ms, p99_ms, max_ms;
	long max_rss_kib;
	int prefetch; /* W2, W5: printed when > 0 */
};

/* Prints one result (cmd_bench.c decides the format); returns 0 or an exit status. */
typedef int (*bench_emit_fn)(void *ctx, const struct bench_result *r);

/* The workloads: 0, or an exit status after the error line. */
int bench_w1(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w1c(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w1b(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w2(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w2c(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w5(const struct bench_opts *o, bench_emit_fn emit, void *ctx);
int bench_w3(const struct bench_opts *o, bench_emit_fn emit, void *ctx);

/* ---- shared (cmd_bench.c, bench_drain.c) ---- */

/* Seconds on the monotonic clock. */
double bench_clock(void);
/* "[worker]\nconcurrency = C\n" (+ poll_interval) + extra into buf. */
void bench_worker_config(const struct bench_opts *o, int concurrency, const char *extra,
			 char *buf, size_t bufsz);
/* A worker's log sink that prints errors only. */
void bench_quiet_log(void *ud, const char *level, const char *line);
/* "W2: 5000/20000" on stderr, at most once a second, when o->progress. */
void bench_progress(const struct bench_opts *o, const char *what, long long done,
		    long long total);
/* Enqueues n tasks of kind with wq_enqueue_many in batches of o->batch (untimed fills). */
int bench_fill(wq_db *db, const struct bench_opts *o, const char *kind, long long n);
/* Runs a worker on db until idle with the no-op in-process handler for kind (handler
 * NULL) or the configuration's command (handler: "[kind.K]\ncommand = …"); *seconds:
 * the run's wall time. */
int bench_drain(wq_db *db, const struct bench_opts *o, const char *kind, const char *handler,
		double *seconds);

#endif /* WAKEQ_BENCH_H */
