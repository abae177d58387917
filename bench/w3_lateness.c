/*
 * w3_lateness.c — W3: enqueue from another process to handler start (issue 11).
 *
 *   w3_lateness DB_URL FIFO N [KIND [GAP_MS]]
 *
 * A worker of DB_URL (started by bench/w3_lateness.sh, idle, its kind's command
 * `w3_handler FIFO`) runs the handler; this process enqueues one task at a time through
 * the public API (one durable transaction), waits until the handler reports its start on
 * the FIFO, sleeps a random gap of U(0, GAP_MS) (default 20; give a polling worker its
 * poll interval, as the peers' harness does) so arrivals are not phase-locked to a timer
 * of the worker, and repeats N times. Lateness = handler entry − just before
 * wq_enqueue (CLOCK_MONOTONIC in both processes), so it includes the enqueue's commit.
 * Prints `workload=W3 backend=... n=N p50_ms=... p99_ms=... max_ms=... enqueue_p50_ms=...
 * start_p50_ms=... start_p99_ms=...` (start: handler entry − wq_enqueue's return, the
 * worker's share without the enqueue's commit).
 */
#include "wakeq.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

/* Reads one line "<id> <ns>" from fd within 30 s; 0 on success. */
static int read_start(int fd, int64_t *id, int64_t *ns)
{
	static char buf[4096];
	static size_t have;
	char *nl;

	while (!(nl = memchr(buf, '\n', have))) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t r;

		if (poll(&p, 1, 30000) <= 0)
			return -1;
		r = read(fd, buf + have, sizeof(buf) - have);
		if (r <= 0 && errno != EINTR)
			return -1;
		if (r > 0)
			have += (size_t)r;
	}
	*nl = '\0';
	if (sscanf(buf, "%lld %lld", (long long *)id, (long long *)ns) != 2)
		return -1;
	have -= (size_t)(nl + 1 - buf);
	memmove(buf, nl + 1, have);
	return 0;
}

int main(int argc, char **argv)
{
	const char *url, *fifo, *kind;
	double *late, *enq, *start;
	int gap_ms;
	wq_db *db;
	wq_error e;
	int n, fd;

	if (argc < 4) {
		fprintf(stderr, "usage: w3_lateness DB_URL FIFO N [KIND]\n");
		return 2;
	}
	url = argv[1];
	fifo = argv[2];
	n = atoi(argv[3]);
	kind = argc > 4 ? argv[4] : "w3";
	gap_ms = argc > 5 ? atoi(argv[5]) : 20;
	late = calloc((size_t)n, sizeof(*late));
	enq = calloc((size_t)n, sizeof(*enq));
	start = calloc((size_t)n, sizeof(*start));
	/* read-write: the FIFO never reads EOF between two handlers */
	fd = open(fifo, O_RDWR | O_CLOEXEC);
	if (n <= 0 || gap_ms <= 0 || !late || !enq || !start || fd < 0) {
		perror("w3_lateness");
		return 1;
	}
	if (wq_db_open(url, 0, &db, &e) != WQ_OK) {
		fprintf(stderr, "w3_lateness: %s\n", e.message);
		return 1;
	}
	srand((unsigned)getpid());
	for (int i = 0; i < n; i++) {
		wq_enqueue_opts o;
		wq_enqueued q;
		int64_t t0, t1, id, at;
		long us = (long)(rand() % (gap_ms * 1000));
		struct timespec gap = {us / 1000000, (us % 1000000) * 1000L};

		nanosleep(&gap, NULL);
		memset(&o, 0, sizeof(o));
		o.kind = kind;
		t0 = mono_ns();
		if (wq_enqueue(db, &o, &q, &e) != WQ_OK) {
			fprintf(stderr, "w3_lateness: enqueue: %s\n", e.message);
			return 1;
		}
		t1 = mono_ns();
		do {
			if (read_start(fd, &id, &at) != 0) {
				fprintf(stderr, "w3_lateness: no handler start within 30 s (sample %d)\n", i);
				return 1;
			}
		} while (id != q.id); /* a start of an earlier, timed-out sample */
		late[i] = (double)(at - t0) / 1e6;
		enq[i] = (double)(t1 - t0) / 1e6;
		start[i] = (double)(at - t1) / 1e6;
	}
	qsort(late, (size_t)n, sizeof(*late), cmp);
	qsort(enq, (size_t)n, sizeof(*enq), cmp);
	qsort(start, (size_t)n, sizeof(*start), cmp);
	printf("workload=W3 backend=%s n=%d gap_ms=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f "
	       "enqueue_p50_ms=%.3f start_p50_ms=%.3f start_p99_ms=%.3f\n",
	       strncmp(url, "postgres", 8) == 0 ? "postgres" : "sqlite", n, gap_ms,
	       pct(late, n, 0.5), pct(late, n, 0.99), late[n - 1], pct(enq, n, 0.5),
	       pct(start, n, 0.5), pct(start, n, 0.99));
	wq_db_close(db);
	return 0;
}
