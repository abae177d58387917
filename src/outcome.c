/* outcome.c — exit status → outcome (SPEC §4) and the on_interrupt=retry policy; pure
 * functions, see outcome.h. */
#include "outcome.h"

#include <stdio.h>
#include <string.h>

int64_t wq__outcome_retry_at(const struct wq__run_policy *p, int64_t now, double rnd)
{
	if (rnd < 0) /* WQ__RND_LAZY */
		rnd = wq__random_unit();
	return now + wq__backoff(p->backoff_base, p->backoff_max, p->attempt, rnd);
}

/* Appends "; "-separated text to d->detail. */
static void detail_add(struct wq__decided *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void detail_add(struct wq__decided *d, const char *fmt, ...)
{
	size_t len = strlen(d->detail);
	va_list ap;

	if (len && len + 2 < sizeof(d->detail)) {
		memcpy(d->detail + len, "; ", 3);
		len += 2;
	}
	if (len >= sizeof(d->detail) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(d->detail + len, sizeof(d->detail) - len, fmt, ap);
	va_end(ap);
}

/* Retry while attempts remain, else fail naming the exhaustion. */
static void retry_or_fail(const struct wq__run_policy *p, int64_t now, double rnd,
			  struct wq__decided *d)
{
	if (p->attempt < p->max_attempts) {
		d->o.kind = WQ__FINISH_RETRY;
		d->o.retry_at = wq__outcome_retry_at(p, now, rnd);
	} else {
		d->o.kind = WQ__FINISH_FAILED;
		detail_add(d, "attempts exhausted (%d/%d)", p->attempt, p->max_attempts);
	}
}

/* The worker stopped the handler and it did not say it stopped cleanly (75): what it
 * did is unknown, so the attempt is interrupted with the worker's reason. Only the
 * runtime limit falls under on_interrupt=retry here: a cancel asked for the task to end
 * and a drain-deadline task is for the next worker's recovery to see. */
static void stopped_by_worker(const struct wq__run_facts *f, const struct wq__run_policy *p,
			      int64_t now, double rnd, struct wq__decided *d)
{
	char how[64], t[32];

	if (f->inproc && f->inproc_abandoned)
		snprintf(how, sizeof(how), "in-process handler did not return within kill_grace");
	else if (f->inproc)
		snprintf(how, sizeof(how), "in-process handler returned %s after the stop",
			 f->inproc_ret == WQ_JOB_FAIL ? "FAIL" : "RETRY");
	else if (f->term_signal)
		snprintf(how, sizeof(how), "signal %d", f->term_signal);
	else
		snprintf(how, sizeof(how), "exit %d after SIGTERM", f->exit_status);
	d->o.kind = WQ__FINISH_INTERRUPTED;
	if (f->stop == WQ__STOP_CANCEL) {
		snprintf(d->reason, sizeof(d->reason), "killed");
		detail_add(d, "cancel requested");
	} else if (f->stop == WQ__STOP_DRAIN) {
		snprintf(d->reason, sizeof(d->reason), "drain-deadline");
		detail_add(d, "%s", how);
	} else if (f->stop == WQ__STOP_LOST) {
		snprintf(d->reason, sizeof(d->reason), "worker-lost");
		detail_add(d, "stopped: instance declared lost; %s", how);
	} else {
		snprintf(d->reason, sizeof(d->reason), "runtime-limit");
		detail_add(d, "timeout %s exceeded; %s",
			   wq_duration_format(p->timeout, t, sizeof(t)), how);
		if (p->on_interrupt_retry)
			retry_or_fail(p, now, rnd, d);
	}
}

/*
 * An in-process handler's return value is read as the exit status it stands for
 * (SUCCEEDED 0, DISCARDED 3, RETRY and CANCELLED 75, FAIL 1), so the table below is the
 * only one. Two differences: a return value is always the handler's own word (no signal),
 * and RETRY is not CANCELLED — only CANCELLED promises that no effect happened, so only
 * it ends a cancel requested while it ran as `cancelled`; RETRY after any stop by the
 * worker is the "unknown" case (interrupted with the stop's reason). An abandoned handler
 * is the SIGKILL case.
 */
static void inproc_as_exit(const struct wq__run_facts *f, struct wq__run_facts *g)
{
	*g = *f;
	g->term_signal = 0;
	switch (f->inproc_ret) {
	case WQ_JOB_SUCCEEDED: g->exit_status = 0; break;
	case WQ_JOB_DISCARDED: g->exit_status = 3; break;
	case WQ_JOB_CANCELLED: g->exit_status = 75; break;
	case WQ_JOB_RETRY:
		g->exit_status = g->stop == WQ__STOP_CANCEL ? 1 : 75;
		break;
	default: g->exit_status = 1; break;
	}
	if (f->inproc_abandoned)
		g->exit_status = -1;
}

/* The reason of an in-process RETRY/CANCELLED/FAIL that was not stopped by the worker. */
static const char *inproc_reason(const struct wq__run_facts *f)
{
	switch (f->inproc_ret) {
	case WQ_JOB_RETRY: return "handler-retry";
	case WQ_JOB_CANCELLED: return "handler-cancelled";
	default: return "handler-failed";
	}
}

/*
 * The handler's own word wins when it gives one, even after the worker asked it to stop:
 * 0 and 3 mean it finished (a result is never thrown away), 75 means it stopped before
 * any effect (→ cancelled after a cancel request, else retry while attempts remain).
 * Anything else after a stop by the worker leaves the outcome unknown (interrupted). A
 * signal nobody here sent is interrupted "killed". Kinds with on_interrupt=retry turn
 * runtime-limit and killed into a retry while attempts remain.
 */
void wq__outcome_decide(const struct wq__run_facts *f, const struct wq__run_policy *p,
			int64_t now, double rnd, struct wq__decided *d)
{
	struct wq__run_facts g;
	int st, sig, by_us;

	if (f->inproc) {
		inproc_as_exit(f, &g);
		f = &g;
	}
	st = f->exit_status;
	sig = f->term_signal;
	by_us = f->stop != WQ__STOP_NONE || f->timed_out;
	memset(d, 0, sizeof(*d));
	d->o.exit_status = sig ? -1 : st;
	d->o.signal = sig;

	if (f->version_refused) { /* issue 10: never run it, never retry it */
		const char *m = f->spawn_error ? f->spawn_error : "";

		d->o.kind = WQ__FINISH_FAILED;
		snprintf(d->reason, sizeof(d->reason), "unsupported-payload-version");
		snprintf(d->detail, sizeof(d->detail), "%.*s", (int)strcspn(m, "\n"), m);
	} else if (f->spawn_failed) {
		const char *m = f->spawn_error ? f->spawn_error : "";

		d->o.kind = WQ__FINISH_FAILED;
		snprintf(d->reason, sizeof(d->reason), "spawn-failed");
		snprintf(d->detail, sizeof(d->detail), "%.*s", (int)strcspn(m, "\n"), m);
		if (f->spawn_resources) {
			d->o.kind = WQ__FINISH_RETRY;
			snprintf(d->reason, sizeof(d->reason), "spawn-resources");
			d->o.retry_at = wq__outcome_retry_at(p, now, rnd);
		}
	} else if (!sig && st == 0 && f->result_too_large) {
		d->o.kind = WQ__FINISH_FAILED;
		snprintf(d->reason, sizeof(d->reason), "result-too-large");
		/* never truncated: the result is not stored at all (issue 10) */
		detail_add(d, "%s was %zu bytes; %s is %zu bytes",
			   f->inproc ? "the result" : "stdout", f->out_total,
			   f->result_limit ? f->result_limit : "result_max", f->result_max);
	} else if (!sig && st == 0) {
		d->o.kind = WQ__FINISH_SUCCEEDED;
	} else if (!sig && st == 3) {
		d->o.kind = WQ__FINISH_SUCCEEDED;
		d->o.outcome = "discarded";
	} else if (!sig && st == 75) {
		if (f->stop == WQ__STOP_CANCEL) {
			d->o.kind = WQ__FINISH_CANCELLED;
		} else {
			snprintf(d->reason, sizeof(d->reason), "%s",
				 f->inproc ? inproc_reason(f) : "exit-75");
			retry_or_fail(p, now, rnd, d);
		}
	} else if (by_us) {
		stopped_by_worker(f, p, now, rnd, d);
	} else if (f->inproc && f->inproc_abandoned) { /* not reached: only a stop abandons */
		d->o.kind = WQ__FINISH_INTERRUPTED;
		snprintf(d->reason, sizeof(d->reason), "killed");
	} else if (f->inproc) {
		d->o.kind = WQ__FINISH_FAILED;
		snprintf(d->reason, sizeof(d->reason), "%s", inproc_reason(f));
	} else if (sig) {
		d->o.kind = WQ__FINISH_INTERRUPTED;
		snprintf(d->reason, sizeof(d->reason), "killed");
		detail_add(d, "signal %d", sig);
		if (p->on_interrupt_retry)
			retry_or_fail(p, now, rnd, d);
	} else {
		d->o.kind = WQ__FINISH_FAILED;
		snprintf(d->reason, sizeof(d->reason), "exit-%d", st);
		if (p->failure_retries) /* a mailbox message's handout: it comes back */
			retry_or_fail(p, now, rnd, d);
	}
	if (f->inproc)
		d->o.exit_status = -1; /* no process: the attempts row shows none */
	d->o.reason = d->reason[0] ? d->reason : NULL;
	d->o.reason_detail = d->detail[0] ? d->detail : NULL;
}

wq_resolution wq__outcome_interrupt_policy(int attempts, int max_attempts, const char *reason,
					   char *note, size_t note_sz)
{
	const char *why = reason && *reason ? reason : "interrupted";

	if (attempts < max_attempts) {
		snprintf(note, note_sz, "on_interrupt=retry: %s; attempt %d/%d done, retrying", why,
			 attempts, max_attempts);
		return WQ_RESOLVE_RETRY;
	}
	snprintf(note, note_sz, "on_interrupt=retry: %s; attempts exhausted (%d/%d)", why,
		 attempts, max_attempts);
	return WQ_RESOLVE_FAILED;
}

int wq__outcome_keep(wq_rc rc)
{
	switch (rc) {
	case WQ_OK:
	case WQ_ESTALE:
	case WQ_ESTATE:
	case WQ_ENOTFOUND:
	case WQ_EINVAL:
	case WQ_ETOOBIG:
	case WQ_ECONFLICT:
		return 0;
	default:
		return 1;
	}
}
