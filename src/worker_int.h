/*
 * worker_int.h — what worker.c (the event loop: claims, command handlers, outcomes,
 * heartbeat, drain) and worker_inproc.c (in-process C handlers on the pool's threads)
 * share. Not installed. Everything here runs on the loop thread.
 */
#ifndef WQ_WORKER_INT_H
#define WQ_WORKER_INT_H

#include "internal.h"
#include "deliver.h"
#include "instance.h"
#include "job.h"
#include "outcome.h"
#include "schedule.h"
#include "spawn.h"

#include <uv.h>

enum wq__phase {
	WQ__PH_NEW = 0,
	WQ__PH_RUNNING,  /* claiming */
	WQ__PH_DRAINING, /* no claims; waiting for handlers up to drain_timeout */
	WQ__PH_KILLING,  /* handlers were sent SIGTERM (SIGKILL after grace) */
	WQ__PH_CLOSING,  /* unregistered; handles closing */
};

struct wq__job {
	struct wq__job *next, *prev;
	struct wq_worker *w;
	struct wq__claimed t;                 /* owns t.payload */
	const struct wq__kind_config *kind;   /* NULL when the config has no such kind */
	char instance[WQ_NAME_MAX + 1];       /* the id the task was claimed under */
	char attempt_id[48];
	int max_attempts;
	int64_t started_at;
	struct wq__spawn *sp;                 /* NULL once finished */
	enum wq__stop_why stop;

	/* An outcome the store did not take (anything but a definite answer, see
	 * wq__outcome_keep: PostgreSQL restarting, a full disk, ...): kept with copies of
	 * everything it points to and offered again on every poll and heartbeat tick, so it
	 * is recorded once the store takes writes again, never lost and never re-run. The
	 * job keeps its slot meanwhile, and the drain waits for it up to drain_timeout. */
	int unrecorded;
	struct wq__outcome saved;
	char *saved_result;
	char saved_reason[WQ_REASON_MAX + 1], saved_detail[WQ_DETAIL_MAX + 1];
	char saved_sha[WQ_SHA256_HEX];
	char what[512]; /* the outcome in words, for the log */
	char note[256]; /* extra log text (stderr summary) */
	char uncertain[WQ_EFFECT_NAME_MAX + 1]; /* set by finish: recorded uncertain-effect */
	char cancel_effect[WQ_EFFECT_NAME_MAX + 1]; /* set by finish: a cancel recorded
						     * interrupted (effect left open) */

	/* In-process handlers (see "in-process handlers" below). */
	const struct wq__inproc_kind *ipk;    /* non-NULL: the kind is handled in-process */
	struct wq_job *ip;                    /* owned by the pool while it runs; NULL once
					       * returned or abandoned */
	uv_timer_t *ip_timer;                 /* runtime limit, then kill_grace after a stop */
	int ip_timed_out;
};

/* A kind registered with wq_worker_register. */
struct wq__inproc_kind {
	wq_job_fn fn;
	void *ud;
	struct wq__kind_config kc; /* its settings when the config has no section for it */
};

struct wq_worker {
	wq_db *db;
	const wq_config *cfg;
	char *host;
	char *db_url;
	int until_idle;
	int handle_signals;
	void (*log)(void *ud, const char *level, const char *line);
	void *log_ud;
	const char **kinds;
	int *kind_max_attempts; /* parallel to kinds: the kind's max_attempts, 0: none */
	size_t nkinds;
	int concurrency;

	uv_loop_t loop;
	uv_async_t wake;
	uv_timer_t poll, beat, drain, kick;
	uv_signal_t sigterm, sigint;
	uv_poll_t *wakeup;   /* the store's wake-up descriptor (PostgreSQL LISTEN, SQLite's
			      * wake-up file), or NULL (wakeup.c) */
	uv_timer_t due;      /* the next due time ahead of the poll (wakeup.c) */
	int due_ready;       /* `due` was initialised */
	int64_t due_at;      /* what `due` waits for (wall clock, µs); 0 when stopped */
	int loop_ready;
	int ran;

	volatile sig_atomic_t stop_requests;
	int stops_seen;
	enum wq__phase phase;

	struct wq__self self;
	struct wq__sched sched; /* schedules held and fired here (issue 12; schedule.c) */
	int registered;
	struct wq__job *jobs;
	int running;
	struct wq__deliver *dl; /* delivery slots (deliver.c), apart from handler slots */
	struct wq__inproc_kind *inproc; /* registered kinds (wq_worker_register) */
	size_t ninproc;
	struct wq__pool *pool;  /* their threads (pool.c); NULL when none is registered */
	int last_claim_empty;
	int64_t last_beat; /* last successful heartbeat or registration */
	/* Store calls failed since the store last took a write (a heartbeat, a claim that
	 * claimed, a recorded outcome): the --until-idle bound. Reads that succeed do not
	 * count as recovery: on a full disk they do. */
	int store_failures;
	int64_t store_failing_since;
	wq_rc rc;
	wq_error err;
};


/* Microseconds as a libuv timer's milliseconds, rounded up (never early). */
static inline uint64_t ms_of(int64_t us)
{
	return us <= 0 ? 0 : (uint64_t)((us + 999) / 1000);
}

/* worker.c */
void wq__worker_log(void *ud, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void wq__worker_stop_event(struct wq_worker *w, struct wq__job *j, const char *why);
void wq__worker_finish_job(struct wq_worker *w, struct wq__job *j, struct wq__outcome *o,
			   const char *note);
void wq__worker_job_policy(const struct wq__job *j, struct wq__run_policy *p);
void wq__worker_spawn_failed(struct wq__job *j, const char *why, int resources);

/* Claims at once (the kick timer), while running. */
void wq__worker_kick(struct wq_worker *w);

/* wakeup.c (issues 11, 12): when to claim, besides the poll timer and finished tasks. */
/* (Re)builds the watch on the store's wake-up descriptor while running; otherwise
 * closes it and the due timer (drain, shutdown). */
void wq__wakeup_watch(struct wq_worker *w);
/* Reads pending wake-ups without blocking; kicks a claim when one arrived. */
void wq__wakeup_check(struct wq_worker *w);
/* After a claim round: sets the due timer to the earliest future due time of a task,
 * a delivery or a schedule slot, when that comes before the next poll. */
void wq__wakeup_plan(struct wq_worker *w);

/* worker_inproc.c */
/* At wq_worker_run: every configured kind has a command or a registered handler; the
 * registered kinds join the kinds this worker claims. */
wq_rc wq__inproc_prepare(struct wq_worker *w, wq_error *err);
/* Binds job j to its registered handler, if its kind has one (j->ip). */
void wq__inproc_bind(struct wq_worker *w, struct wq__job *j);
/* Starts job j, bound to a handler, on the pool. */
void wq__inproc_start(struct wq_worker *w, struct wq__job *j);
/* Stops job j for `why`: a command handler's group gets SIGTERM (then SIGKILL after
 * kill_grace), an in-process handler its cancellation flag (then abandonment). 1 when
 * something was stopped. */
int wq__job_terminate(struct wq_worker *w, struct wq__job *j, wq_job_stop why);

#endif /* WQ_WORKER_INT_H */
