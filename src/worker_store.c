/*
 * worker_store.c — the worker's store lanes: claims and outcome batches off the event
 * loop (issue 11). A commit waits for fdatasync (SQLite FULL) or a round trip and a
 * flush (PostgreSQL); while it does, the loop goes on starting, reaping and timing out
 * handlers, and outcomes that arrive meanwhile queue for the next batch. A store that
 * takes several writers at once (PostgreSQL: store.h `writers`) gets as many lanes, so
 * a second batch and claim commit while the first ones flush.
 *
 * Invariants:
 *  - A lane's thread uses only its own connection (st->db); the loop's wq_db stays the
 *    loop's.
 *  - At most one batch and one claim are in flight per lane. Their jobs stay in the
 *    worker's slots (w->running) and a claim in flight counts as busy, so the drain
 *    waits for all of them. A job is in at most one batch (batch_prepare clears its
 *    `queued`), so lanes never race on a task's outcome.
 *  - The claims in flight together ask for no more than one claim would (wq__st_asked,
 *    counted as kept by worker_prefetch.c): lanes add commits in flight, never tasks
 *    kept.
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
	struct wq__store_thread *st = arg;
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
	struct wq__store_thread *st = a->data;
	struct wq_worker *w = st->w;
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
	if (claim) {
		st->claim_busy = 0;
		st->asked = 0;
		/* A claim that came back full may have left due tasks behind (a riding
		 * claim asks for a lane's share of the prefetch): claim again once it is
		 * taken, when there is room then (no store call without). Left to the
		 * kick of the next settled batch, the kept queue ran dry between batches:
		 * W2 PostgreSQL prefetch 64/256 0.92x/0.87x (docs/performance.md wave 10). */
		if (claim_rc == WQ_OK && ngot > 0 && ngot == (size_t)st->req.limit)
			w->claim_missed = 1;
	}
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

/* Lane st's thread and connection: 0, or -1 (logged; nothing left open). */
static int lane_start(struct wq_worker *w, struct wq__store_thread *st)
{
	wq_error e;

	st->w = w;
	if (wq_db_open(w->db->url, 0, &st->db, &e) != WQ_OK) {
		wq__worker_log(w, "warning", "store lane %d: cannot open a connection (%s)",
			       (int)(st - w->st), e.message);
		return -1;
	}
	if (wq__notify_init(&w->loop, &st->done, on_done, st) != 0)
		goto fail;
	uv_unref((uv_handle_t *)&st->done.poll);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	if (pthread_create(&st->th, NULL, thread_main, st) != 0) {
		pthread_mutex_destroy(&st->mu);
		pthread_cond_destroy(&st->cv);
		goto fail;
	}
	return 0;
fail:
	wq__worker_log(w, "warning", "store lane %d: cannot start its thread",
		       (int)(st - w->st));
	wq__notify_close(&st->done);
	wq_db_close(st->db);
	st->db = NULL;
	return -1;
}

void wq__st_start(struct wq_worker *w)
{
	int want = w->db->m->writers;

	if (w->nlanes || !w->db->url)
		return;
	if (want > WQ__LANES_MAX)
		want = WQ__LANES_MAX;
	if (w->cfg->store_connections > 0 && want > w->cfg->store_connections)
		want = w->cfg->store_connections;
	while (w->nlanes < want && lane_start(w, &w->st[w->nlanes]) == 0)
		w->nlanes++;
	if (w->nlanes == 0)
		wq__worker_log(w, "warning", "no store lane: the event loop records outcomes "
					     "itself");
}

/* Lane st stopped and its connection closed; what it still held, freed. */
static void lane_stop(struct wq__store_thread *st)
{
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_signal(&st->cv);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->th, NULL);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->cv);
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

void wq__st_stop(struct wq_worker *w)
{
	while (w->nlanes > 0)
		lane_stop(&w->st[--w->nlanes]);
}

/* The first lane with no batch (want_batch) or no claim in flight, one that has neither
 * in flight first: a claim alone then commits beside the batches, not behind one. */
static struct wq__store_thread *lane_free(struct wq_worker *w, int want_batch)
{
	struct wq__store_thread *any = NULL;

	for (int i = 0; i < w->nlanes; i++) {
		struct wq__store_thread *st = &w->st[i];
		int busy = want_batch ? st->batch_busy : st->claim_busy;
		int other = want_batch ? st->claim_busy : st->batch_busy;

		if (busy)
			continue;
		if (!other)
			return st;
		if (!any)
			any = st;
	}
	return any;
}

/* Lanes with a batch (batch) or a claim (!batch) in flight. */
static int lanes_busy(const struct wq_worker *w, int batch)
{
	int n = 0;

	for (int i = 0; i < w->nlanes; i++)
		n += batch ? w->st[i].batch_busy : w->st[i].claim_busy;
	return n;
}

/* A commit costs about the same for one outcome as for many: a batch goes out beside
 * one in flight only when it holds a lane's share of the slots. Fewer outcomes wait and
 * join the next batch: outcomes that trickle in (command handlers exiting one by one)
 * would otherwise each take a commit of their own, twice the commits on the same work. */
struct wq__store_thread *wq__st_for_batch(struct wq_worker *w, size_t n)
{
	if (lanes_busy(w, 1) > 0 && n * (size_t)w->nlanes < (size_t)w->concurrency)
		return NULL;
	return lane_free(w, 1);
}

struct wq__store_thread *wq__st_for_claim(struct wq_worker *w)
{
	return lane_free(w, 0);
}

int wq__st_claims(const struct wq_worker *w)
{
	return lanes_busy(w, 0);
}

int wq__st_asked(const struct wq_worker *w)
{
	int n = 0;

	for (int i = 0; i < w->nlanes; i++)
		n += w->st[i].asked;
	return n;
}

/* The claim request copied for the thread (the loop may take a new id meanwhile). Until
 * its answer, the slots it asked for beyond the `extra` ones its own batch frees count
 * as asked: those are still taken by the batch's jobs (w->running), and counting them
 * twice made a second lane's riding claim ask for too few. */
static void claim_copy(struct wq__store_thread *st, const struct wq__claim_req *req,
		       size_t extra)
{
	st->req = *req;
	wq__strlcpy(st->instance, req->instance, sizeof(st->instance));
	st->req.instance = st->instance;
	st->claim_busy = 1;
	st->asked = req->limit > (int)extra ? req->limit - (int)extra : 0;
}

void wq__st_batch(struct wq__store_thread *st, struct wq__job **js,
		  const struct wq__outcome **os, wq_rc *rcs, wq_error *errs, size_t n,
		  const struct wq__claim_req *req)
{
	if (req)
		claim_copy(st, req, n); /* asked for with n extra: wq__worker_claim_req */
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
}

void wq__st_claim(struct wq__store_thread *st, const struct wq__claim_req *req)
{
	claim_copy(st, req, 0);
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
}
