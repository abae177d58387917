/*
 * enqueue_group.c — group commit of the concurrent wq_enqueue calls on one handle
 * (issue 11, wave 4): leader and followers.
 *
 * A caller queues its validated request and, when no commit is in flight, becomes the
 * leader: it takes every request queued so far (its own first among them, in arrival
 * order), runs them in ONE store transaction (store.h enqueue_group: a savepoint per
 * item, so each keeps its own answer) and, once that commit returned, answers them all.
 * Callers arriving meanwhile queue up for the next leader. So N threads enqueueing at
 * once pay about one fsync per group instead of one each, and a lone caller (W1, the
 * CLI) pays one mutex: a group of one runs the plain enqueue() method, exactly as before.
 *
 * Gathering (wave 5): callers answered by one commit come back while the next group is
 * already committing, so N threads split into two cohorts alternating, each paying a
 * commit. A leader therefore first waits, bounded by the last group's duration, until as
 * many requests are queued as callers were inside at once since the last group was
 * taken (g->peak): the cohorts merge into one group per commit. A lone caller (peak 1)
 * never waits; when a caller stops enqueueing, one leader waits out the bound once and
 * the peak follows.
 *
 * Invariants: no caller returns before the commit holding its item returned (durable or
 * failed); only the leader touches the store (g->busy is the handle's store lock for
 * enqueues); a request lives on its caller's stack until it is marked done.
 */
#include "enqueue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A gathering leader waits at most this long, whatever the last group took. */
#define GATHER_MAX_US 2000

/* One caller's enqueue, waiting in the handle's queue (on the caller's stack). */
struct wq__enq_req {
	const struct wq__new_task *t;
	struct wq__enqueued_row row;
	wq_rc rc;
	wq_error err;
	int done;                 /* answered: rc, err, row are final */
	struct wq__enq_req *next; /* the queue, in arrival order */
};

void wq__enq_group_init(struct wq__enq_group *g)
{
	pthread_condattr_t ca;

	memset(g, 0, sizeof *g);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the gathering bound */
	pthread_cond_init(&g->lead_cv, &ca);
	pthread_condattr_destroy(&ca);
}

void wq__enq_group_destroy(struct wq__enq_group *g)
{
	pthread_cond_destroy(&g->lead_cv);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Under g->mu, g->busy taken: waits until g->peak requests are queued, at most the last
 * group's duration (GATHER_MAX_US at most). Then the peak starts over from the callers
 * inside now. */
static void gather(struct wq__enq_group *g)
{
	int64_t wait_us = g->last_us < GATHER_MAX_US ? g->last_us : GATHER_MAX_US;
	struct timespec until;
	int64_t end;

	if (g->queued < g->peak && wait_us > 0) {
		end = mono_us() + wait_us;
		until.tv_sec = (time_t)(end / 1000000);
		until.tv_nsec = (long)(end % 1000000) * 1000;
		g->leader_waiting = 1;
		while (g->queued < g->peak)
			if (pthread_cond_timedwait(&g->lead_cv, &g->mu, &until) == ETIMEDOUT)
				break;
		g->leader_waiting = 0;
	}
	g->peak = g->inside;
}

/* Runs the n requests of list `first` (n >= 2) as one group and answers each. */
static void run_group(wq_db *db, struct wq__enq_req *first, size_t n)
{
	const struct wq__new_task **t = calloc(n, sizeof *t);
	struct wq__enqueued_row *rows = calloc(n, sizeof *rows);
	wq_rc *rcs = calloc(n, sizeof *rcs);
	wq_error *errs = calloc(n, sizeof *errs), err = {0, ""};
	struct wq__enq_req *r;
	size_t i;

	if (!t || !rows || !rcs || !errs) {
		for (r = first; r; r = r->next)
			r->rc = wq__err(&r->err, WQ_ENOMEM, "out of memory (a group of %zu "
							    "enqueues)", n);
		goto done;
	}
	for (r = first, i = 0; r; r = r->next)
		t[i++] = r->t;
	/* The return code repeats what the items carry (store.h): each answer is its own. */
	(void)WQ__STORE(db, enqueue_group, t, n, rows, rcs, errs, &err);
	for (r = first, i = 0; r; r = r->next, i++) {
		r->rc = rcs[i];
		r->err = errs[i];
		r->row = rows[i];
	}
done:
	free(t);
	free(rows);
	free(rcs);
	free(errs);
}

/* The leader's turn: the queued requests, taken under g->mu, run without it. */
static void lead(wq_db *db, struct wq__enq_req *first)
{
	size_t n = 0;

	for (struct wq__enq_req *r = first; r; r = r->next)
		n++;
	if (n == 1)
		first->rc = WQ__STORE(db, enqueue, first->t, &first->row, &first->err);
	else
		run_group(db, first, n);
}

wq_rc wq__enqueue_shared(wq_db *db, const struct wq__new_task *t,
			 struct wq__enqueued_row *row, wq_error *err)
{
	struct wq__enq_group *g = &db->enq;
	struct wq__enq_req me = {t, {0}, WQ_OK, {0, ""}, 0, NULL};

	pthread_mutex_lock(&g->mu);
	if (g->tail)
		g->tail->next = &me;
	else
		g->head = &me;
	g->tail = &me;
	g->queued++;
	if (++g->inside > g->peak)
		g->peak = g->inside;
	if (g->leader_waiting && g->queued >= g->peak) /* its wait is over: one wake-up */
		pthread_cond_signal(&g->lead_cv);
	while (!me.done) {
		struct wq__enq_req *batch, *r;
		int64_t t0;

		if (g->busy) { /* a commit is in flight: ours goes with the next one */
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		g->busy = 1;
		gather(g);
		batch = g->head;
		g->head = g->tail = NULL;
		g->queued = 0;
		pthread_mutex_unlock(&g->mu);
		t0 = mono_us();
		lead(db, batch);
		pthread_mutex_lock(&g->mu);
		g->last_us = mono_us() - t0;
		for (r = batch; r; r = r->next)
			r->done = 1; /* after this, a follower may return and free its request */
		g->busy = 0;
		pthread_cond_broadcast(&g->cv);
	}
	g->inside--;
	pthread_mutex_unlock(&g->mu);
	if (me.rc == WQ_OK)
		*row = me.row;
	else if (err)
		*err = me.err;
	return me.rc;
}
