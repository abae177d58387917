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

/* Keeps o (deep copy) in j for later; 0 on success. */
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
	j->unrecorded = 1;
	return 0;
}

/*
 * Records o for job j (retrying WQ_EBUSY briefly); when the store does not take it (see
 * wq__outcome_keep) the outcome is kept and offered again by retry_unrecorded(). `note`
 * is extra log text.
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
	j->uncertain[0] = '\0';
	o->uncertain_out = j->uncertain;
	j->cancel_effect[0] = '\0';
	o->cancel_effect_out = j->cancel_effect;

	WQ__STORE_RETRY(rc, w->db, finish, o, &e);
	if (wq__outcome_keep(rc) && save_outcome(j, o) == 0) {
		wq__worker_log(w, "warning",
		     "task %" PRId64 " attempt %s %s, but the store did not take the outcome "
		     "(%s); it is kept and recorded once the store takes writes again",
		     j->t.id, j->attempt_id, j->what, e.message);
		return;
	}
	settle_job(w, j, rc, &e);
}

/* Offers kept outcomes (tasks and deliveries) to the store again (poll and heartbeat
 * ticks). With `give_up` (the drain's deadline) the ones the store still does not take
 * are logged and dropped: recovery will interrupt those tasks (worker-lost) and retry
 * those deliveries (delivery-uncertain), so the uncertainty stays visible. */
void wq__worker_retry_unrecorded(struct wq_worker *w, int give_up)
{
	struct wq__job *j = w->jobs, *next;
	wq_error e;
	wq_rc rc;

	for (; j; j = next) {
		next = j->next;
		if (!j->unrecorded)
			continue;
		rc = WQ__STORE(w->db, finish, &j->saved, &e);
		if (wq__outcome_keep(rc) && !give_up) {
			wq__worker_store_failed_how(w, "recording a kept outcome", &e, 1);
			if (w->phase == WQ__PH_CLOSING)
				return;
			continue;
		}
		settle_job(w, j, rc, &e);
	}
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
	wq__outcome_decide(&f, &p, wq_now(), wq__random_unit(), &d);
	wq__worker_finish_job(j->w, j, &d.o, NULL);
}
