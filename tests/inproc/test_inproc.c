/*
 * test_inproc.c — in-process handlers (wq_worker_register) end to end, through the public
 * API only, against one backend per process: `test_inproc sqlite` (a temporary file) or
 * `test_inproc postgres` (a fresh database per test on $WAKEQ_TEST_PG_URL; skipped
 * without it).
 *
 * The worker runs wq_worker_run on a thread of its own where a test must act while a
 * handler runs (cancel, drain); the test thread has its own store handle (a handle is
 * used by one thread at a time). Handlers tell the test what they saw through `struct
 * probe` (mutex + condition variable); every wait is a bounded wait on a state.
 */
#include "wakeq.h"

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fresh_store.h"

static const char *backend;
static const char *url; /* the test's store (fresh_store.h) */

#define WAIT_S 60 /* bound of every wait: far above what any step needs */

/* ---- one fresh store per test (fresh_store.h) ---- */

static int setup(void **state)
{
	wq_db *db = NULL;
	wq_error e;

	url = fresh_store_new();
	if (wq_db_open(url, WQ_OPEN_MIGRATE, &db, &e) != WQ_OK)
		fail_msg("open %s: %s", url, e.message);
	*state = db;
	return 0;
}

static int teardown(void **state)
{
	wq_db_close(*state);
	fresh_store_drop();
	return 0;
}

/* ---- helpers ---- */

/* Operator lines: warnings and errors to stderr (they explain a failure), info dropped
 * (10,000 tasks would print 10,000 lines). */
static void quiet_log(void *ud, const char *level, const char *line)
{
	(void)ud;
	if (strcmp(level, "info") != 0)
		fprintf(stderr, "worker %s: %s\n", level, line);
}

static wq_config *config(const char *text)
{
	wq_config *c = NULL;
	wq_error e;

	if (wq_config_parse(text, "test.ini", &c, &e) != WQ_OK)
		fail_msg("config: %s", e.message);
	return c;
}

static int64_t enqueue(wq_db *db, const char *kind, const char *payload)
{
	wq_enqueue_opts o;
	wq_enqueued out;
	wq_error e;

	memset(&o, 0, sizeof(o));
	o.kind = kind;
	o.payload = payload;
	if (wq_enqueue(db, &o, &out, &e) != WQ_OK)
		fail_msg("enqueue: %s", e.message);
	return out.id;
}

static wq_task task(wq_db *db, int64_t id)
{
	wq_task t;
	wq_error e;

	if (wq_task_get(db, id, &t, &e) != WQ_OK)
		fail_msg("task %" PRId64 ": %s", id, e.message);
	return t;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Polls the task's state until it is `want` (bounded). */
static wq_task wait_state(wq_db *db, int64_t id, wq_state want)
{
	double end = mono() + WAIT_S;
	wq_task t;

	for (;;) {
		t = task(db, id);
		if (t.state == want)
			return t;
		if (mono() > end)
			fail_msg("task %" PRId64 ": state %s, waited for %s", id,
				 wq_state_name(t.state), wq_state_name(want));
		usleep(10 * 1000);
	}
}

/* 1 when the timeline of id has an event of `type` whose detail contains `needle`. */
static int has_event(wq_db *db, int64_t id, const char *type, const char *needle)
{
	wq_event *ev = NULL;
	size_t n = 0;
	wq_error e;
	int found = 0;

	assert_int_equal(wq_timeline(db, id, &ev, &n, &e), WQ_OK);
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].type, type) == 0 && (!needle || strstr(ev[i].detail, needle)))
			found = 1;
	wq_free(ev);
	return found;
}

/* What a handler saw, and the test's orders to it. */
struct probe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;          /* handlers entered */
	int stop_seen;        /* the wq_job_cancelled value the handler acted on */
	int returned;         /* handlers returned */
	int release;          /* the test lets a handler that ignores its stop return */
	int quick;            /* {"quick":1} tasks run (they return at once) */
	wq_rc late_effect_rc; /* an abandoned handler's journal call */
	wq_job_result answer; /* what the handler returns once stopped */
	int effect_first;     /* begin an effect before waiting for the stop */
	int ignore_stop;      /* wait for `release` instead of the flag */
	char seen[512];       /* accessors, formatted */
};

static struct probe P;

static void probe_reset(void)
{
	memset(&P, 0, sizeof(P));
	pthread_mutex_init(&P.mu, NULL);
	pthread_cond_init(&P.cv, NULL);
}

/* Waits (bounded) until field >= want. */
static void probe_wait(const int *field, int want, const char *what)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += WAIT_S;
	pthread_mutex_lock(&P.mu);
	while (*field < want)
		if (pthread_cond_timedwait(&P.cv, &P.mu, &end) != 0)
			break;
	pthread_mutex_unlock(&P.mu);
	if (*field < want)
		fail_msg("waited %d s for %s", WAIT_S, what);
}

static int probe_get(const int *field)
{
	int v;

	pthread_mutex_lock(&P.mu);
	v = *field;
	pthread_mutex_unlock(&P.mu);
	return v;
}

static void probe_set(int *field, int value)
{
	pthread_mutex_lock(&P.mu);
	*field = value;
	pthread_cond_broadcast(&P.cv);
	pthread_mutex_unlock(&P.mu);
}

/* The handler of the stop tests: enters, maybe begins an effect, waits for its stop (or,
 * ignoring it, for the test's release), returns what the test asked for. */
static wq_job_result stoppable(wq_job *job, void *ud)
{
	double end = mono() + WAIT_S;
	wq_effect_status st;
	int stop = 0;
	size_t plen;
	const char *pl = wq_job_payload(job, &plen);

	(void)ud;
	if (plen == 11 && memcmp(pl, "{\"quick\":1}", 11) == 0) {
		probe_set(&P.quick, P.quick + 1);
		return WQ_JOB_SUCCEEDED;
	}
	if (P.effect_first && wq_job_effect_begin(job, "charge", &st, NULL, NULL) != WQ_OK)
		return WQ_JOB_FAIL;
	probe_set(&P.started, P.started + 1);
	while (mono() < end) {
		stop = wq_job_cancelled(job);
		if (P.ignore_stop ? probe_get(&P.release) : stop != 0)
			break;
		usleep(2 * 1000);
	}
	if (P.ignore_stop) {
		wq_effect_status s2;

		P.late_effect_rc = wq_job_effect_begin(job, "late", &s2, NULL, NULL);
	}
	pthread_mutex_lock(&P.mu);
	P.stop_seen = stop;
	P.returned++;
	pthread_cond_broadcast(&P.cv);
	pthread_mutex_unlock(&P.mu);
	return P.answer;
}

struct runner {
	pthread_t th;
	wq_db *db;        /* the worker's own handle */
	wq_config *cfg;
	wq_worker *w;
	wq_rc rc;
	wq_error err;
};

static void *run_thread(void *arg)
{
	struct runner *r = arg;

	r->rc = wq_worker_run(r->w, &r->err);
	return NULL;
}

/* A worker on its own thread and store handle, with `kind` handled by fn. */
static void runner_start(struct runner *r, const char *ini, const char *kind, wq_job_fn fn,
			 int until_idle)
{
	wq_worker_opts o;
	wq_error e;

	memset(r, 0, sizeof(*r));
	memset(&o, 0, sizeof(o));
	o.until_idle = until_idle;
	o.log = quiet_log;
	r->cfg = config(ini);
	assert_int_equal(wq_db_open(url, 0, &r->db, &e), WQ_OK);
	assert_int_equal(wq_worker_new(r->db, r->cfg, &o, &r->w, &e), WQ_OK);
	if (wq_worker_register(r->w, kind, fn, NULL, &e) != WQ_OK)
		fail_msg("register: %s", e.message);
	assert_int_equal(pthread_create(&r->th, NULL, run_thread, r), 0);
}

static void runner_stop(struct runner *r)
{
	wq_worker_stop(r->w);
	pthread_join(r->th, NULL);
	if (r->rc != WQ_OK)
		fail_msg("worker: %s", r->err.message);
	wq_worker_free(r->w);
	wq_config_free(r->cfg);
	wq_db_close(r->db);
}

/* ---- 10,000 no-op tasks at concurrency 8 ---- */

#define NOOP_N 10000
#define NOOP_BATCH 500 /* divides NOOP_N */
static atomic_int noop_runs[NOOP_N + 1];
static atomic_int noop_active, noop_peak;

static wq_job_result noop(wq_job *job, void *ud)
{
	int64_t id = wq_job_task_id(job);
	int now = atomic_fetch_add(&noop_active, 1) + 1, peak = atomic_load(&noop_peak);

	(void)ud;
	while (now > peak && !atomic_compare_exchange_weak(&noop_peak, &peak, now))
		;
	if (id >= 1 && id <= NOOP_N)
		atomic_fetch_add(&noop_runs[id], 1);
	atomic_fetch_sub(&noop_active, 1);
	return WQ_JOB_SUCCEEDED;
}

static void ten_thousand_noops(void **state)
{
	wq_db *db = *state;
	wq_config *cfg = config("[worker]\nconcurrency = 8\npoll_interval = 50ms\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_worker *w = NULL;
	wq_error e;
	int64_t first = 0, id;
	double t0 = mono();

	/* in batches of NOOP_BATCH (wq_enqueue_many, one transaction each): the worker's
	 * runs are what this test is about, and 10,000 separate commits cost seconds */
	for (int i = 0; i < NOOP_N; i += NOOP_BATCH) {
		static wq_enqueue_opts items[NOOP_BATCH];
		static wq_enqueued out[NOOP_BATCH];

		for (int j = 0; j < NOOP_BATCH; j++) {
			memset(&items[j], 0, sizeof(items[j]));
			items[j].kind = "noop";
			items[j].payload = "{}";
		}
		if (wq_enqueue_many(db, items, NOOP_BATCH, out, NULL, &e) != WQ_OK)
			fail_msg("enqueue: %s", e.message);
		for (int j = 0; j < NOOP_BATCH; j++) {
			id = out[j].id;
			if (!first)
				first = id;
			assert_true(id == first + i + j); /* ids 1..N on a fresh store */
			assert_false(out[j].replayed);
		}
	}
	assert_int_equal(first, 1);
	fprintf(stderr, "test_inproc: enqueued %d tasks in %.1f s\n", NOOP_N, mono() - t0);
	t0 = mono();
	assert_int_equal(wq_worker_new(db, cfg, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "noop", noop, NULL, &e), WQ_OK);
	if (wq_worker_run(w, &e) != WQ_OK)
		fail_msg("run: %s", e.message);
	wq_worker_free(w);
	wq_config_free(cfg);
	fprintf(stderr, "test_inproc: ran in %.1f s\n", mono() - t0);

	for (id = 1; id <= NOOP_N; id++) {
		wq_task t = task(db, id);

		if (atomic_load(&noop_runs[id]) != 1 || t.state != WQ_STATE_SUCCEEDED ||
		    t.attempts != 1)
			fail_msg("task %" PRId64 ": ran %d times, state %s, %d attempts", id,
				 atomic_load(&noop_runs[id]), wq_state_name(t.state), t.attempts);
	}
	assert_true(atomic_load(&noop_peak) <= 8);
	fprintf(stderr, "test_inproc: %d tasks drained in %.1f s, at most %d handlers at once\n",
		NOOP_N, mono() - t0, atomic_load(&noop_peak));
}

/* ---- concurrency: 8 handlers at once, never more ---- */

static atomic_int wide_active, wide_peak;

/* Holds its thread until 8 handlers are in at once (bounded): with fewer threads than
 * `concurrency` it would time out and fail. */
static wq_job_result wide(wq_job *job, void *ud)
{
	int now = atomic_fetch_add(&wide_active, 1) + 1, peak = atomic_load(&wide_peak);
	double end = mono() + WAIT_S;

	(void)job;
	(void)ud;
	while (now > peak && !atomic_compare_exchange_weak(&wide_peak, &peak, now))
		;
	while (atomic_load(&wide_peak) < 8 && mono() < end)
		usleep(1000);
	atomic_fetch_sub(&wide_active, 1);
	return atomic_load(&wide_peak) >= 8 ? WQ_JOB_SUCCEEDED : WQ_JOB_FAIL;
}

static void eight_at_once(void **state)
{
	wq_db *db = *state;
	wq_config *cfg = config("[worker]\nconcurrency = 8\npoll_interval = 20ms\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_worker *w = NULL;
	wq_error e;
	int64_t ids[16];

	for (int i = 0; i < 16; i++)
		ids[i] = enqueue(db, "wide", "{}");
	assert_int_equal(wq_worker_new(db, cfg, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "wide", wide, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_run(w, &e), WQ_OK);
	wq_worker_free(w);
	wq_config_free(cfg);
	assert_int_equal(atomic_load(&wide_peak), 8);
	for (int i = 0; i < 16; i++)
		assert_int_equal(task(db, ids[i]).state, WQ_STATE_SUCCEEDED);
}

/* ---- the job context ---- */

/* wave6 sqcpu: the idempotency key is computed when first asked for (job.c): asked at
 * once from the handler's thread and another, both get the operation's key. */
static char key_seen[2][WQ_IDEMPOTENCY_KEY_BUFSZ];

static void *ask_key(void *job)
{
	snprintf(key_seen[1], sizeof key_seen[1], "%s", wq_job_idempotency_key(job));
	return NULL;
}

static wq_job_result describe(wq_job *job, void *ud)
{
	size_t len;
	const char *p = wq_job_payload(job, &len);

	pthread_t th;
	int started = pthread_create(&th, NULL, ask_key, job) == 0;

	(void)ud;
	snprintf(key_seen[0], sizeof key_seen[0], "%s", wq_job_idempotency_key(job));
	if (started)
		pthread_join(th, NULL);
	snprintf(P.seen, sizeof(P.seen), "%.*s|%" PRId64 "|%d|%s|%s|%s|%s|%s|%d|%d|%zu|%d",
		 (int)len, p, wq_job_task_id(job), wq_job_attempt(job), wq_job_attempt_id(job),
		 wq_job_kind(job), wq_job_operation(job), wq_job_tenant(job), wq_job_scope(job),
		 wq_job_payload_version(job), wq_job_deadline(job) > 0, strlen(wq_job_idempotency_key(job)),
		 wq_job_cancelled(job));
	if (wq_job_set_result(job, "too large!", 10, NULL) != WQ_ETOOBIG)
		return WQ_JOB_FAIL;
	if (wq_job_set_result(job, "{\"ok\":1}", 8, NULL) != WQ_OK)
		return WQ_JOB_FAIL;
	return WQ_JOB_SUCCEEDED;
}

static void job_context_and_result(void **state)
{
	wq_db *db = *state;
	wq_config *cfg = config("[worker]\nresult_max = 9\n[kind.ctx]\ntimeout = 1h\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_enqueue_opts eo;
	wq_enqueued out;
	wq_worker *w = NULL;
	char want[512], *body = NULL;
	size_t blen = 0;
	wq_error e;
	wq_task t;

	probe_reset();
	memset(&eo, 0, sizeof(eo));
	eo.kind = "ctx";
	eo.payload = "{\"n\":42}";
	eo.payload_version = 2;
	eo.tenant = "acme";
	eo.scope = "eu";
	eo.key = "order-7";
	assert_int_equal(wq_enqueue(db, &eo, &out, &e), WQ_OK);
	assert_int_equal(wq_worker_new(db, cfg, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "ctx", describe, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_run(w, &e), WQ_OK);
	wq_worker_free(w);
	wq_config_free(cfg);

	snprintf(want, sizeof(want), "{\"n\":42}|%" PRId64 "|1|%" PRId64 ".1|ctx|order-7|acme|eu|2|1|%d|0",
		 out.id, out.id, WQ_IDEMPOTENCY_KEY_BUFSZ - 1);
	assert_string_equal(P.seen, want);
	assert_int_equal(wq_operation_idempotency_key("acme", "eu", "ctx", "order-7", 1, want, &e),
			 WQ_OK);
	assert_string_equal(key_seen[0], want);
	assert_string_equal(key_seen[1], want);
	t = task(db, out.id);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(wq_task_result(db, out.id, &body, &blen, &e), WQ_OK);
	assert_int_equal(blen, 8);
	assert_memory_equal(body, "{\"ok\":1}", 8);
	wq_free(body);
}

/* ---- registration rules ---- */

static void kind_is_command_or_inproc(void **state)
{
	wq_db *db = *state;
	wq_config *cmd = config("[kind.a]\ncommand = /bin/true\n[kind.b]\ntimeout = 1s\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_worker *w = NULL;
	wq_error e;

	assert_int_equal(wq_worker_new(db, cmd, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "a", noop, NULL, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "[kind.a] has a command"));
	assert_int_equal(wq_worker_register(w, "bad kind", noop, NULL, &e), WQ_EINVAL);
	/* b has no command and no handler: refused when the worker starts */
	assert_int_equal(wq_worker_run(w, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "[kind.b] has no command"));
	wq_worker_free(w);

	assert_int_equal(wq_worker_new(db, cmd, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "b", noop, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "b", noop, NULL, &e), WQ_EINVAL);
	assert_int_equal(wq_worker_run(w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "c", noop, NULL, &e), WQ_EINVAL);
	wq_worker_free(w);
	wq_config_free(cmd);

	cmd = config("[worker]\nconcurrency = 1\n");
	assert_int_equal(wq_worker_new(db, cmd, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_run(w, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "nothing to run"));
	wq_worker_free(w);
	wq_config_free(cmd);
}

/* ---- cancellation through the flag ---- */

#define STOP_INI                                                                       \
	"[worker]\nconcurrency = 1\nheartbeat = 100ms\npoll_interval = 20ms\n"            \
	"kill_grace = 20s\n"

/* cancel of a running task whose handler answers `answer` (after an effect when
 * effect_first): the task ends in `want` with reason `reason` ("" for none). */
static void cancel_case(wq_db *db, wq_job_result answer, int effect_first, wq_state want,
			const char *reason)
{
	struct runner r;
	int64_t id;
	wq_task t;
	wq_error e;

	probe_reset();
	P.answer = answer;
	P.effect_first = effect_first;
	id = enqueue(db, "slow", "{}");
	runner_start(&r, STOP_INI, "slow", stoppable, 0);
	probe_wait(&P.started, 1, "the handler to start");
	assert_int_equal(wq_task_cancel(db, id, NULL, &e), WQ_OK);
	t = wait_state(db, id, want);
	probe_wait(&P.returned, 1, "the handler to return");
	assert_int_equal(probe_get(&P.stop_seen), WQ_JOB_STOP_CANCEL);
	assert_string_equal(t.reason, reason);
	runner_stop(&r);
}

static void cancel_seen_through_flag(void **state)
{
	wq_db *db = *state;

	/* stopped before any effect */
	cancel_case(db, WQ_JOB_CANCELLED, 0, WQ_STATE_CANCELLED, "");
	/* said it stopped, but an effect is open */
	cancel_case(db, WQ_JOB_CANCELLED, 1, WQ_STATE_INTERRUPTED, "cancelled-while-running");
	/* any other answer after the cancel: unknown */
	cancel_case(db, WQ_JOB_RETRY, 0, WQ_STATE_INTERRUPTED, "killed");
}

/* ---- the runtime limit through the flag ---- */

static void runtime_limit_seen_through_flag(void **state)
{
	wq_db *db = *state;
	struct runner r;
	int64_t id;
	wq_task t;

	probe_reset();
	P.answer = WQ_JOB_FAIL;
	id = enqueue(db, "slow", "{}");
	runner_start(&r, STOP_INI "[kind.slow]\ntimeout = 200ms\n", "slow", stoppable, 0);
	t = wait_state(db, id, WQ_STATE_INTERRUPTED);
	probe_wait(&P.returned, 1, "the handler to return");
	assert_int_equal(probe_get(&P.stop_seen), WQ_JOB_STOP_RUNTIME_LIMIT);
	assert_string_equal(t.reason, "runtime-limit");
	assert_true(has_event(db, id, "stop-requested", "runtime-limit"));
	runner_stop(&r);
}

/* A handler that ignores its stop past kill_grace: recorded interrupted without it; its
 * thread is replaced (a second task runs at concurrency 1 while it still blocks); its
 * late journal call is refused; wq_worker_free waits for it. */
static void ignored_stop_is_interrupted_after_grace(void **state)
{
	wq_db *db = *state;
	struct runner r;
	int64_t id, id2;
	wq_task t;

	probe_reset();
	P.ignore_stop = 1;
	P.answer = WQ_JOB_SUCCEEDED;
	id = enqueue(db, "slow", "{}");
	runner_start(&r,
		     "[worker]\nconcurrency = 1\nheartbeat = 100ms\npoll_interval = 20ms\n"
		     "kill_grace = 200ms\n[kind.slow]\ntimeout = 100ms\n",
		     "slow", stoppable, 0);
	t = wait_state(db, id, WQ_STATE_INTERRUPTED);
	assert_string_equal(t.reason, "runtime-limit");
	assert_non_null(strstr(t.reason_detail, "did not return within kill_grace"));
	assert_int_equal(probe_get(&P.returned), 0); /* it still runs */
	/* the slot is free again: the next task runs on the replacement thread */
	id2 = enqueue(db, "slow", "{\"quick\":1}");
	t = wait_state(db, id2, WQ_STATE_SUCCEEDED);
	assert_int_equal(probe_get(&P.quick), 1);
	assert_int_equal(probe_get(&P.returned), 0); /* the first one still runs */
	probe_set(&P.release, 1);
	probe_wait(&P.returned, 1, "the abandoned handler to return");
	t = task(db, id);
	assert_int_equal(t.state, WQ_STATE_INTERRUPTED); /* its late SUCCEEDED is ignored */
	assert_int_equal(P.late_effect_rc, WQ_ESTALE);
	runner_stop(&r);
}

/* ---- the drain through the flag ---- */

static void drain_seen_through_flag(void **state)
{
	wq_db *db = *state;
	struct runner r;
	int64_t id;
	wq_task t;

	probe_reset();
	P.answer = WQ_JOB_FAIL;
	id = enqueue(db, "slow", "{}");
	runner_start(&r, STOP_INI "drain_timeout = 100ms\n", "slow", stoppable, 0);
	probe_wait(&P.started, 1, "the handler to start");
	wq_worker_stop(r.w); /* drain: 100 ms, then the flag */
	pthread_join(r.th, NULL);
	assert_int_equal(r.rc, WQ_OK);
	assert_int_equal(P.stop_seen, WQ_JOB_STOP_DRAIN);
	t = task(db, id);
	assert_int_equal(t.state, WQ_STATE_INTERRUPTED);
	assert_string_equal(t.reason, "drain-deadline");
	wq_worker_free(r.w);
	wq_config_free(r.cfg);
	wq_db_close(r.db);
}

/* ---- prefetch (issue 11, wave 4): tasks claimed ahead of a free slot ---- */

/* Concurrency 1, prefetch 3: the claim takes the slow task and the three quick ones
 * behind it, which wait in memory (running in the store, their attempt recorded). The
 * drain gives them back to pending at once, each with its prefetch-returned event and
 * without using up an attempt of its limit; a later worker runs each exactly once. */
static void prefetched_given_back_at_drain(void **state)
{
	wq_db *db = *state;
	struct runner r;
	int64_t slow, quick[3];
	wq_task t;
	int i;

	probe_reset();
	P.answer = WQ_JOB_FAIL;
	slow = enqueue(db, "slow", "{}");
	for (i = 0; i < 3; i++)
		quick[i] = enqueue(db, "slow", "{\"quick\":1}");
	runner_start(&r, STOP_INI "drain_timeout = 100ms\nprefetch = 3\n", "slow", stoppable,
		     0);
	probe_wait(&P.started, 1, "the slow handler to start");
	for (i = 0; i < 3; i++) /* claimed with it, kept: the slot is taken */
		t = wait_state(db, quick[i], WQ_STATE_RUNNING);
	assert_int_equal(probe_get(&P.quick), 0);
	wq_worker_stop(r.w);
	pthread_join(r.th, NULL);
	assert_int_equal(r.rc, WQ_OK);
	wq_worker_free(r.w);
	wq_config_free(r.cfg);
	wq_db_close(r.db);
	assert_int_equal(task(db, slow).state, WQ_STATE_INTERRUPTED);
	assert_int_equal(probe_get(&P.quick), 0); /* none of them ran */
	for (i = 0; i < 3; i++) {
		t = task(db, quick[i]);
		assert_int_equal(t.state, WQ_STATE_PENDING);
		assert_string_equal(t.reason, "prefetch-returned");
		assert_true(has_event(db, quick[i], "prefetch-returned", "\"attempt_id\""));
		assert_int_equal(t.attempts, 1);
	}
	/* a later worker runs each exactly once */
	runner_start(&r, STOP_INI "prefetch = 3\n", "slow", stoppable, 1);
	pthread_join(r.th, NULL);
	assert_int_equal(r.rc, WQ_OK);
	wq_worker_free(r.w);
	wq_config_free(r.cfg);
	wq_db_close(r.db);
	assert_int_equal(probe_get(&P.quick), 3);
	for (i = 0; i < 3; i++) {
		wq_attempt *a = NULL;
		size_t na = 0;
		wq_error e;

		t = task(db, quick[i]);
		assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
		assert_int_equal(t.attempts, 2);
		assert_int_equal(wq_attempts(db, quick[i], &a, &na, &e), WQ_OK);
		assert_int_equal(na, 2);
		assert_string_equal(a[0].outcome, "retry");
		assert_string_equal(a[0].reason, "prefetch-returned");
		assert_string_equal(a[1].outcome, "succeeded");
		wq_free(a);
	}
}

/* ---- the effect journal from C ---- */

static atomic_int eff_status[3];
static char eff_seen[64];

static wq_job_result effectful(wq_job *job, void *ud)
{
	int n = wq_job_attempt(job);
	wq_effect_status st = 0;
	char *res = NULL;

	(void)ud;
	if (n > 2 || wq_job_effect_begin(job, "charge", &st, &res, NULL) != WQ_OK)
		return WQ_JOB_FAIL;
	atomic_store(&eff_status[n], st);
	if (n == 1) {
		if (st != WQ_EFFECT_NEW || wq_job_effect_done(job, "charge", "ch_1", NULL) != WQ_OK)
			return WQ_JOB_FAIL;
		return WQ_JOB_RETRY; /* after the effect: the next attempt must skip it */
	}
	snprintf(eff_seen, sizeof(eff_seen), "%s", res ? res : "(null)");
	wq_free(res);
	return WQ_JOB_SUCCEEDED;
}

static void effect_journal_from_c(void **state)
{
	wq_db *db = *state;
	wq_config *cfg = config("[worker]\npoll_interval = 20ms\n"
				"[kind.pay]\nretry_backoff = 10ms\nmax_attempts = 3\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_worker *w = NULL;
	wq_attempt *at = NULL;
	size_t n = 0;
	wq_error e;
	int64_t id;
	wq_task t;

	id = enqueue(db, "pay", "{}");
	assert_int_equal(wq_worker_new(db, cfg, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "pay", effectful, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_run(w, &e), WQ_OK);
	wq_worker_free(w);
	wq_config_free(cfg);

	assert_int_equal(atomic_load(&eff_status[1]), WQ_EFFECT_NEW);
	assert_int_equal(atomic_load(&eff_status[2]), WQ_EFFECT_DONE);
	assert_string_equal(eff_seen, "ch_1");
	t = task(db, id);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(t.attempts, 2);
	assert_int_equal(wq_attempts(db, id, &at, &n, &e), WQ_OK);
	assert_int_equal(n, 2);
	assert_string_equal(at[0].outcome, "retry");
	assert_string_equal(at[0].reason, "handler-retry");
	assert_int_equal(at[0].exit_status, -1);
	wq_free(at);
	assert_true(has_event(db, id, "effect-begun", "charge"));
	assert_true(has_event(db, id, "effect-done", "charge"));
	assert_true(has_event(db, id, "effect-skipped", "charge"));
	assert_true(has_event(db, id, "started", "in_process"));
}

/* ---- follow-ups and the result limit (issue 10) ---- */

static wq_job_result fan_out(wq_job *job, void *ud)
{
	(void)ud;
	if (wq_job_followup(job, "leaf", "{\"i\":1}", "x", 0, NULL, NULL) != WQ_OK ||
	    wq_job_followup(job, "leaf", NULL, NULL, 3600 * INT64_C(1000000), "agent:a", NULL) !=
		    WQ_OK ||
	    wq_job_followup(job, "bad kind!", NULL, NULL, 0, NULL, NULL) != WQ_EINVAL)
		return WQ_JOB_FAIL;
	wq_job_set_result(job, "twelve bytes", 12, NULL); /* beyond acme's limit: refused */
	return WQ_JOB_SUCCEEDED;
}

static wq_job_result leaf(wq_job *job, void *ud)
{
	(void)job;
	(void)ud;
	return WQ_JOB_SUCCEEDED;
}

/* wq_job_followup: created with the success, linked to the parent, the delayed one due
 * later; a success whose result is beyond the tenant's max_result_bytes fails
 * (result-too-large) and creates none. */
static void followups_from_c(void **state)
{
	wq_db *db = *state;
	wq_config *cfg = config("[limits.acme]\nmax_result_bytes = 10\n");
	wq_worker_opts o = { .until_idle = 1, .log = quiet_log };
	wq_enqueue_opts eo;
	wq_enqueued ok, big;
	wq_worker *w = NULL;
	int64_t parent = -1, *kids = NULL;
	size_t n = 0;
	wq_error e;
	wq_task t;

	memset(&eo, 0, sizeof(eo));
	eo.kind = "fan";
	assert_int_equal(wq_enqueue(db, &eo, &ok, &e), WQ_OK);
	eo.tenant = "acme";
	assert_int_equal(wq_enqueue(db, &eo, &big, &e), WQ_OK);
	assert_int_equal(wq_worker_new(db, cfg, &o, &w, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "fan", fan_out, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_register(w, "leaf", leaf, NULL, &e), WQ_OK);
	assert_int_equal(wq_worker_run(w, &e), WQ_OK);
	wq_worker_free(w);
	wq_config_free(cfg);

	assert_int_equal(task(db, ok.id).state, WQ_STATE_SUCCEEDED);
	assert_int_equal(wq_task_family(db, ok.id, &parent, &kids, &n, &e), WQ_OK);
	assert_int_equal(parent, 0);
	assert_int_equal(n, 2);
	t = task(db, kids[0]);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_string_equal(t.kind, "leaf");
	t = task(db, kids[1]);
	assert_int_equal(t.state, WQ_STATE_PENDING); /* due in an hour */
	assert_true(t.due_at > t.created_at + 3500 * INT64_C(1000000));
	assert_int_equal(has_event(db, ok.id, "followup-created", "agent:a"), 1);
	free(kids);

	t = task(db, big.id);
	assert_int_equal(t.state, WQ_STATE_FAILED);
	assert_string_equal(t.reason, "result-too-large");
	assert_non_null(strstr(t.reason_detail, "max_result_bytes ([limits.acme]) is 10 bytes"));
	assert_int_equal(wq_task_family(db, big.id, &parent, &kids, &n, &e), WQ_OK);
	assert_int_equal(n, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(kind_is_command_or_inproc, setup, teardown),
		cmocka_unit_test_setup_teardown(job_context_and_result, setup, teardown),
		cmocka_unit_test_setup_teardown(effect_journal_from_c, setup, teardown),
		cmocka_unit_test_setup_teardown(followups_from_c, setup, teardown),
		cmocka_unit_test_setup_teardown(cancel_seen_through_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(runtime_limit_seen_through_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(ignored_stop_is_interrupted_after_grace, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drain_seen_through_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(prefetched_given_back_at_drain, setup, teardown),
		cmocka_unit_test_setup_teardown(eight_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(ten_thousand_noops, setup, teardown),
	};
	int rc = fresh_store_begin("test_inproc", argc, argv);

	if (rc != 0)
		return rc;
	backend = fresh_store_backend();
	rc = cmocka_run_group_tests_name(backend, tests, NULL, NULL);
	fresh_store_end();
	return rc;
}
