/*
 * worker.c — the worker daemon's event loop (SPEC §3, §4, §13).
 *
 * One libuv loop of our own runs everything in the thread that calls wq_worker_run: the
 * poll timer and the zero-delay kick claim work, the heartbeat timer keeps the instance
 * alive and runs recovery, cancel checks and the on_interrupt=retry policy, and each
 * handler is a spawn (spawn.c) whose on_done records the outcome. The store handle is
 * only ever used from this thread.
 *
 * Invariants:
 *  - An outcome is recorded only after the handler exited and its output pipes reached
 *    EOF (spawn.c guarantees it before on_done).
 *  - Every outcome names the instance id the task was claimed under, so an attempt that
 *    was declared lost while it ran is fenced off by the store (WQ_ESTALE) and only
 *    logged, never retried.
 *  - No claim is made unless the instance row is registered; drain stops claiming first.
 */
#include "worker_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#define WQ__POLICY_BATCH 100
/* --until-idle waits for pending tasks due within this horizon (short retry backoffs,
 * a task enqueued for "in a moment"); anything due later does not keep it alive. */
#define WQ__IDLE_HORIZON WQ__US_PER_S
/* --until-idle gives up on a store that keeps failing with transient errors after this
 * many failed store calls in a row, and only once they have lasted at least a lease:
 * long enough for a PostgreSQL restart or a full disk being cleaned up, bounded so that
 * a batch run never hangs on a store that is not coming back. */
#define WQ__IDLE_STORE_TRIES 20

void wq__worker_log(void *ud, const char *level, const char *fmt, ...)
{
	struct wq_worker *w = ud;
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->log)
		w->log(w->log_ud, level, line);
	else
		wq__log_stderr(w->cfg->log_json, level, line);
}

static const char *dur(int64_t us, char *buf, size_t sz)
{
	return wq_duration_format(us, buf, sz);
}

/* Handlers and deliveries in flight, claims in flight and the tasks of a claim answer
 * being taken (worker_store.c on_done settles its batch's jobs first, and the last of
 * them must not end the drain before those tasks started): the drain waits for all. */
static int busy(const struct wq_worker *w)
{
	return w->running + wq__deliver_inflight(w->dl) + wq__st_claims(w) +
	       (int)w->pf.incoming;
}

/* ------------------------------------------------------------------ stopping ---- */

static void close_if_open(uv_handle_t *h)
{
	if (h->loop && !uv_is_closing(h))
		uv_close(h, NULL);
}

/* Drained: leave the store and let uv_run return (the wake async is unref'd). */
static void shutdown_now(struct wq_worker *w)
{
	wq_error e;
	wq_rc rc;

	if (w->phase == WQ__PH_CLOSING)
		return;
	w->phase = WQ__PH_CLOSING;
	wq__prefetch_give_back(w); /* (none left after a drain) */
	if (w->registered) {
		rc = wq__instance_unregister(w->db, &w->self, &e);
		if (rc != WQ_OK && rc != WQ_ENOTFOUND) {
			wq__worker_log(w, "error", "unregistering instance %s: %s", w->self.id, e.message);
			if (w->rc == WQ_OK) {
				w->rc = rc;
				w->err = e;
			}
		}
		w->registered = 0;
	}
	wq__worker_log(w, "info", "instance %s stopped", w->self.id);
	wq__pool_close(w->pool); /* only abandoned handlers can still run: their journal
				  * calls answer WQ_ESTALE */
	close_if_open((uv_handle_t *)&w->poll);
	wq__wakeup_watch(w); /* closing: only closes the watch and the due timer */
	close_if_open((uv_handle_t *)&w->beat);
	close_if_open((uv_handle_t *)&w->drain);
	close_if_open((uv_handle_t *)&w->kick);
	wq__intake_stop(w->intake); /* issue 13: its timer; a job in flight finishes */
	if (w->handle_signals) {
		close_if_open((uv_handle_t *)&w->sigterm);
		close_if_open((uv_handle_t *)&w->sigint);
	}
}

void wq__worker_stop_event(struct wq_worker *w, struct wq__job *j, const char *why)
{
	char detail[160];
	wq_error e;
	wq_rc rc;

	snprintf(detail, sizeof(detail),
		 "{\"attempt_id\":\"%s\",\"reason\":\"%s\",\"signal\":\"SIGTERM\"}",
		 j->attempt_id, why);
	WQ__STORE_RETRY(rc, w->db, event, j->t.id, j->t.attempt, "stop-requested", j->instance,
			detail, wq_now(), &e);
	if (rc != WQ_OK)
		wq__worker_log(w, "warning", "task %" PRId64 ": recording stop-requested: %s", j->t.id,
		     e.message);
}

/* The drain's deadline: every handler still running is stopped (idempotent). */
static void terminate_all(struct wq_worker *w)
{
	for (struct wq__job *j = w->jobs; j; j = j->next) {
		if (wq__job_terminate(w, j, WQ_JOB_STOP_DRAIN)) {
			j->stop = WQ__STOP_DRAIN;
			wq__worker_stop_event(w, j, "drain-deadline");
		}
	}
}

static void kill_rest(struct wq_worker *w)
{
	char g[32];

	if (w->phase != WQ__PH_DRAINING)
		return;
	w->phase = WQ__PH_KILLING;
	uv_timer_stop(&w->drain);
	wq__worker_retry_unrecorded(w, 1);
	if (w->phase == WQ__PH_CLOSING)
		return;
	/* Deliveries still sending stay `sending`: recovery retries them (uncertain). */
	wq__deliver_abort(w->dl);
	if (busy(w) == 0) {
		shutdown_now(w);
		return;
	}
	wq__worker_log(w, "warning", "drain: stopping %d handler(s) (SIGTERM, SIGKILL after %s)",
	     w->running, dur(w->cfg->kill_grace, g, sizeof(g)));
	terminate_all(w);
}

static void on_drain_timeout(uv_timer_t *t)
{
	kill_rest(t->data);
}

static void schedules_release(struct wq_worker *w);

static void begin_drain(struct wq_worker *w, const char *why)
{
	char d[32];

	if (w->phase != WQ__PH_RUNNING && w->phase != WQ__PH_NEW)
		return;
	schedules_release(w); /* stop producing first */
	w->phase = WQ__PH_DRAINING;
	wq__prefetch_give_back(w); /* never started: pending again, not waited for */
	wq__sd_notify("STOPPING=1");
	uv_timer_stop(&w->poll);
	uv_timer_stop(&w->kick);
	wq__wakeup_watch(w); /* not running any more: only closes the watch and timer */
	if (busy(w) == 0) {
		wq__worker_log(w, "info", "%s: stopping", why);
		shutdown_now(w);
		return;
	}
	wq__failpoint("drain");
	wq__worker_log(w, "info", "%s: draining, waiting up to %s for %d handler(s) and %d delivery(ies)",
	     why, dur(w->cfg->drain_timeout, d, sizeof(d)), w->running,
	     wq__deliver_inflight(w->dl));
	uv_timer_start(&w->drain, on_drain_timeout, ms_of(w->cfg->drain_timeout), 0);
}

static void check_stop(struct wq_worker *w)
{
	int n = w->stop_requests;

	if (n <= w->stops_seen || w->phase == WQ__PH_NEW)
		return;
	w->stops_seen = n;
	if (w->phase == WQ__PH_RUNNING)
		begin_drain(w, "stop requested");
	if (n >= 2 && w->phase == WQ__PH_DRAINING) {
		wq__worker_log(w, "info", "second stop request: not waiting for the drain deadline");
		kill_rest(w);
	}
}

static void on_wake(struct wq__notify *a)
{
	check_stop(a->data);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct wq_worker *w = h->data;

	wq__worker_log(w, "info", "received %s", signum == SIGINT ? "SIGINT" : "SIGTERM");
	w->stop_requests++;
	check_stop(w);
}

void wq_worker_stop(wq_worker *w)
{
	if (!w)
		return;
	w->stop_requests++;
	if (w->wake.open)
		wq__notify_send(&w->wake);
}

/* ------------------------------------------------------------------ store errors ---- */

/*
 * Transient store errors are worth waiting out: WQ_EBUSY (locked, a PostgreSQL restart or
 * lost connection), WQ_EIO (a full disk, an I/O error, a read-only or unreachable file:
 * something outside that can be fixed while the worker waits) and WQ_ENOMEM. Anything
 * else from the store in the loop — WQ_ESTORE (a corrupt database: "database disk image is
 * malformed", an unexpected SQL error), WQ_ESCHEMA — will not go away by retrying: the
 * worker stops (drain, exit 1) instead of logging the same error on every poll.
 */
static int store_transient(wq_rc rc)
{
	return rc == WQ_EBUSY || rc == WQ_EIO || rc == WQ_ENOMEM;
}

static void begin_drain(struct wq_worker *w, const char *why);

/* Ends the worker with rc and message: the first such error is what wq_worker_run
 * returns. */
static void store_fatal(struct wq_worker *w, wq_rc rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void store_fatal(struct wq_worker *w, wq_rc rc, const char *fmt, ...)
{
	char msg[sizeof(w->err.message)];
	va_list ap;

	if (w->rc != WQ_OK) { /* already stopping for a store error: said once */
		begin_drain(w, "store error");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wq__worker_log(w, "error", "%s", msg);
	w->rc = rc;
	w->err.code = rc;
	wq__strlcpy(w->err.message, msg, sizeof(w->err.message));
	begin_drain(w, "store error");
}

/* The store took a write. */
void wq__worker_store_wrote(struct wq_worker *w)
{
	w->store_failures = 0;
}

/* A store call of the loop (`what`) failed with e: logs it (unless `quiet`: a kept
 * outcome offered again, already logged once), and stops the worker when the error is
 * not transient, or under --until-idle when transient errors did not clear (see
 * WQ__IDLE_STORE_TRIES). */
void wq__worker_store_failed_how(struct wq_worker *w, const char *what, const wq_error *e,
				 int quiet)
{
	int64_t now = wq_now();

	if (!store_transient(e->code)) {
		store_fatal(w, e->code,
			    "%s: %s; this store error does not clear by retrying: the worker stops",
			    what, e->message);
		return;
	}
	if (!quiet)
		wq__worker_log(w, "error", "%s: %s", what, e->message);
	if (w->store_failures++ == 0)
		w->store_failing_since = now;
	if (w->until_idle && w->store_failures >= WQ__IDLE_STORE_TRIES &&
	    now - w->store_failing_since >= w->cfg->lease)
		store_fatal(w, e->code,
			    "%s: %s; the store kept failing (%d calls in a row): --until-idle "
			    "gives up",
			    what, e->message, w->store_failures);
}

static void store_failed(struct wq_worker *w, const char *what, const wq_error *e)
{
	wq__worker_store_failed_how(w, what, e, 0);
}

/* ------------------------------------------------------------------ outcomes ---- */

static void unlink_job(struct wq_worker *w, struct wq__job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		w->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	w->running--;
	wq__prefetch_settled(w, j);
	free(j->t.payload);
	free(j->saved_result);
	wq__followup_release(j); /* issue 10 */
	free(j->stderr_tail);
	free(j);
}

static void after_finish(struct wq_worker *w);

/* A handler or delivery slot is free again: during a drain the worker ends once nothing
 * is busy; otherwise a prefetched task takes the slot and the worker claims again. */
static void slot_freed(struct wq_worker *w)
{
	if (w->phase == WQ__PH_DRAINING || w->phase == WQ__PH_KILLING) {
		if (busy(w) == 0)
			shutdown_now(w);
	} else {
		wq__prefetch_next(w);
		after_finish(w);
	}
}

/* Job j is settled (its outcome recorded, refused or given up): forget it, and move the
 * worker on (claim again, or finish the drain). */
void wq__worker_job_gone(struct wq_worker *w, struct wq__job *j)
{
	unlink_job(w, j);
	slot_freed(w);
}

static void on_kick(uv_timer_t *t);

/* Claim again at once: throughput is not bounded by the poll interval. */
static void after_finish(struct wq_worker *w)
{
	if (w->phase == WQ__PH_RUNNING)
		uv_timer_start(&w->kick, on_kick, 0, 0);
}

/* A delivery left its slot (deliver.c). */
static void on_delivery_settled(void *ud)
{
	slot_freed(ud);
}


/* The handler ended (all output read): decide what it means (outcome.c), attach the
 * result to a success, record. */
static void on_done(struct wq__spawn *sp, struct wq__spawn_result *r, void *ud)
{
	struct wq__job *j = ud;
	struct wq_worker *w = j->w;
	struct wq__run_facts f;
	struct wq__run_policy p;
	struct wq__decided d;
	char sha[WQ_SHA256_HEX], note[256], lim[WQ_NAME_MAX + 40];

	j->sp = NULL;
	wq__failpoint("handler-exited");
	memset(&f, 0, sizeof(f));
	f.exit_status = r->exit_status;
	f.term_signal = r->term_signal;
	f.timed_out = r->timed_out;
	f.stop = j->stop;
	f.result_too_large = r->out_too_large;
	f.out_total = r->out_total;
	f.result_max = wq__policy_result_max(w->cfg, j->t.tenant, lim, sizeof(lim));
	f.result_limit = lim; /* issue 10: the tenant's max_result_bytes (policy.c) */
	wq__worker_job_policy(j, &p);
	wq__outcome_decide(&f, &p, wq_now(), WQ__RND_LAZY, &d);
	if (d.o.kind == WQ__FINISH_SUCCEEDED && !d.o.outcome && r->out_len > 0) {
		wq__sha256_hex(r->out, r->out_len, sha);
		d.o.result = r->out;
		d.o.result_len = r->out_len;
		d.o.result_sha256 = sha;
	}

	/* keep_stderr (issue 14): a failed attempt's stderr tail goes with the attempt */
	if (j->kind && j->kind->keep_stderr &&
	    (d.o.kind == WQ__FINISH_FAILED || d.o.kind == WQ__FINISH_RETRY)) {
		j->stderr_tail = wq__stderr_tail(r->err, r->err_len, j->kind->keep_stderr);
		d.o.stderr_tail = j->stderr_tail;
	}
	wq__worker_stderr_summary(r, d.o.kind != WQ__FINISH_SUCCEEDED, note, sizeof(note));
	if (r->output_cut) {
		size_t len = strlen(note);

		snprintf(note + len, sizeof(note) - len,
			 "; output pipes still open after exit were closed");
	}
	wq__followup_collect(w, j, &d.o); /* issue 10: a success's follow-ups */
	wq__worker_finish_job(w, j, &d.o, note);
}

static void on_timeout(struct wq__spawn *sp, void *ud)
{
	struct wq__job *j = ud;
	char t[32], g[32];

	wq__worker_log(j->w, "warning",
	     "task %" PRId64 " attempt %s exceeded its runtime limit (%s): SIGTERM, SIGKILL "
	     "after %s",
	     j->t.id, j->attempt_id, dur(j->kind->timeout, t, sizeof(t)),
	     dur(j->w->cfg->kill_grace, g, sizeof(g)));
	wq__worker_stop_event(j->w, j, "runtime-limit");
}

/* ------------------------------------------------------------------ starting ---- */

void wq__worker_start_job(struct wq_worker *w, struct wq__claimed *c)
{
	struct wq__job *j = calloc(1, sizeof(*j));
	struct wq__spawn_opts so;
	struct wq__outcome o;
	char e_task[48], e_attempt[80], e_op[WQ_KEY_MAX + 32], e_tenant[WQ_NAME_MAX + 32];
	char e_scope[WQ_NAME_MAX + 32], e_pv[48], e_deadline[WQ_TIME_BUFSZ + 32];
	char detail[WQ_DETAIL_MAX + 1], ts[WQ_TIME_BUFSZ];
	char idem[WQ_IDEMPOTENCY_KEY_BUFSZ], e_idem[WQ_IDEMPOTENCY_KEY_BUFSZ + 32];
	char *e_db = NULL, e_fu[4200];
	const char *env[12];
	size_t ne = 0;
	int64_t deadline = 0;
	wq_error e;
	wq_rc rc;

	if (!j) {
		/* Nothing ran: the task can go back to pending with backoff. */
		memset(&o, 0, sizeof(o));
		o.task_id = c->id;
		o.attempt = c->attempt;
		o.instance = w->self.id;
		o.kind = WQ__FINISH_RETRY;
		o.reason = "worker-error";
		o.reason_detail = "out of memory before the handler started";
		o.exit_status = -1;
		o.now = wq_now();
		o.retry_at = o.now + WQ__US_PER_S;
		WQ__STORE_RETRY(rc, w->db, finish, &o, &e);
		wq__worker_log(w, "error", "task %" PRId64 ": out of memory starting the handler", c->id);
		free(c->payload);
		c->payload = NULL;
		return;
	}
	j->w = w;
	j->t = *c;
	c->payload = NULL;
	j->kind = wq__config_kind(w->cfg, j->t.kind);
	wq__inproc_bind(w, j);
	wq__strlcpy(j->instance, w->self.id, sizeof(j->instance));
	snprintf(j->attempt_id, sizeof(j->attempt_id), "%" PRId64 ".%d", j->t.id, j->t.attempt);
	/* The claim applied the kind's limit on top of an operator retry's base
	 * (tasks.retry_base, issue 14): the claimed value is the limit that applies. */
	j->max_attempts = j->t.max_attempts;
	j->started_at = wq_now();
	j->next = w->jobs;
	if (w->jobs)
		w->jobs->prev = j;
	w->jobs = j;
	w->running++;

	if (wq__policy_version_refused(w, j)) /* issue 10: payload_versions */
		return;
	if (j->ipk) {
		wq__inproc_start(w, j);
		return;
	}
	if (!j->kind) {
		snprintf(detail, sizeof(detail), "no handler configured for kind %s", j->t.kind);
		wq__worker_spawn_failed(j, detail, 0);
		return;
	}

	if (j->kind->timeout > 0)
		deadline = j->started_at + j->kind->timeout;
	snprintf(e_task, sizeof(e_task), "WAKEQ_TASK_ID=%" PRId64, j->t.id);
	snprintf(e_attempt, sizeof(e_attempt), "WAKEQ_ATTEMPT_ID=%s", j->attempt_id);
	snprintf(e_op, sizeof(e_op), "WAKEQ_OPERATION=%s", j->t.operation);
	/* The key for outside APIs: one per operation identity (operation.c); the operation
	 * name alone is not (two tenants may use the same key). */
	if (wq_operation_idempotency_key(j->t.tenant, j->t.scope, j->t.kind, j->t.operation,
					 j->t.keyed, idem, &e) != WQ_OK) {
		wq__worker_spawn_failed(j, e.message, 0);
		return;
	}
	snprintf(e_idem, sizeof(e_idem), "WAKEQ_IDEMPOTENCY_KEY=%s", idem);
	snprintf(e_tenant, sizeof(e_tenant), "WAKEQ_TENANT=%s", j->t.tenant);
	snprintf(e_scope, sizeof(e_scope), "WAKEQ_SCOPE=%s", j->t.scope);
	snprintf(e_pv, sizeof(e_pv), "WAKEQ_PAYLOAD_VERSION=%d", j->t.payload_version);
	snprintf(e_deadline, sizeof(e_deadline), "WAKEQ_DEADLINE=%s",
		 deadline ? wq_time_format(deadline, ts) : "");
	env[ne++] = e_task;
	env[ne++] = e_attempt;
	env[ne++] = e_op;
	env[ne++] = e_idem;
	env[ne++] = e_tenant;
	env[ne++] = e_scope;
	env[ne++] = e_pv;
	env[ne++] = e_deadline;
	if (wq__followup_prepare(j, e_fu, sizeof(e_fu)) != 0) /* issue 10: WAKEQ_FOLLOWUPS */
		return;
	env[ne++] = e_fu;
	if (w->db_url) {
		size_t n = strlen(w->db_url) + sizeof("WAKEQ_DB=");

		e_db = malloc(n);
		if (e_db) {
			snprintf(e_db, n, "WAKEQ_DB=%s", w->db_url);
			env[ne++] = e_db;
		}
	} else {
		env[ne++] = "WAKEQ_DB"; /* never hand down a store other than ours */
	}
	env[ne] = NULL;

	memset(&so, 0, sizeof(so));
	so.loop = &w->loop;
	so.argv = j->kind->argv;
	so.env = env;
	so.input = j->t.payload ? j->t.payload : "{}";
	so.input_len = j->t.payload ? j->t.payload_len : 2;
	so.result_max = wq__policy_result_max(w->cfg, j->t.tenant, NULL, 0); /* issue 10 */
	so.stderr_max = w->cfg->stderr_max;
	so.timeout = j->kind->timeout;
	so.kill_grace = w->cfg->kill_grace;
	so.on_done = on_done;
	so.on_timeout = on_timeout;
	so.ud = j;
	rc = wq__spawn_start(&so, &j->sp, &e);
	free(e_db);
	if (rc == WQ_ELIMIT || rc == WQ_ENOMEM) {
		/* Out of descriptors, processes or memory: nothing ran and the task is not at
		 * fault, so it is pending again after the kind's backoff whatever attempts are
		 * left (the attempt number still advances: it is the fencing token). */
		wq__worker_log(w, "error",
		     "task %" PRId64 " attempt %s: cannot start the handler: %s (the worker is "
		     "out of descriptors, processes or memory; nothing ran)",
		     j->t.id, j->attempt_id, e.message);
	}
	if (rc != WQ_OK) {
		wq__worker_spawn_failed(j, e.message, rc == WQ_ELIMIT || rc == WQ_ENOMEM);
		return;
	}

	/* Its `started` event was appended by the claim (store.h, wq__claim_req). */
	wq__worker_log(w, "info", "task %" PRId64 " attempt %s started (kind %s, pid %d)", j->t.id,
	     j->attempt_id, j->t.kind, wq__spawn_pid(j->sp));
}

/* ------------------------------------------------------------------ claiming ---- */

static void check_idle(struct wq_worker *w)
{
	int64_t due = 0, now;
	int any_running = 0;
	wq_error e;
	wq_rc rc;

	if (!w->until_idle || w->phase != WQ__PH_RUNNING || w->running > 0 ||
	    !w->last_claim_empty || wq__st_claims(w))
		return;
	WQ__STORE_RETRY(rc, w->db, next_due, w->kinds, w->nkinds, &due, &any_running, &e);
	if (rc != WQ_OK) {
		store_failed(w, "next_due", &e);
		return;
	}
	now = wq_now();
	if (due != 0 && due <= now + WQ__IDLE_HORIZON)
		return; /* due now or in a moment: a poll takes it */
	if (wq__deliver_keeps_alive(w->dl, now + WQ__IDLE_HORIZON))
		return; /* a delivery in flight, or due now or in a moment */
	if (wq__intake_keeps_alive(w->intake))
		return; /* issue 13: a source not yet polled clean, or an acknowledgement due */
	begin_drain(w, "idle");
}

/* w->kind_in_process, once the registered kinds have joined w->kinds; NULL when out of
 * memory (the `started` events then do not say in_process). */
const int *wq__worker_kinds_in_process(struct wq_worker *w)
{
	if (!w->kind_in_process && (w->kind_in_process = calloc(w->nkinds + 1, sizeof(int))))
		for (size_t i = 0; i < w->nkinds; i++)
			for (size_t k = 0; k < w->ninproc; k++)
				if (strcmp(w->kinds[i], w->inproc[k].kc.name) == 0)
					w->kind_in_process[i] = 1;
	return w->kind_in_process;
}

/* Whether a claim is due now; its request for the free slots plus `extra` (the slots
 * that outcomes being recorded in the same transaction free), less the slots the tasks
 * claimed and not started yet will take (beyond prefetch: wq__prefetch_room). 1: *req
 * is filled. */
int wq__worker_claim_req(struct wq_worker *w, int extra, struct wq__claim_req *req)
{
	int slots;

	if (w->phase != WQ__PH_RUNNING || !w->registered)
		return 0;
	slots = w->concurrency - w->running + extra + wq__prefetch_room(w, extra > 0);
	if (slots <= 0) {
		/* A claim in flight on another lane asked for these slots; if it brings fewer
		 * tasks, they are free after its answer: claim again then. */
		if (wq__st_asked(w) > 0)
			w->claim_missed = 1;
		return 0;
	}
	/* After a pause (SIGSTOP, a stalled store) we may have been declared lost: learn it
	 * before claiming under an id whose row is gone. */
	if (wq_now() - w->last_beat > w->cfg->heartbeat + w->cfg->heartbeat / 2) {
		if (wq__worker_lease_unconfirmed(w))
			return 0;
		wq__worker_beat(w);
		if (!w->registered || w->phase != WQ__PH_RUNNING)
			return 0;
	}
	/* Handlers of a lost id are being stopped: their tasks may have been retried
	 * meanwhile, and this worker must not start the next attempt of one while the old
	 * attempt still runs. At most kill_grace. */
	if (wq__worker_lost_running(w))
		return 0;
	memset(req, 0, sizeof(*req));
	req->instance = w->self.id;
	req->kinds = w->kinds;
	req->nkinds = w->nkinds;
	req->max_attempts = w->kind_max_attempts; /* recorded on the claimed rows */
	req->in_process = wq__worker_kinds_in_process(w);     /* for the `started` events */
	req->limit = slots;
	/* Strictly increasing per worker: a claim whose COMMIT answer was lost is known by
	 * its time on its lane's connection (op_claim.c reclaim), and two lanes must never
	 * claim at the same microsecond (or after the clock stepped back). */
	req->now = wq_now();
	if (req->now <= w->last_claim_at)
		req->now = w->last_claim_at + 1;
	w->last_claim_at = req->now;
	if (wq__policy_claim(w, req) != 0) /* issue 10: kinds' concurrency, starts per day */
		return 0;
	return 1;
}

static void claim_tasks(struct wq_worker *w)
{
	struct wq__store_thread *st = NULL;
	struct wq__claim_req req;
	struct wq__claimed *got = NULL;
	size_t n = 0;
	wq_error e;
	wq_rc rc;

	if (w->nlanes && !(st = wq__st_for_claim(w))) {
		w->claim_missed = 1; /* every lane claims now: again after an answer */
		return;
	}
	if (!wq__worker_claim_req(w, 0, &req))
		return;
	if (st) {
		wq__st_claim(st, &req); /* wq__worker_claimed starts what it got */
		return;
	}
	WQ__STORE_RETRY(rc, w->db, claim, &req, &got, &n, &e);
	wq__worker_claimed(w, rc, got, n, &e);
}

/* A claim answered off the loop (taken or failed): a drain may have begun meanwhile
 * and waited for this answer. */
static void claim_settled(struct wq_worker *w)
{
	if (w->phase == WQ__PH_KILLING)
		terminate_all(w);
	if ((w->phase == WQ__PH_DRAINING || w->phase == WQ__PH_KILLING) && busy(w) == 0)
		shutdown_now(w);
}

/* The claim's answer: the tasks claimed are ours and run under this instance: each is
 * started (or kept for a free slot, worker_prefetch.c), whatever the phase meanwhile (a
 * drain waits for them; kept ones it gives back). */
void wq__worker_claimed(struct wq_worker *w, wq_rc rc, struct wq__claimed *got, size_t n,
			const wq_error *e)
{
	if (rc != WQ_OK) {
		store_failed(w, "claim", e);
		if (w->nlanes)
			claim_settled(w); /* a drain may have waited only for this claim */
		return;
	}
	if (n > 0)
		wq__worker_store_wrote(w);
	if (n > 0)
		wq__failpoint("claim-committed");
	w->last_claim_empty = n == 0;
	wq__prefetch_take(w, got, n); /* started, or kept for a free slot */
	free(got);
	if (!w->nlanes)
		return;
	if (w->claim_missed) {
		w->claim_missed = 0;
		wq__worker_kick(w);
	}
	claim_settled(w);
	check_idle(w); /* what do_claim does after a claim */
}

/* ---- schedules (issue 12): the only two calls into schedule.c ---- */

/* Renews the schedule leases (every heartbeat) and enqueues their due slots, before the
 * claim that may then take them. A failure is logged; the next tick tries again (an
 * expired lease is the store's to refuse, not ours to guess). */
static void schedules_tick(struct wq_worker *w)
{
	int fired = 0;
	wq_error e;

	if (w->phase != WQ__PH_RUNNING || !w->registered)
		return;
	if (wq__sched_tick(w->db, &w->sched, w->cfg, w->self.id, &fired, &e) != WQ_OK)
		wq__worker_log(w, "warning", "schedules: %s", e.message);
}

/* Drain: the leases go first, so another worker fires the next slots at once. */
static void schedules_release(struct wq_worker *w)
{
	wq_error e;

	if (wq__sched_release(w->db, &w->sched, w->registered ? w->self.id : NULL, &e) != WQ_OK)
		wq__worker_log(w, "warning", "schedules: releasing the leases: %s", e.message);
}

void wq_worker_set_scheduler(wq_worker *w, int on)
{
	if (w)
		w->sched.off = !on;
}

/* Tasks for the free handler slots, deliveries for the free delivery slots: a slow
 * channel never holds up a handler, nor a long handler a delivery. */
static void do_claim(struct wq_worker *w)
{
	wq_error e;

	schedules_tick(w);
	claim_tasks(w);
	/* Deliveries wait while the store fails (until a write goes through: a heartbeat at
	 * the latest): a claim retried on every poll would log on every poll. */
	if (w->phase == WQ__PH_RUNNING && w->registered && !wq__worker_lease_unconfirmed(w) &&
	    w->store_failures == 0 && wq__deliver_claim(w->dl, w->self.id, &e) != WQ_OK)
		store_failed(w, "delivery claim", &e);
	check_idle(w);
	wq__wakeup_plan(w); /* sleep until the next due time (wakeup.c) */
}

/* ------------------------------------------------------------------ wake-ups ---- */

/* Claims at once (a wake-up, the due timer: wakeup.c). */
void wq__worker_kick(struct wq_worker *w)
{
	if (w->phase == WQ__PH_RUNNING)
		uv_timer_start(&w->kick, on_kick, 0, 0);
}

static void on_poll(uv_timer_t *t)
{
	struct wq_worker *w = t->data;

	wq__worker_retry_unrecorded(w, 0);
	if (w->phase != WQ__PH_RUNNING)
		return;
	do_claim(w);
	wq__wakeup_check(w); /* also notices a reconnect hidden inside a successful call */
}

static void on_kick(uv_timer_t *t)
{
	do_claim(t->data);
}

/* ------------------------------------------------------------------ heartbeat ---- */

static void check_cancels(struct wq_worker *w)
{
	int64_t *ids = NULL;
	size_t n = 0;
	wq_error e;
	wq_rc rc;

	if (w->running == 0 || !w->registered)
		return;
	WQ__STORE_RETRY(rc, w->db, cancel_requests, w->self.id, &ids, &n, &e);
	if (rc != WQ_OK) {
		store_failed(w, "cancel requests", &e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		for (struct wq__job *j = w->jobs; j; j = j->next) {
			char g[32];

			if (j->t.id != ids[i] || (!j->sp && !j->ip) || j->stop != WQ__STOP_NONE ||
			    strcmp(j->instance, w->self.id) != 0)
				continue;
			if (!wq__job_terminate(w, j, WQ_JOB_STOP_CANCEL))
				continue;
			j->stop = WQ__STOP_CANCEL;
			wq__worker_log(w, "info",
			     "task %" PRId64 " attempt %s: cancel requested: SIGTERM, SIGKILL after %s",
			     j->t.id, j->attempt_id, dur(w->cfg->kill_grace, g, sizeof(g)));
			wq__worker_stop_event(w, j, "cancel-requested");
		}
	}
	free(ids);
}

/* on_interrupt=retry: interrupted tasks of those kinds are decided by policy. */
static void apply_policy(struct wq_worker *w)
{
	for (size_t k = 0; k < w->cfg->nkinds; k++) {
		const struct wq__kind_config *kc = &w->cfg->kinds[k];
		int64_t *ids = NULL;
		size_t n = 0;
		wq_error e;
		wq_rc rc;

		if (kc->on_interrupt != WQ__ON_INTERRUPT_RETRY)
			continue;
		WQ__STORE_RETRY(rc, w->db, interrupted_of_kind, kc->name, WQ__POLICY_BATCH, &ids, &n,
				&e);
		if (rc != WQ_OK) {
			char what[WQ_KIND_MAX + 32];

			snprintf(what, sizeof(what), "interrupted tasks of kind %s", kc->name);
			store_failed(w, what, &e);
			if (w->phase != WQ__PH_RUNNING && w->phase != WQ__PH_NEW)
				return;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			struct wq__resolve r;
			wq_task t;
			char note[160];
			int max;

			WQ__STORE_RETRY(rc, w->db, get, ids[i], &t, &e);
			if (rc != WQ_OK)
				continue;
			if (t.state != WQ_STATE_INTERRUPTED || t.cancel_requested)
				continue; /* a requested cancel is left to a person */
			max = t.max_attempts; /* the claim recorded the limit that applies */
			memset(&r, 0, sizeof(r));
			r.task_id = t.id;
			r.by = "policy";
			r.now = wq_now();
			r.note = note;
			r.decision = wq__outcome_interrupt_policy(t.attempts, max, t.reason, note,
								  sizeof(note));
			WQ__STORE_RETRY(rc, w->db, resolve, &r, &e);
			if (rc == WQ_OK)
				wq__worker_log(w, "info", "task %" PRId64 " (%s) resolved by policy: %s", t.id,
				     t.reason[0] ? t.reason : "interrupted",
				     r.decision == WQ_RESOLVE_RETRY ? "retry" : "failed");
			else if (rc != WQ_ESTATE && rc != WQ_ENOTFOUND)
				wq__worker_log(w, "error", "task %" PRId64 ": policy resolve: %s", t.id,
				     e.message);
		}
		free(ids);
	}
}

static void maintain(struct wq_worker *w, int heartbeat)
{
	int interrupted = 0;
	wq_error e;
	wq_rc rc;

	if (heartbeat)
		wq__worker_beat(w);
	wq__worker_retry_unrecorded(w, 0);
	if (w->phase == WQ__PH_CLOSING)
		return;
	rc = wq__instance_recover(w->db, &w->self, wq__worker_judged_lease(w), wq_now(), &interrupted,
				  wq__worker_log, w, &e);
	if (rc != WQ_OK)
		store_failed(w, "recovery", &e);
	if (w->phase == WQ__PH_CLOSING)
		return;
	wq__deliver_recover(w->dl, w->self.id);
	check_cancels(w);
	if (w->phase == WQ__PH_RUNNING || w->phase == WQ__PH_NEW)
		apply_policy(w);
}

static void on_beat(uv_timer_t *t)
{
	wq__sd_watchdog(); /* the loop is alive; the store's health is the heartbeat's */
	maintain(t->data, 1);
	wq__wakeup_check(t->data); /* a NOTIFY its store calls read off the socket */
}

/* ------------------------------------------------------------------ public ---- */

static void close_walk(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

wq_rc wq_worker_new(wq_db *db, const wq_config *cfg, const wq_worker_opts *opts,
		    wq_worker **out, wq_error *err)
{
	struct wq_worker *w;
	wq_error e;
	int uerr;

	if (!db || !cfg || !out)
		return wq__err(err, WQ_EINVAL, "wq_worker_new: db, cfg and out are required");
	if (wq__check_commands(cfg, err) != WQ_OK) /* issue 14: refuse, don't fail each task */
		return WQ_ECONFIG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return wq__err(err, WQ_ENOMEM, "wq_worker_new: out of memory");
	w->db = db;
	w->cfg = cfg;
	w->concurrency = cfg->concurrency > 0 ? cfg->concurrency : 1;
	if (opts) {
		w->until_idle = opts->until_idle;
		w->handle_signals = opts->handle_signals;
		w->log = opts->log;
		w->log_ud = opts->log_ud;
		if (opts->host)
			w->host = strdup(opts->host);
		if (opts->db_url)
			w->db_url = strdup(opts->db_url);
	}
	/* Kinds without a section registered later join at wq_worker_run (wq__inproc_prepare),
	 * which also refuses a worker with no kind at all. */
	w->kinds = calloc(cfg->nkinds ? cfg->nkinds : 1, sizeof(*w->kinds));
	w->kind_max_attempts = calloc(cfg->nkinds ? cfg->nkinds : 1, sizeof(int));
	if (!w->kinds || !w->kind_max_attempts || (opts && opts->host && !w->host) || (opts && opts->db_url && !w->db_url)) {
		wq_worker_free(w);
		return wq__err(err, WQ_ENOMEM, "wq_worker_new: out of memory");
	}
	for (size_t i = 0; i < cfg->nkinds; i++) {
		w->kinds[i] = cfg->kinds[i].name;
		w->kind_max_attempts[i] = cfg->kinds[i].max_attempts;
	}
	w->nkinds = cfg->nkinds;

	if (wq__instance_init(&w->self, w->host, &e) != WQ_OK) {
		wq_worker_free(w);
		if (err)
			*err = e;
		return e.code;
	}
	w->self.id[0] = '\0'; /* wq_worker_instance() is "" until registered */

	uerr = uv_loop_init(&w->loop);
	if (uerr != 0) {
		wq_worker_free(w);
		return wq__err(err, WQ_EIO, "uv_loop_init: %s", uv_strerror(uerr));
	}
	w->loop_ready = 1;
	uerr = wq__notify_init(&w->loop, &w->wake, on_wake, w);
	if (uerr != 0) {
		wq_worker_free(w);
		return wq__err(err, WQ_EIO, "the worker's wake-up: %s", uv_strerror(uerr));
	}
	uv_unref((uv_handle_t *)&w->wake.poll); /* stop requests must not keep uv_run alive */
	uv_timer_init(&w->loop, &w->poll);
	uv_timer_init(&w->loop, &w->beat);
	uv_timer_init(&w->loop, &w->drain);
	uv_timer_init(&w->loop, &w->kick);
	w->poll.data = w->beat.data = w->drain.data = w->kick.data = w;
	wq__record_init(w);
	if (w->handle_signals) {
		uv_signal_init(&w->loop, &w->sigterm);
		uv_signal_init(&w->loop, &w->sigint);
		w->sigterm.data = w->sigint.data = w;
	}
	{
		struct wq__deliver_opts dopts = {
			.loop = &w->loop, .db = db, .cfg = cfg,
			.log = wq__worker_log, .on_settled = on_delivery_settled, .ud = w,
		};

		if (wq__deliver_new(&dopts, &w->dl, &e) != WQ_OK) {
			wq_worker_free(w);
			if (err)
				*err = e;
			return e.code;
		}
	}
	/* issue 13: the mailbox sources (their own timer, started by wq_worker_run) */
	if (wq__intake_new(&w->loop, db, cfg, w->self.id, wq__worker_log, w, &w->intake, &e) !=
	    WQ_OK) {
		wq_worker_free(w);
		if (err)
			*err = e;
		return e.code;
	}
	*out = w;
	return WQ_OK;
}

const char *wq_worker_instance(const wq_worker *w)
{
	return w && w->registered ? w->self.id : "";
}

wq_rc wq_worker_run(wq_worker *w, wq_error *err)
{
	sigset_t pipe_set, old_mask;
	char k[256];
	size_t kl = 0;
	wq_error e;
	wq_rc rc;

	if (!w)
		return wq__err(err, WQ_EINVAL, "wq_worker_run: no worker");
	if (w->ran)
		return wq__err(err, WQ_EINVAL, "wq_worker_run: a worker runs only once");
	w->ran = 1;

	if ((rc = wq__inproc_prepare(w, &e)) != WQ_OK) {
		if (err)
			*err = e;
		return rc;
	}
	if (wq__instance_new_id(&w->self, &e) != WQ_OK) {
		if (err)
			*err = e;
		return e.code;
	}
	rc = wq__instance_register(w->db, &w->self, wq_now(), &e);
	if (rc != WQ_OK) {
		if (err)
			*err = e;
		return rc;
	}
	w->registered = 1;
	w->last_beat = w->beats_since = wq_now();
	wq__st_start(w); /* claims and outcome batches off the loop */
	k[0] = '\0';
	for (size_t i = 0; i < w->nkinds && kl < sizeof(k); i++)
		kl += (size_t)snprintf(k + kl, sizeof(k) - kl, "%s%s", i ? ", " : "", w->kinds[i]);
	wq__worker_log(w, "info", "instance %s started (pid %" PRId64 ", concurrency %d, kinds: %s)",
	     w->self.id, w->self.pid, w->concurrency, k);

	/* A handler that exits before reading all of its stdin must give EPIPE on the
	 * write, not kill the worker: block SIGPIPE in this thread while the loop runs
	 * (children start with an empty mask: libuv resets it before exec). */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

	maintain(w, 0); /* recovery before the first claim */
	if (w->phase == WQ__PH_NEW) { /* else a store error already stopped it */
		w->phase = WQ__PH_RUNNING;
		wq__wakeup_watch(w);
		uv_timer_start(&w->poll, on_poll, 0,
			       ms_of(w->cfg->poll_interval) ? ms_of(w->cfg->poll_interval) : 1);
		uv_timer_start(&w->beat, on_beat, ms_of(w->cfg->heartbeat),
			       ms_of(w->cfg->heartbeat) ? ms_of(w->cfg->heartbeat) : 1);
		wq__intake_start(w->intake); /* issue 13 */
		if (w->handle_signals) {
			uv_signal_start(&w->sigterm, on_signal, SIGTERM);
			uv_signal_start(&w->sigint, on_signal, SIGINT);
		}
		wq__sd_notify("READY=1"); /* registered, recovered, claiming from now on */
		check_stop(w);
	}
	uv_run(&w->loop, UV_RUN_DEFAULT);

	if (!sigismember(&old_mask, SIGPIPE)) {
		sigset_t pend;
		struct timespec zero = { 0, 0 };

		while (sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE))
			if (sigtimedwait(&pipe_set, NULL, &zero) < 0)
				break;
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);

	if (w->rc != WQ_OK) {
		if (err)
			*err = w->err;
		return w->rc;
	}
	return WQ_OK;
}

void wq_worker_free(wq_worker *w)
{
	if (!w)
		return;
	wq__deliver_close(w->dl);
	wq__pool_close(w->pool);
	wq__st_stop(w); /* before its async handle closes */
	wq__notify_close(&w->wake); /* before the walk: its eventfd closes with it */
	if (w->loop_ready) {
		uv_walk(&w->loop, close_walk, NULL);
		uv_run(&w->loop, UV_RUN_DEFAULT);
		uv_loop_close(&w->loop);
	}
	wq__deliver_free(w->dl);
	wq__intake_free(w->intake); /* issue 13: after the loop ran its jobs to the end */
	wq__pool_free(w->pool); /* waits for every handler thread, abandoned ones too */
	free(w->inproc);
	while (w->jobs) { /* only when run ended abnormally; handles are closed above */
		struct wq__job *j = w->jobs;

		w->jobs = j->next;
		free(j->t.payload);
		wq__followup_release(j); /* issue 10 */
		free(j);
	}
	wq__policy_free(w); /* issue 10 */
	free(w->kinds);
	free(w->kind_max_attempts);
	free(w->kind_in_process);
	wq__prefetch_free(w); /* wave4 batch */
	free(w->host);
	free(w->db_url);
	free(w);
}
