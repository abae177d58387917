/*
 * worker_store.c — the worker's store thread: claims and outcome batches off the event
 * loop (issue 11). A commit waits for fdatasync (SQLite FULL) or a round trip and a
 * flush (PostgreSQL); while it does, the loop goes on starting, reaping and timing out
 * handlers, and outcomes that arrive meanwhile queue for the next batch.
 *
 * Invariants:
 *  - The thread uses only its own connection (st.db); the loop's wq_db stays the loop's.
 *  - At most one batch and one claim are in flight. Their jobs stay in the worker's slots
 *    (w->running) and a claim in flight counts as busy, so the drain waits for both.
 *  - The thread never logs nor touches a job: it runs the store call and hands the
 *    answer back (notify.h); everything the answer means happens in the loop.
 */
#include "worker_int.h"

#include <stdlib.h>
#include <string.h>

/* Under st->mu: a claim's answer (alone, or with its batch) for the loop. */
static void claim_answered(struct wq__store_thread *st, struct wq__claimed *got,
			   size_t ngot, wq_rc rc, const wq_error *e)
{
	st->got = got;
	st->ngot = ngot;
	st->claim_rc = rc;
	st->claim_e = *e;
	st->claim_ready = 1;
}

static void *thread_main(void *arg)
{
	struct wq_worker *w = arg;
	struct wq__store_thread *st = &w->st;
	struct wq__claimed *got;
	size_t ngot;
	wq_error e;
	wq_rc rc;

	pthread_mutex_lock(&st->mu);
	for (;;) {
		while (!st->stop && !st->batch_todo && !st->claim_todo)
			pthread_cond_wait(&st->cv, &st->mu);
		if (st->batch_todo) {
			int with = st->claim_with_batch;

			pthread_mutex_unlock(&st->mu);
			wq__failpoint("finish"); /* the crash tests' name for recording outcomes */
			if (with)
				wq__failpoint("claim");
			got = NULL;
			ngot = 0;
			WQ__STORE_RETRY(rc, st->db, finish_batch, st->os, st->n, st->rcs, st->errs,
					with ? &st->req : NULL, &got, &ngot, &e);
			if (rc == WQ_OK) /* committed, nothing reported yet */
				wq__failpoint("outcome-committed");
			pthread_mutex_lock(&st->mu);
			st->batch_rc = rc;
			st->batch_e = e;
			st->batch_todo = 0;
			st->batch_ready = 1;
			if (with) {
				st->claim_with_batch = 0;
				claim_answered(st, got, ngot, rc, &e);
			}
			wq__notify_send(&st->done);
			continue;
		}
		if (st->claim_todo) {
			pthread_mutex_unlock(&st->mu);
			got = NULL;
			ngot = 0;
			WQ__STORE_RETRY(rc, st->db, claim, &st->req, &got, &ngot, &e);
			pthread_mutex_lock(&st->mu);
			st->claim_todo = 0;
			claim_answered(st, got, ngot, rc, &e);
			wq__notify_send(&st->done);
			continue;
		}
		break; /* stop, nothing to do */
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

/* Nothing in flight: the wake-up handle must not keep uv_run alive (as w->wake). */
static void ref_if_busy(struct wq__store_thread *st)
{
	if (st->batch_busy || st->claim_busy)
		uv_ref((uv_handle_t *)&st->done.poll);
	else
		uv_unref((uv_handle_t *)&st->done.poll);
}

/* The answers, taken under the mutex first: acting on a batch's answer may hand the
 * thread its next batch at once, which must not meet a claim answer not yet taken. */
static void on_done(struct wq__notify *a)
{
	struct wq_worker *w = a->data;
	struct wq__store_thread *st = &w->st;
	struct wq__claimed *got = NULL;
	size_t ngot = 0;
	wq_rc claim_rc = WQ_OK;
	wq_error claim_e;
	int batch, claim;

	pthread_mutex_lock(&st->mu);
	batch = st->batch_ready;
	claim = st->claim_ready;
	st->batch_ready = st->claim_ready = 0;
	if (claim) {
		got = st->got;
		ngot = st->ngot;
		claim_rc = st->claim_rc;
		claim_e = st->claim_e;
		st->got = NULL;
		st->ngot = 0;
	}
	pthread_mutex_unlock(&st->mu);
	if (batch)
		st->batch_busy = 0;
	if (claim)
		st->claim_busy = 0;
	ref_if_busy(st);
	/* The outcomes' answers first (they free the slots the claimed tasks start in);
	 * the next claim they ask for counts this answer's tasks as kept (pf.incoming),
	 * else it asked for a full prefetch on top of them: up to twice `prefetch` kept. */
	w->pf.incoming = claim ? ngot : 0;
	if (batch)
		wq__record_answer(w, st->js, st->os, st->rcs, st->errs, st->n, st->batch_rc,
				  &st->batch_e);
	w->pf.incoming = 0;
	if (claim)
		wq__worker_claimed(w, claim_rc, got, ngot, &claim_e);
}

void wq__st_start(struct wq_worker *w)
{
	struct wq__store_thread *st = &w->st;
	wq_error e;

	if (st->started || !w->db->url)
		return;
	if (wq_db_open(w->db->url, 0, &st->db, &e) != WQ_OK) {
		wq__worker_log(w, "warning",
			       "store thread: cannot open a second connection (%s); the event "
			       "loop records outcomes itself", e.message);
		return;
	}
	if (wq__notify_init(&w->loop, &st->done, on_done, w) != 0)
		goto fail;
	uv_unref((uv_handle_t *)&st->done.poll);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	if (pthread_create(&st->th, NULL, thread_main, w) != 0) {
		pthread_mutex_destroy(&st->mu);
		pthread_cond_destroy(&st->cv);
		goto fail;
	}
	st->started = 1;
	return;
fail:
	wq__worker_log(w, "warning", "store thread: cannot start it; the event loop records "
				     "outcomes itself");
	wq__notify_close(&st->done);
	wq_db_close(st->db);
	st->db = NULL;
}

void wq__st_stop(struct wq_worker *w)
{
	struct wq__store_thread *st = &w->st;

	if (st->started) {
		pthread_mutex_lock(&st->mu);
		st->stop = 1;
		pthread_cond_signal(&st->cv);
		pthread_mutex_unlock(&st->mu);
		pthread_join(st->th, NULL);
		pthread_mutex_destroy(&st->mu);
		pthread_cond_destroy(&st->cv);
		st->started = 0;
	}
	/* An answer never taken (the run ended abnormally): its memory. */
	for (size_t i = 0; st->got && i < st->ngot; i++)
		free(st->got[i].payload);
	free(st->got);
	st->got = NULL;
	if (st->batch_busy) {
		free(st->js);
		free(st->os);
		free(st->rcs);
		free(st->errs);
		st->batch_busy = 0;
	}
	/* The thread is gone (joined above): nothing sends any more. */
	wq__notify_close(&st->done);
	wq_db_close(st->db);
	st->db = NULL;
}

/* The claim request copied for the thread (the loop may take a new id meanwhile). */
static void claim_copy(struct wq__store_thread *st, const struct wq__claim_req *req)
{
	st->req = *req;
	wq__strlcpy(st->instance, req->instance, sizeof(st->instance));
	st->req.instance = st->instance;
	st->claim_busy = 1;
}

int wq__st_batch(struct wq_worker *w, struct wq__job **js, const struct wq__outcome **os,
		 wq_rc *rcs, wq_error *errs, size_t n, const struct wq__claim_req *req)
{
	struct wq__store_thread *st = &w->st;

	if (!st->started)
		return 0;
	if (req)
		claim_copy(st, req);
	st->js = js;
	st->os = os;
	st->rcs = rcs;
	st->errs = errs;
	st->n = n;
	st->batch_busy = 1;
	ref_if_busy(st);
	pthread_mutex_lock(&st->mu);
	st->batch_todo = 1;
	st->claim_with_batch = req != NULL;
	pthread_mutex_unlock(&st->mu);
	pthread_cond_signal(&st->cv); /* after the unlock: see wq__st_claim */
	return 1;
}

int wq__st_claim(struct wq_worker *w, const struct wq__claim_req *req)
{
	struct wq__store_thread *st = &w->st;

	if (!st->started)
		return 0;
	claim_copy(st, req);
	ref_if_busy(st);
	pthread_mutex_lock(&st->mu);
	st->claim_todo = 1;
	pthread_mutex_unlock(&st->mu);
	/* Signalled after the unlock: woken under it, the thread would block at once on the
	 * mutex still held here (glibc's waiter retakes it itself), one more futex round
	 * trip and context switch on the path from a wake-up to a handler's start (W3). The
	 * thread re-checks its request flags under the mutex, so no wake-up is lost; the cv
	 * lives until wq__st_stop joined the thread. */
	pthread_cond_signal(&st->cv);
	return 1;
}
