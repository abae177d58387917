/*
 * worker_prefetch.c — `prefetch` (issue 11, wave 4): a worker whose kinds all run
 * in-process may claim up to `prefetch` tasks beyond its free slots, so that one commit
 * carries more than `concurrency` claims and the store's commit rate stops being the
 * drain's ceiling. They wait here, in claim order, and start as slots free.
 *
 * Invariants (README "Prefetch", wakeq.conf(5)):
 *  - A prefetched task is claimed exactly like a running one (attempt, `claimed` and
 *    `started` events in the claim's transaction): a crash leaves it running under this
 *    instance and recovery makes it `interrupted` (worker-lost), never silently re-run.
 *  - Nothing is started before its claim committed (take() runs on the claim's answer).
 *  - At a drain (and at shutdown) the kept tasks never started are given back to pending
 *    by one store transaction (unclaim), fenced on their attempt, each with a
 *    `prefetch-returned` event; the attempt does not count against the task's limit.
 *  - With a command kind (wave 5) at most `concurrency` are kept: enough to refill every
 *    process slot once while the next commit flushes, so a slot freed by an exit starts
 *    the next handler at once instead of waiting for a claim's commit; more would only
 *    make kept tasks wait behind whole handler runs. A command job's slot is free once
 *    its handler exited and its output was read (its outcome may still be in a commit).
 */
#include "worker_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The most tasks kept: `prefetch`, at most `concurrency` when a kind this worker claims
 * runs a command (the claim's own table of in-process kinds; out of memory: none). */
static int prefetch_max(struct wq_worker *w)
{
	const int *ip = wq__worker_kinds_in_process(w);
	int max = w->cfg->prefetch;

	if (!ip || w->nkinds == 0)
		return 0;
	for (size_t i = 0; i < w->nkinds; i++)
		if (!ip[i])
			return max < w->concurrency ? max : w->concurrency;
	return max;
}

/* Handler slots in use: jobs whose handler has not returned (or whose slot was not
 * released: commands, or without prefetch). */
static int busy_slots(const struct wq_worker *w)
{
	return w->running - w->pf.released;
}

static size_t kept(const struct wq_worker *w)
{
	return w->pf.n - w->pf.head;
}

/* Tasks claimed and not started: kept, or in the claim answer being taken, or that the
 * claims in flight on the store's lanes may bring. */
static int pending(const struct wq_worker *w)
{
	return (int)(kept(w) + w->pf.incoming) + wq__st_asked(w);
}

int wq__prefetch_room(struct wq_worker *w, int riding)
{
	int max = prefetch_max(w), k = pending(w), share;

	/* Held beyond what prefetch allows (with prefetch 0: every task held unstarted):
	 * each takes a slot the caller counts as free, so the claim asks for that many
	 * fewer. Returning 0 here claimed one task per such slot twice: with prefetch 0,
	 * a riding claim's tasks were not yet started when the next batch's claim was
	 * asked for (pf.incoming), and the tasks it claimed beyond the slots waited,
	 * running and unstarted (tests/conformance/t_claim_free_slots.sh). */
	if (k >= max)
		return max - k;
	/* A claim in a commit of its own costs a commit (an fsync): only when the kept tasks
	 * would not even refill every slot once. A claim riding in an outcome batch's
	 * commit tops the queue up for free. */
	if (!riding && k >= w->concurrency)
		return 0;
	/* With several lanes (worker_store.c) a claim riding in an outcome batch asks for
	 * its share (rounded up), so that the next batch's claim, on another lane, finds
	 * room and commits while this one flushes; one claim for all of it would leave the
	 * other lanes only outcomes to record. A claim alone (a wake-up, a poll) takes
	 * all the room: nothing rides beside it yet. */
	if (!riding || w->nlanes < 2)
		return max - k;
	share = (max + w->nlanes - 1) / w->nlanes;
	return max - k < share ? max - k : share;
}

/* Keeps c (payload taken over); 0, or -1 without memory. */
static int keep(struct wq_worker *w, struct wq__claimed *c)
{
	struct wq__prefetch *p = &w->pf;
	struct wq__claimed *q;
	size_t cap;

	if (p->head > 0 && p->n == p->cap) { /* slide the started ones out */
		memmove(p->q, p->q + p->head, kept(w) * sizeof(*p->q));
		p->n -= p->head;
		p->head = 0;
	}
	if (p->n == p->cap) {
		cap = p->cap ? p->cap * 2 : 16;
		if (!(q = realloc(p->q, cap * sizeof(*q))))
			return -1;
		p->q = q;
		p->cap = cap;
	}
	p->q[p->n++] = *c;
	c->payload = NULL;
	return 0;
}

void wq__prefetch_take(struct wq_worker *w, struct wq__claimed *got, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* A slot free, or nowhere to keep it: started now (as without prefetch). */
		if (busy_slots(w) < w->concurrency || keep(w, &got[i]) != 0)
			wq__worker_start_job(w, &got[i]);
	}
	if (w->phase != WQ__PH_RUNNING) /* a drain began while this claim was in flight */
		wq__prefetch_give_back(w);
}

void wq__prefetch_next(struct wq_worker *w)
{
	struct wq__prefetch *p = &w->pf;

	while (kept(w) > 0 && busy_slots(w) < w->concurrency && w->phase == WQ__PH_RUNNING)
		wq__worker_start_job(w, &p->q[p->head++]);
	if (kept(w) == 0)
		p->head = p->n = 0;
}

void wq__prefetch_give_back(struct wq_worker *w)
{
	struct wq__prefetch *p = &w->pf;
	size_t n = kept(w), back = 0;
	wq_rc rc, *rcs;
	wq_error e;

	if (n == 0)
		return;
	if (!(rcs = calloc(n, sizeof(*rcs)))) {
		rc = wq__err(&e, WQ_ENOMEM, "out of memory");
	} else {
		WQ__STORE_RETRY(rc, w->db, unclaim, p->q + p->head, n, w->self.id, wq_now(), rcs,
				&e);
		for (size_t i = 0; rc == WQ_OK && i < n; i++)
			back += rcs[i] == WQ_OK;
	}
	if (rc == WQ_OK)
		wq__worker_log(w, "info",
			       "%zu prefetched task(s) never started: given back to pending "
			       "(%zu no longer this worker's)", back, n - back);
	else /* they stay running under this instance: recovery interrupts them once it is
	      * gone (worker-lost), visibly */
		wq__worker_log(w, "error",
			       "%zu prefetched task(s) never started could not be given back: "
			       "%s; once this instance is gone they are interrupted "
			       "(worker-lost)", n, e.message);
	free(rcs);
	for (size_t i = p->head; i < p->n; i++)
		free(p->q[i].payload);
	p->head = p->n = 0;
}

void wq__prefetch_free(struct wq_worker *w)
{
	for (size_t i = w->pf.head; i < w->pf.n; i++)
		free(w->pf.q[i].payload);
	free(w->pf.q);
	memset(&w->pf, 0, sizeof(w->pf));
}

void wq__prefetch_drop(struct wq_worker *w)
{
	size_t n = kept(w);

	if (n == 0)
		return;
	wq__worker_log(w, "warning",
		       "%zu prefetched task(s) never started: not started now (their attempts "
		       "belonged to the lost instance, whose recovery interrupted them)", n);
	for (size_t i = w->pf.head; i < w->pf.n; i++)
		free(w->pf.q[i].payload);
	w->pf.head = w->pf.n = 0;
}

void wq__prefetch_release(struct wq_worker *w, struct wq__job *j)
{
	if (j->slot_released || w->cfg->prefetch <= 0 || kept(w) == 0)
		return;
	j->slot_released = 1;
	w->pf.released++;
	wq__prefetch_next(w);
}

void wq__prefetch_settled(struct wq_worker *w, struct wq__job *j)
{
	if (j->slot_released)
		w->pf.released--;
}
