/*
 * outcome.h — what one attempt's end means (SPEC §4): the handler exit table and the
 * `on_interrupt = retry` policy, written once, as pure functions (no I/O, no libuv, no
 * clock, no randomness of their own: `now` and the random draw are arguments), so that
 * every row of the table is a unit test (tests/unit/test_outcome.c).
 *
 * The worker (worker.c) gathers the facts of a finished spawn, calls wq__outcome_decide
 * and records what it decided; it adds the result bytes itself.
 */
#ifndef WQ_OUTCOME_H
#define WQ_OUTCOME_H

#include "internal.h"

/* Why the worker itself stopped the handler (SIGTERM, SIGKILL after kill_grace). LOST: its
 * attempt belongs to an instance id that was declared lost; the store refuses its outcome
 * (stale-outcome), so what is decided for it only reaches the log. */
enum wq__stop_why { WQ__STOP_NONE = 0, WQ__STOP_CANCEL, WQ__STOP_DRAIN, WQ__STOP_LOST };

/* What happened to one attempt, as the worker saw it. Borrowed pointers. */
struct wq__run_facts {
	/* The handler never ran: no kind configured, the program not found, its
	 * exec refused. `spawn_error` is the first line of why (may be NULL). */
	int spawn_failed;
	/* The kind does not accept the task's payload version (issue 10, payload_versions):
	 * nothing ran; `spawn_error` says which version and which are accepted. */
	int version_refused;
	/* With spawn_failed: the worker was out of descriptors, processes or memory. The
	 * task is not at fault, so it is pending again after the backoff whatever attempts
	 * are left (the attempt number still advances: it is the fencing token). */
	int spawn_resources;
	const char *spawn_error;
	int exit_status;          /* when term_signal == 0; -1 when nothing ran */
	int term_signal;          /* 0 unless the handler was killed by a signal */
	int timed_out;            /* the runtime limit fired and the worker stopped it */
	enum wq__stop_why stop;   /* the worker stopped it for a cancel or the drain */
	int result_too_large;     /* stdout was beyond result_max */
	size_t out_total;         /* stdout bytes seen (for the detail) */
	size_t result_max;
	const char *result_limit; /* the limit's name for the detail; NULL: "result_max" */
	/* An in-process handler (wq_worker_register): its return value (wq_job_result) in
	 * place of an exit status (exit_status and term_signal are then unused), or, with
	 * inproc_abandoned, none: asked to stop, it had not returned after kill_grace (the
	 * counterpart of the SIGKILL a command handler would get). */
	int inproc;
	int inproc_ret;
	int inproc_abandoned;
};

/* The kind's policy for this attempt. */
struct wq__run_policy {
	int attempt;              /* 1-based number of the attempt that ended */
	int max_attempts;         /* the kind's value, else the task's */
	int64_t backoff_base;     /* µs */
	int64_t backoff_max;      /* µs; 0 = no cap */
	int64_t timeout;          /* the kind's runtime limit, µs (for the detail) */
	int on_interrupt_retry;   /* the kind declared its effects safe to repeat */
	int failure_retries;      /* a failing exit status is retried like 75 (intake) */
};

/*
 * The decision. d->o.reason and d->o.reason_detail point into d's own buffers (or are
 * NULL), so a decision must not be copied by value while they are used. Only kind,
 * reason, reason_detail, outcome, exit_status, signal and retry_at of d->o are set; the
 * rest of d->o is zero.
 */
struct wq__decided {
	struct wq__outcome o;
	char reason[WQ_REASON_MAX + 1];
	char detail[WQ_DETAIL_MAX + 1];
};

/* Fills d from the facts and the policy. `now` is the time of the decision (µs) and
 * `rnd` a draw in [0,1) for the backoff's jitter, or WQ__RND_LAZY: drawn (getrandom)
 * only when the decision is a retry, so a success costs no system call (wave5 drain). */
#define WQ__RND_LAZY (-1.0)
void wq__outcome_decide(const struct wq__run_facts *f, const struct wq__run_policy *p,
			int64_t now, double rnd, struct wq__decided *d);

/* When the next attempt may start after failed attempt `attempt`: now + the kind's
 * exponential backoff with ±25 % jitter (backoff.c). */
int64_t wq__outcome_retry_at(const struct wq__run_policy *p, int64_t now, double rnd);

/*
 * `on_interrupt = retry` for a task found `interrupted` (by recovery: worker-lost, ...):
 * WQ_RESOLVE_RETRY while attempts remain, else WQ_RESOLVE_FAILED, with the note for the
 * timeline written into note[0..note_sz). `reason` is the task's reason ("" or NULL:
 * "interrupted").
 */
wq_resolution wq__outcome_interrupt_policy(int attempts, int max_attempts, const char *reason,
					   char *note, size_t note_sz);

/*
 * 1 when an outcome (of a task or a delivery) that the store did not take with `rc` must
 * be kept in memory and offered again: every failure except a definite answer about
 * the outcome itself (WQ_ESTALE: the attempt no longer owns it; WQ_ESTATE, WQ_ENOTFOUND:
 * the row moved on or is gone; WQ_EINVAL, WQ_ETOOBIG, WQ_ECONFLICT: this outcome can
 * never be written). A full disk, a lost connection, a busy or even a corrupt store are
 * not answers: the handler ran, and what it reported is never thrown away while the
 * worker lives, nor is the handler run again.
 */
int wq__outcome_keep(wq_rc rc);

#endif /* WQ_OUTCOME_H */
