/*
 * worker_int.h — what worker.c (the event loop: claims, command handlers, outcomes,
 * heartbeat, drain) and worker_inproc.c (in-process C handlers on the pool's threads)
 * share. Not installed. Everything here runs on the loop thread.
 */
#ifndef WQ_WORKER_INT_H
#define WQ_WORKER_INT_H

#include "notify.h"
#include "internal.h"
#include "deliver.h"
#include "instance.h"
#include "intake.h"
#include "job.h"
#include "outcome.h"
#include "policy.h"
#include "followup.h"
#include "schedule.h"
#include "spawn.h"

#include <pthread.h>
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
	int queued; /* saved holds an outcome waiting for this loop turn's batch */
	struct wq__outcome saved;
	char *saved_result;
	char *stderr_tail; /* owned: the failed attempt's kept stderr (keep_stderr), or NULL */
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

	/* Follow-ups (issue 10; followup.c): the attempt's $WAKEQ_FOLLOWUPS file, and what
	 * a success carries to finish() (kept with a kept outcome). */
	char *fu_path;                        /* owned; NULL: none */
	char *fu_text;                        /* owned; the JSON array text, or NULL */
	char fu_error[160];                   /* why it could not be read, or "" */
	struct wq__followup_limits fu_limits;
	/* wave4 batch (worker_prefetch.c): its in-process handler returned and its outcome
	 * waits for its commit: the handler slot is free for a prefetched task */
	int slot_released;
};

/*
 * A lane of the worker's store (worker_store.c): a thread with a connection of its own
 * on which claims and outcome batches run, so the loop keeps starting, reaping and timing
 * out handlers while a commit flushes. A worker has as many lanes as its store takes
 * writers at once (store.h `writers`: SQLite 1, PostgreSQL 2; fewer with [worker]
 * store_connections, up to WQ__LANES_MAX in internal.h). Each lane has at most one
 * claim and one outcome batch in flight; the answers come back through `done` (notify.h)
 * and are acted on in the loop. Fields under `mu` are shared with the thread; the rest
 * belong to the loop.
 */

struct wq__store_thread {
	struct wq_worker *w;  /* the lane's worker (for the answers in the loop) */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	wq_db *db;            /* the thread's connection; owned */
	struct wq__notify done;
	int stop;             /* under mu */
	/* An outcome batch (arrays owned by the loop while busy). */
	int batch_busy;       /* loop: handed over, answer not yet taken */
	int batch_todo, batch_ready; /* under mu */
	struct wq__job **js;
	const struct wq__outcome **os;
	wq_rc *rcs;
	wq_error *errs;
	size_t n;
	wq_rc batch_rc;
	wq_error batch_e;
	/* A claim. */
	int claim_busy;
	int asked; /* its slots beyond its batch's own (claim_copy); 0 with no claim */
	int claim_todo, claim_ready; /* under mu */
	int claim_with_batch;        /* under mu: the claim rides in the batch's transaction */
	struct wq__claim_req req;
	char instance[WQ_NAME_MAX + 1];
	struct wq__claimed *got; /* owned until the loop takes it */
	size_t ngot;
	wq_rc claim_rc;
	wq_error claim_e;
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
	int *kind_in_process;   /* parallel to kinds (set at the first claim): 1 for a kind
				 * with an in-process handler; NULL until then */
	size_t nkinds;
	int concurrency;

	uv_loop_t loop;
	struct wq__notify wake; /* wq_worker_stop from any thread (notify.h) */
	uv_timer_t poll, beat, drain, kick;
	uv_signal_t sigterm, sigint;
	uv_poll_t *wakeup;   /* the store's wake-up descriptor (PostgreSQL LISTEN, SQLite's
			      * wake-up file), or NULL (wakeup.c) */
	uv_timer_t due;      /* the next due time ahead of the poll (wakeup.c) */
	int due_ready;       /* `due` was initialised */
	int64_t due_at;      /* what `due` waits for (wall clock, µs); 0 when stopped */
	/* Outcomes queued in a loop turn are recorded together after its poll phase
	 * (worker_record.c); both run only while some are queued. */
	uv_check_t record_check;
	uv_idle_t record_idle;
	/* The store's lanes (worker_store.c), st[0..nlanes); 0: the loop makes the claims
	 * and records the outcomes itself. */
	struct wq__store_thread st[WQ__LANES_MAX];
	int nlanes;
	/* Claim again after the next claim answer: a claim was wanted (a wake-up, a
	 * finished task) while no lane could take one, or its slots were asked for by a
	 * claim in flight on another lane (which may bring fewer), or a claim came back
	 * full (due tasks may be left). */
	int claim_missed;
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
	struct wq__intake *intake; /* mailbox sources (issue 13; intake.c); NULL: none */
	int last_claim_empty;
	int64_t last_beat; /* last successful heartbeat or registration */
	int64_t last_claim_at; /* the last claim request's `now` (wq__worker_claim_req) */
	/* Start of our current unbroken run of heartbeats (a registration, or a beat after a
	 * gap longer than the lease): others' heartbeat ages are judged only once it is a
	 * lease old (maintain). */
	int64_t beats_since;
	int64_t beat_tried; /* last heartbeat or registration tried (wq_now) */
	/* Store calls failed since the store last took a write (a heartbeat, a claim that
	 * claimed, a recorded outcome): the --until-idle bound. Reads that succeed do not
	 * count as recovery: on a full disk they do. */
	int store_failures;
	int64_t store_failing_since;
	wq_rc rc;
	wq_error err;
	struct wq__claim_policy policy; /* issue 10 (policy.c): what claims carry */
	/* wave4 batch (worker_prefetch.c): claimed tasks waiting for a free slot, in claim
	 * order from q[head]; each owns its payload */
	struct wq__prefetch {
		struct wq__claimed *q;
		size_t head, n, cap;
		int released; /* jobs with slot_released, not yet settled */
		/* tasks of a claim answer not yet taken (worker_store.c on_done, while it
		 * gives the outcome answers of the same commit first): counted as kept */
		size_t incoming;
	} pf;
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
/* The store took a write (resets the --until-idle failure count). */
void wq__worker_store_wrote(struct wq_worker *w);
/* A store call of the loop (`what`) failed with e: logged (unless quiet), and the worker
 * stops when the error is not transient (or transient ones do not clear under
 * --until-idle). */
void wq__worker_store_failed_how(struct wq_worker *w, const char *what, const wq_error *e,
				 int quiet);
/* Job j is settled: forgotten, and the worker moves on (claims, or ends its drain). */
void wq__worker_job_gone(struct wq_worker *w, struct wq__job *j);

/* Whether a claim is due now: 1 and *req for the free slots plus `extra`. */
int wq__worker_claim_req(struct wq_worker *w, int extra, struct wq__claim_req *req);
/* Starts tasks claimed (by the loop or a store lane): claim's answer. */
void wq__worker_claimed(struct wq_worker *w, wq_rc rc, struct wq__claimed *got, size_t n,
			const wq_error *e);

/* worker_store.c */
/* At wq_worker_run: the lanes and their connections; on failure (logged) fewer lanes, or
 * none and the loop makes every store call itself. */
void wq__st_start(struct wq_worker *w);
/* At wq_worker_free: waits for the calls in flight, joins, closes the connections. */
void wq__st_stop(struct wq_worker *w);
/* A lane for a batch of n outcomes (none in flight there; one with no claim in flight
 * either first; beside a batch in flight only a lane's share of the slots) / for a claim
 * (none in flight there; one with no batch either first); NULL when there is none (the
 * outcomes wait for the next answer; or no lanes: w->nlanes). */
struct wq__store_thread *wq__st_for_batch(struct wq_worker *w, size_t n);
struct wq__store_thread *wq__st_for_claim(struct wq_worker *w);
/* Claims in flight on the lanes (a claim in flight counts as busy: the drain waits). */
int wq__st_claims(const struct wq_worker *w);
/* The slots the claims in flight asked for beyond those their own batches free: tasks
 * that may arrive, counted as kept so that another lane's claim asks for no more. */
int wq__st_asked(const struct wq_worker *w);
/* Hands lane st (from wq__st_for_batch / _for_claim) a batch (with a claim in its
 * transaction when req is non-NULL; the lane then has none in flight) / a claim. */
void wq__st_batch(struct wq__store_thread *st, struct wq__job **js,
		  const struct wq__outcome **os, wq_rc *rcs, wq_error *errs, size_t n,
		  const struct wq__claim_req *req);
void wq__st_claim(struct wq__store_thread *st, const struct wq__claim_req *req);

/* worker_record.c */
/* A handler's stderr for the log: "; stderr N bytes" (and its last line, truncated, when
 * with_line); "" when it wrote none. */
void wq__worker_stderr_summary(const struct wq__spawn_result *r, int with_line, char *buf,
			       size_t sz);
/* A store lane's answer for a batch (arrays taken over and freed). */
void wq__record_answer(struct wq_worker *w, struct wq__job **js,
		       const struct wq__outcome **os, wq_rc *rcs, wq_error *errs, size_t n,
		       wq_rc rc, const wq_error *e);
/* At wq_worker_new: the handles of the outcome batch. */
void wq__record_init(struct wq_worker *w);
/* Offers kept outcomes (tasks and deliveries) to the store again; with give_up (the
 * drain's deadline) those it still refuses are logged and dropped. */
void wq__worker_retry_unrecorded(struct wq_worker *w, int give_up);

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

/* worker.c: starts the handler of claimed task c (its payload taken over). */
void wq__worker_start_job(struct wq_worker *w, struct wq__claimed *c);

/* worker_prefetch.c (wave4 batch): `prefetch` tasks claimed ahead of free slots.
 * room: how many more a claim may take beyond the free slots counted from `running`
 * (at most `prefetch`, `concurrency` with a command kind; a claim of its own, not
 * `riding` in an outcome batch's commit, only while fewer than `concurrency` wait), less
 * the tasks claimed and not started yet: negative when those exceed what prefetch
 * allows (prefetch 0: any), as they take free slots; take: starts the n claimed tasks
 * got while slots are free and keeps the rest (each payload taken over); next: starts
 * kept ones while slots are free; give_back: returns every kept one to pending (the
 * drain), fenced on its attempt. */
int wq__prefetch_room(struct wq_worker *w, int riding);
/* Parallel to w->kinds: 1 for a kind registered in-process (computed once, kept in
 * w->kind_in_process); NULL when out of memory. */
const int *wq__worker_kinds_in_process(struct wq_worker *w);
void wq__prefetch_take(struct wq_worker *w, struct wq__claimed *got, size_t n);
void wq__prefetch_next(struct wq_worker *w);
void wq__prefetch_give_back(struct wq_worker *w);
void wq__prefetch_free(struct wq_worker *w);
/* The instance was declared lost: the kept tasks (claimed under its old id, interrupted
 * by the recovery that declared it) are forgotten, never started. */
void wq__prefetch_drop(struct wq_worker *w);

/* worker_lease.c: the worker's own lease. wq__worker_beat heartbeats (or registers
 * again after being declared lost); wq__worker_lease_unconfirmed: an overdue heartbeat
 * failed less than a heartbeat ago, so nothing is claimed; wq__worker_lost_running: a
 * handler of a lost id still runs; wq__worker_judged_lease: the lease other instances'
 * heartbeats are judged by now (INT64_MAX: not yet, see there). */
void wq__worker_beat(struct wq_worker *w);
int wq__worker_lease_unconfirmed(const struct wq_worker *w);
int wq__worker_lost_running(const struct wq_worker *w);
int64_t wq__worker_judged_lease(const struct wq_worker *w);
/* Job j's handler returned (a command: exited) and its outcome is queued for its commit: with
 * prefetch its handler slot goes to the next kept task at once (the job stays, unsettled,
 * until the store answered: nothing is reported before). settled: j leaves. */
void wq__prefetch_release(struct wq_worker *w, struct wq__job *j);
void wq__prefetch_settled(struct wq_worker *w, struct wq__job *j);

#endif /* WQ_WORKER_INT_H */
