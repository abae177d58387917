/*
 * worker_record.c — recording the outcomes of the worker's handlers (SPEC §3, §4): the
 * outcome in words for the log, the store call, the outcomes the store did not take (kept
 * in memory and offered again), and how each recorded, refused or given-up outcome
 * settles its job. Runs on the loop thread, like everything in worker.c.
 *
 * Invariants:
 *  - An outcome is reported (logged as recorded) and its job leaves its slot only after
 *    the store answered for it: recorded, refused by fencing (WQ_ESTALE), or given up.
 *  - An outcome the store did not take (wq__outcome_keep) is kept with copies of all it
 *    points to, never lost and never re-run.
 */
#include "worker_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *finish_name(enum wq__finish_kind k)
{
	switch (k) {
	case WQ__FINISH_SUCCEEDED: return "succeeded";
	case WQ__FINISH_RETRY: return "retry";
	case WQ__FINISH_FAILED: return "failed";
	case WQ__FINISH_INTERRUPTED: return "interrupted";
	case WQ__FINISH_CANCELLED: return "cancelled";
	}
	return "?";
}


/* One printable line of handler stderr for the log: its last line, truncated. */
void wq__worker_stderr_summary(const struct wq__spawn_result *r, int with_line, char *buf,
			       size_t sz)
{
	const char *s, *e;
	size_t n, k = 0;
	char line[128];

	buf[0] = '\0';
	if (r->err_total == 0)
		return;
	if (!with_line || !r->err || r->err_len == 0) {
		snprintf(buf, sz, "; stderr %zu bytes", r->err_total);
		return;
	}
	e = r->err + r->err_len;
	while (e > r->err && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	s = e;
	while (s > r->err && s[-1] != '\n')
		s--;
	n = (size_t)(e - s);
	for (size_t i = 0; i < n && k < sizeof(line) - 4; i++)
		line[k++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '"') ? '?' : s[i];
	if (k < n)
		line[k++] = '.', line[k++] = '.', line[k++] = '.';
	line[k] = '\0';
	snprintf(buf, sz, "; stderr %zu bytes, last line \"%s\"", r->err_total, line);
}

static void describe(const struct wq__job *j, const struct wq__outcome *o, char *what,
		     size_t sz)
{
	char when[WQ_TIME_BUFSZ];

	switch (o->kind) {
	case WQ__FINISH_SUCCEEDED:
		if (o->outcome)
			snprintf(what, sz, "succeeded (%s)", o->outcome);
		else if (o->result)
			snprintf(what, sz, "succeeded (result %zu bytes)", o->result_len);
		else
			snprintf(what, sz, "succeeded (no result)");
		break;
	case WQ__FINISH_RETRY:
		snprintf(what, sz, "failed (%s%s%s); retry %d/%d at %s", o->reason,
			 o->reason_detail ? "; " : "", o->reason_detail ? o->reason_detail : "",
			 j->t.attempt + 1, j->max_attempts, wq_time_format(o->retry_at, when));
		break;
	case WQ__FINISH_CANCELLED:
		snprintf(what, sz, "cancelled (handler confirmed it stopped)");
		break;
	default:
		snprintf(what, sz, "%s: %s%s%s", finish_name(o->kind), o->reason,
			 o->reason_detail ? "; " : "", o->reason_detail ? o->reason_detail : "");
		break;
	}
}

/* Logs how the store took j's outcome, forgets the job, and moves the worker on. */
static void settle_job(struct wq_worker *w, struct wq__job *j, wq_rc rc, const wq_error *e)
{
	enum wq__finish_kind k = j->saved.kind;

	if (rc == WQ_OK)
		wq__worker_store_wrote(w);
	if (rc == WQ_OK && j->uncertain[0]) {
		wq__worker_log(w, "warning",
		     "task %" PRId64 " attempt %s interrupted: uncertain-effect %s (it found the "
		     "effect begun by an earlier attempt, never confirmed); the handler reported: "
		     "%s%s",
		     j->t.id, j->attempt_id, j->uncertain, j->what, j->note);
	} else if (rc == WQ_OK && j->cancel_effect[0]) {
		wq__worker_log(w, "warning",
		     "task %" PRId64 " attempt %s interrupted: cancelled-while-running (effect %s "
		     "begun, not confirmed); the handler reported: %s%s",
		     j->t.id, j->attempt_id, j->cancel_effect, j->what, j->note);
	} else if (rc == WQ_OK) {
		wq__worker_log(w, k == WQ__FINISH_SUCCEEDED || k == WQ__FINISH_CANCELLED ||
				k == WQ__FINISH_RETRY ? "info" : "warning",
		     "task %" PRId64 " attempt %s %s%s", j->t.id, j->attempt_id, j->what, j->note);
	} else if (rc == WQ_ESTALE) {
		wq__worker_log(w, "warning",
		     "task %" PRId64 " attempt %s lost: it no longer owns the task (instance %s); "
		     "outcome \"%s\" not recorded",
		     j->t.id, j->attempt_id, j->instance, j->what);
	} else {
		/* Given up (the drain's deadline, no memory to keep it, a definite refusal):
		 * once this instance is unregistered, recovery interrupts the task
		 * (worker-lost), so the uncertainty stays visible. */
		wq__worker_log(w, "error",
		     "task %" PRId64 " attempt %s: outcome \"%s\" NOT recorded: %s (the task "
		     "stays running until a recovery finds this worker gone and interrupts it)",
		     j->t.id, j->attempt_id, j->what, e->message);
	}
	wq__worker_job_gone(w, j);
}

/* Keeps o (deep copy) in j->saved until the store took it; 0 on success. */
static int save_outcome(struct wq__job *j, const struct wq__outcome *o)
{
	j->saved = *o;
	if (o->result) {
		if (!(j->saved_result = malloc(o->result_len ? o->result_len : 1)))
			return -1;
		memcpy(j->saved_result, o->result, o->result_len);
		j->saved.result = j->saved_result;
	}
	if (o->reason)
		j->saved.reason = strcpy(j->saved_reason, o->reason);
	if (o->reason_detail)
		j->saved.reason_detail = strcpy(j->saved_detail, o->reason_detail);
	if (o->result_sha256)
		j->saved.result_sha256 = strcpy(j->saved_sha, o->result_sha256);
	return 0;
}

/* How the outcomes of one batch are offered. */
enum offer {
	OFFER_FIRST,   /* just decided: WQ_EBUSY retried briefly; kept ones are logged once */
	OFFER_AGAIN,   /* kept ones, offered again (quietly) */
	OFFER_GIVE_UP, /* the drain's deadline: what the store still refuses is dropped */
};

/* The answer for job j: kept for later (the store did not take it), or settled. */
static void answer(struct wq_worker *w, struct wq__job *j, wq_rc rc, const wq_error *e,
		   enum offer how)
{
	if (!wq__outcome_keep(rc) || how == OFFER_GIVE_UP) {
		settle_job(w, j, rc, e);
		return;
	}
	if (how == OFFER_FIRST)
		wq__worker_log(w, "warning",
		     "task %" PRId64 " attempt %s %s, but the store did not take the outcome "
		     "(%s); it is kept and recorded once the store takes writes again",
		     j->t.id, j->attempt_id, j->what, e->message);
	j->unrecorded = 1;
}

/* Each job's outcome is offered afresh: its out fields cleared, its flags reset. */
static void batch_prepare(struct wq__job **js, const struct wq__outcome **os, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		js[i]->queued = 0;
		js[i]->unrecorded = 0;
		js[i]->uncertain[0] = js[i]->cancel_effect[0] = '\0';
		js[i]->saved.uncertain_out = js[i]->uncertain;
		js[i]->saved.cancel_effect_out = js[i]->cancel_effect;
		if (os)
			os[i] = &js[i]->saved;
	}
}

/* The store's answers for the jobs js (rc: the batch's, e: its error); frees nothing. */
static void answers(struct wq_worker *w, struct wq__job **js, const wq_rc *rcs,
		    const wq_error *errs, size_t n, wq_rc rc, const wq_error *e, enum offer how)
{
	wq_error first = *e;
	size_t i, kept = 0;

	for (i = 0; i < n; i++) {
		if (wq__outcome_keep(rcs[i]) && how != OFFER_GIVE_UP && !kept++ && rc == WQ_OK)
			first = errs[i]; /* the first kept one's error, for the log */
		answer(w, js[i], rcs[i], &errs[i], how);
	}
	if (kept && how == OFFER_AGAIN && w->phase != WQ__PH_CLOSING)
		wq__worker_store_failed_how(w, "recording a kept outcome", &first, 1);
}

static void record_queued(struct wq_worker *w);

void wq__record_answer(struct wq_worker *w, struct wq__job **js,
		       const struct wq__outcome **os, wq_rc *rcs, wq_error *errs, size_t n,
		       wq_rc rc, const wq_error *e)
{
	answers(w, js, rcs, errs, n, rc, e, OFFER_FIRST);
	free(js);
	free(os);
	free(rcs);
	free(errs);
	/* Outcomes that arrived during that commit: the next batch. */
	if (w->phase != WQ__PH_CLOSING)
		record_queued(w);
}

/*
 * Records the outcomes of the n jobs js (an array taken over) in ONE store transaction
 * (finish_batch): the group commit of SPEC §3's outcomes. Nothing is logged as recorded
 * and no job leaves its slot before that commit answered; a refusal (WQ_ESTALE: fenced
 * off) is that job's only. A first offer goes to a store lane when there is one (the
 * answer comes back in wq__record_answer); without memory for a batch, each outcome is
 * recorded on its own.
 */
static void record_jobs(struct wq_worker *w, struct wq__job **js, size_t n, enum offer how)
{
	struct wq__store_thread *st;
	const struct wq__outcome **os = malloc(n * sizeof(*os));
	wq_error *errs = malloc(n * sizeof(*errs)), e;
	wq_rc *rcs = malloc(n * sizeof(*rcs)), rc = WQ_OK;
	size_t i;

	batch_prepare(js, os, n);
	if (!os || !errs || !rcs) {
		for (i = 0; i < n; i++) { /* no memory for a batch: one at a time */
			WQ__STORE_RETRY(rc, w->db, finish, &js[i]->saved, &e);
			answer(w, js[i], rc, &e, how);
		}
		goto out;
	}
	if (how == OFFER_FIRST && (st = wq__st_for_batch(w, n)) != NULL) {
		/* The next claim rides in the same transaction: one commit serves both. */
		struct wq__claim_req req;
		int with = 0;

		if (st->claim_busy)
			w->claim_missed = 1; /* this lane claims already: again after it */
		else
			with = wq__worker_claim_req(w, (int)n, &req);
		wq__st_batch(st, js, os, rcs, errs, n, with ? &req : NULL);
		return; /* the lane owns the arrays until its answer */
	}
	wq__failpoint("finish"); /* the crash tests' name for recording outcomes */
	if (how == OFFER_FIRST)
		WQ__STORE_RETRY(rc, w->db, finish_batch, os, n, rcs, errs, NULL, NULL, NULL, &e);
	else
		rc = WQ__STORE(w->db, finish_batch, os, n, rcs, errs, NULL, NULL, NULL, &e);
	if (rc == WQ_OK) /* the crash tests' stop: committed, nothing reported yet */
		wq__failpoint("outcome-committed");
	answers(w, js, rcs, errs, n, rc, &e, how);
out:
	free(js);
	free(os);
	free(errs);
	free(rcs);
}

/* Whether job j is one jobs_with() takes: queued, or unrecorded and not queued. */
static int job_is(const struct wq__job *j, int queued)
{
	return queued ? j->queued : j->unrecorded && !j->queued;
}

static size_t jobs_count(const struct wq_worker *w, int queued)
{
	size_t k = 0;

	for (const struct wq__job *j = w->jobs; j; j = j->next)
		k += (size_t)job_is(j, queued);
	return k;
}

/* The k jobs (jobs_count) with `flag` set (see job_is); NULL when none (or out of
 * memory: they stay for the next call). */
static struct wq__job **jobs_with(struct wq_worker *w, int queued, size_t k, size_t *n)
{
	struct wq__job **js, *j;

	*n = 0;
	if (k == 0 || !(js = malloc(k * sizeof(*js))))
		return NULL;
	for (j = w->jobs; j; j = j->next)
		if (job_is(j, queued))
			js[(*n)++] = j;
	return js;
}

/* The outcomes that arrived in this loop turn, in one transaction. */
static void record_queued(struct wq_worker *w)
{
	size_t n, k;
	struct wq__job **js;

	uv_check_stop(&w->record_check);
	uv_idle_stop(&w->record_idle);
	/* counted before the array is made: while the lanes are busy this runs every
	 * loop turn that queues an outcome */
	k = jobs_count(w, 1);
	if (w->nlanes && !wq__st_for_batch(w, k))
		return; /* queued: sent when a batch in flight is answered */
	if ((js = jobs_with(w, 1, k, &n)) != NULL)
		record_jobs(w, js, n, OFFER_FIRST);
}

static void on_record_check(uv_check_t *h)
{
	record_queued(h->data);
}

/* An active idle handle keeps the loop from blocking in poll while outcomes wait. */
static void on_record_idle(uv_idle_t *h)
{
}

void wq__record_init(struct wq_worker *w)
{
	uv_check_init(&w->loop, &w->record_check);
	uv_idle_init(&w->loop, &w->record_idle);
	w->record_check.data = w->record_idle.data = w;
}

/*
 * Queues o for job j: recorded with every other outcome that arrives in this loop turn, in
 * one transaction, right after the loop's poll phase (uv_check); when the store does not
 * take it (see wq__outcome_keep) it is kept and offered again by retry_unrecorded().
 * `note` is extra log text.
 */
void wq__worker_finish_job(struct wq_worker *w, struct wq__job *j, struct wq__outcome *o,
		       const char *note)
{
	wq_error e;
	wq_rc rc;

	o->task_id = j->t.id;
	o->attempt = j->t.attempt;
	o->instance = j->instance;
	o->now = wq_now();
	describe(j, o, j->what, sizeof(j->what));
	snprintf(j->note, sizeof(j->note), "%s", note ? note : "");
	j->saved.kind = o->kind;
	if (save_outcome(j, o) != 0) {
		/* No memory to keep it: record it now, once; given up if refused. */
		j->uncertain[0] = j->cancel_effect[0] = '\0';
		o->uncertain_out = j->uncertain;
		o->cancel_effect_out = j->cancel_effect;
		WQ__STORE_RETRY(rc, w->db, finish, o, &e);
		settle_job(w, j, rc, &e);
		return;
	}
	j->queued = 1;
	uv_check_start(&w->record_check, on_record_check);
	uv_idle_start(&w->record_idle, on_record_idle);
	wq__prefetch_release(w, j); /* its handler slot to a prefetched task */
	wq__failpoint("outcome-queued"); /* (a test knows it is in the next batch) */
}

/* Offers queued and kept outcomes (tasks and deliveries) to the store (poll and heartbeat
 * ticks). With `give_up` (the drain's deadline) the ones the store still does not take
 * are logged and dropped: recovery will interrupt those tasks (worker-lost) and retry
 * those deliveries (delivery-uncertain), so the uncertainty stays visible. */
void wq__worker_retry_unrecorded(struct wq_worker *w, int give_up)
{
	struct wq__job **js;
	size_t n;

	record_queued(w);
	if (w->phase == WQ__PH_CLOSING)
		return;
	if ((js = jobs_with(w, 0, jobs_count(w, 0), &n)) != NULL)
		record_jobs(w, js, n, give_up ? OFFER_GIVE_UP : OFFER_AGAIN);
	if (w->phase != WQ__PH_CLOSING)
		wq__deliver_retry_unrecorded(w->dl, give_up);
}

/* The kind's policy for job j (outcome.h). */
void wq__worker_job_policy(const struct wq__job *j, struct wq__run_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->attempt = j->t.attempt;
	p->max_attempts = j->max_attempts;
	if (j->kind) {
		p->backoff_base = j->kind->retry_backoff;
		p->backoff_max = j->kind->retry_backoff_max;
		p->timeout = j->kind->timeout;
		p->on_interrupt_retry = j->kind->on_interrupt == WQ__ON_INTERRUPT_RETRY;
		p->failure_retries = j->kind->failure_retries;
	}
}

/* The handler of job j could not be started (nothing ran): failed, spawn-failed; or, when
 * the worker ran out of resources, pending again after the backoff (spawn-resources). */
void wq__worker_spawn_failed(struct wq__job *j, const char *why, int resources)
{
	struct wq__run_facts f;
	struct wq__run_policy p;
	struct wq__decided d;

	memset(&f, 0, sizeof(f));
	f.spawn_failed = 1;
	f.spawn_resources = resources;
	f.spawn_error = why;
	f.exit_status = -1;
	wq__worker_job_policy(j, &p);
	wq__outcome_decide(&f, &p, wq_now(), WQ__RND_LAZY, &d);
	wq__worker_finish_job(j->w, j, &d.o, NULL);
}
