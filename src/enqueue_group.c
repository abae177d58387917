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
 * Invariants: no caller returns before the commit holding its item returned (durable or
 * failed); only the leader touches the store (g->busy is the handle's store lock for
 * enqueues); a request lives on its caller's stack until it is marked done.
 */
#include "enqueue.h"

#include <stdlib.h>
#include <string.h>

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
	memset(g, 0, sizeof *g);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
}

void wq__enq_group_destroy(struct wq__enq_group *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
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
	while (!me.done) {
		struct wq__enq_req *batch, *r;

		if (g->busy) { /* a commit is in flight: ours goes with the next one */
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		g->busy = 1;
		batch = g->head;
		g->head = g->tail = NULL;
		pthread_mutex_unlock(&g->mu);
		lead(db, batch);
		pthread_mutex_lock(&g->mu);
		for (r = batch; r; r = r->next)
			r->done = 1; /* after this, a follower may return and free its request */
		g->busy = 0;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	if (me.rc == WQ_OK)
		*row = me.row;
	else if (err)
		*err = me.err;
	return me.rc;
}
