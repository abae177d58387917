/*
 * job.h — in-process handlers (wq_worker_register): the job context a handler sees
 * (job.c) and the worker's own thread pool that runs handlers (pool.c).
 *
 * Threads: the worker's loop thread creates a job, submits it to the pool and never
 * touches the handler-written fields until the pool hands the job back (on_done, on the
 * loop thread). The handler thread reads the read-only part and writes result/ret. The
 * two meet only under the pool's mutex, and through `stop` (atomic).
 *
 * The store handle is not thread-safe, so journal calls from a handler
 * (wq_job_effect_begin/done) are marshalled: the handler thread queues the call and
 * waits; the loop thread (woken through notify.h) runs it on its own store handle and
 * wakes the caller.
 * The loop thread never waits for a handler thread.
 */
#ifndef WQ_JOB_H
#define WQ_JOB_H

#include "internal.h"

#include <stdatomic.h>
#include <uv.h>

struct wq__pool;

enum wq__job_state {
	WQ__JOB_QUEUED = 0, /* submitted, no thread yet */
	WQ__JOB_RUNNING,    /* a thread runs the handler */
	WQ__JOB_DONE,       /* returned; waiting for (or handed to) the loop */
	WQ__JOB_ABANDONED,  /* recorded without it (past kill_grace); its thread frees it */
};

struct wq_job {
	/* Set by the loop before submit, read-only afterwards. */
	wq_job_fn fn;
	void *ud;
	char *payload;              /* owned; payload_len bytes (+ NUL) */
	size_t payload_len;
	int64_t task_id;
	int attempt;
	int payload_version;
	int64_t deadline;           /* 0: no runtime limit */
	size_t result_max;
	char result_limit[WQ_NAME_MAX + 40]; /* its name (policy.c), for messages */
	char attempt_id[48];
	char kind[WQ_KIND_MAX + 1];
	char operation[WQ_KEY_MAX + 1];
	char tenant[WQ_NAME_MAX + 1];
	char scope[WQ_NAME_MAX + 1];
	int keyed;                  /* the operation's key was the caller's (not generated) */
	/* wave6 sqcpu: the idempotency key, computed on the first wq_job_idempotency_key
	 * (a SHA-256, ~11k instructions, that most handlers never ask for). idem_state: 0
	 * not yet, 1 being computed by one caller, 2 idem holds it (release/acquire). */
	char idem[WQ_IDEMPOTENCY_KEY_BUFSZ];
	atomic_int idem_state;
	void *owner;                /* the worker's record of the attempt (loop side only) */

	/* Written by the loop, read by the handler: a wq_job_stop, 0 while it may go on. */
	atomic_int stop;

	/* Written by the handler thread; read by the loop only after on_done. */
	char *result;               /* owned; NULL: none */
	size_t result_len;
	size_t result_total;        /* the size of the largest result offered */
	int result_too_large;
	wq_job_result ret;
	void *followups;            /* json_t array of wq_job_followup calls, or NULL */

	/* Under the pool's mutex. */
	struct wq__pool *pool;
	enum wq__job_state state;
	struct wq_job *qnext;
};

/* Frees a job and everything it owns (NULL is fine). */
void wq__job_free(struct wq_job *job);

/* Called on the loop thread for every job whose handler returned (not for abandoned
 * ones). The callee owns the job from then on. */
typedef void (*wq__pool_done_cb)(struct wq_job *job, void *ud);

/* Starts `nthreads` handler threads and the loop-side async handle on `loop`. Journal
 * calls run on `db` (the loop's handle). */
wq_rc wq__pool_new(uv_loop_t *loop, wq_db *db, int nthreads, wq__pool_done_cb on_done,
		   void *ud, struct wq__pool **out, wq_error *err);
/* Queues job (owned by the pool until on_done). */
void wq__pool_submit(struct wq__pool *p, struct wq_job *job);
/* Gives up waiting for job (loop thread). 1: abandoned — its thread owns and frees it when
 * the handler returns, and a replacement thread was started (when possible); 0: it already
 * returned and on_done comes on the next loop turn (the caller must treat it as done). */
int wq__pool_abandon(struct wq__pool *p, struct wq_job *job);
/* At shutdown, on the loop thread: answers queued journal calls WQ_ESTALE, refuses new
 * ones, closes the async handle. Idempotent; NULL is fine. */
void wq__pool_close(struct wq__pool *p);
/* After the loop closed: stops the threads and waits for each to return (an abandoned
 * handler that never returns blocks here). NULL is fine. */
void wq__pool_free(struct wq__pool *p);

/* A journal call from a handler thread (job.c → pool.c): waits for the loop to run it. */
enum wq__job_call_op { WQ__CALL_EFFECT_BEGIN = 1, WQ__CALL_EFFECT_DONE = 2 };
wq_rc wq__pool_call(struct wq_job *job, enum wq__job_call_op op, const char *name,
		    const char *result_in, wq_effect_status *status, char **result_out,
		    wq_error *err);

#endif /* WQ_JOB_H */
