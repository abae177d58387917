/*
 * test_store.c — the contract of the store operations (src/store/op_*.c), run against
 * one driver per process: `test_store sqlite` (a temporary file) or `test_store
 * postgres` (a fresh database on $WAKEQ_TEST_PG_URL, skipped without it). The tests call
 * the operations through the method table directly, as the core does, with times chosen
 * by the test.
 */
#include "internal.h"
#include "store/op.h"
#include "fresh_store.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef WQ_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

#define FP "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define T0 INT64_C(1700000000000000)

static const struct wq__store_methods *M;
static const char *backend;
static const char *url; /* the test's store (fresh_store.h) */

struct fx {
	struct wq__store *s;
	int64_t now;
};

/* ---- one fresh store per test (fresh_store.h) ---- */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	wq_error e;

	assert_non_null(f);
	url = fresh_store_new();
	assert_int_equal(M->open(url, WQ_OPEN_MIGRATE, &f->s, &e), WQ_OK);
	f->now = T0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	M->close(f->s);
	free(f);
	fresh_store_drop();
	return 0;
}

/* ---- helpers ---- */

static void instance(struct fx *f, const char *id)
{
	struct wq__instance in;
	wq_error e;

	memset(&in, 0, sizeof(in));
	snprintf(in.id, sizeof(in.id), "%s", id);
	snprintf(in.host, sizeof(in.host), "host-a");
	snprintf(in.host_id, sizeof(in.host_id), "boot/4026531836");
	in.pid = 4242;
	in.proc_start = 99;
	in.started_at = in.heartbeat_at = f->now;
	assert_int_equal(M->instance_register(f->s, &in, &e), WQ_OK);
}

static wq_rc enqueue(struct fx *f, const char *key, const char *notify, int64_t *id,
		     wq_error *e)
{
	struct wq__new_task t;
	struct wq__enqueued_row row;
	char op[32];
	wq_rc rc;

	snprintf(op, sizeof(op), "op_%" PRId64, f->now);
	memset(&t, 0, sizeof(t));
	t.kind = "k";
	t.tenant = "";
	t.scope = "";
	t.operation = key ? key : op;
	t.key = key;
	t.payload = "{\"a\":1}";
	t.payload_len = 7;
	t.payload_version = 1;
	t.payload_sha256 = FP;
	t.fingerprint = FP;
	t.notify = notify;
	t.due_at = t.order_at = t.now = f->now;
	t.max_attempts = 3;
	memset(&row, 0, sizeof(row));
	rc = M->enqueue(f->s, &t, &row, e);
	if (rc == WQ_OK && id)
		*id = row.id;
	return rc;
}

/* Claims for inst; *one (may be NULL) gets the claimed task with the highest id. */
static size_t claim(struct fx *f, const char *inst, struct wq__claimed *one)
{
	static const char *const kinds[] = {"k"};
	struct wq__claim_req req = {.instance = inst, .kinds = kinds, .nkinds = 1, .limit = 10, .now = f->now};
	struct wq__claimed *out = NULL;
	size_t n = 0, i;
	wq_error e;

	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		if (i == n - 1 && one) { /* the newest */
			*one = out[i];
			one->payload = NULL;
		}
		free(out[i].payload);
	}
	free(out);
	return n;
}

/* An outcome of kind k for claimed task c, recorded by instance inst at now. */
static struct wq__outcome outcome_of(const struct wq__claimed *c, const char *inst,
				     enum wq__finish_kind k, int64_t now)
{
	struct wq__outcome o;

	memset(&o, 0, sizeof(o));
	o.task_id = c->id;
	o.attempt = c->attempt;
	o.instance = inst;
	o.kind = k;
	o.now = now;
	return o;
}

static struct wq__outcome succeeded(const struct wq__claimed *c, const char *inst, int64_t now)
{
	struct wq__outcome o = outcome_of(c, inst, WQ__FINISH_SUCCEEDED, now);

	o.result = "done";
	o.result_len = 4;
	o.result_sha256 = FP;
	o.exit_status = 0;
	return o;
}

/* The number of events of `type` on task id, and the highest event id. */
static int events_of(struct fx *f, int64_t id, const char *type, int64_t *max_id)
{
	wq_event *ev = NULL;
	size_t n = 0, i;
	int count = 0;
	wq_error e;

	assert_int_equal(M->events(f->s, id, &ev, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		count += strcmp(ev[i].type, type) == 0;
		if (max_id && ev[i].id > *max_id)
			*max_id = ev[i].id;
	}
	free(ev);
	return count;
}

static struct wq__outcome cancelled(const struct wq__claimed *c, const char *inst, int64_t now)
{
	struct wq__outcome o = outcome_of(c, inst, WQ__FINISH_CANCELLED, now);

	o.exit_status = 75;
	return o;
}

static wq_effect_status begin_effect(struct fx *f, const struct wq__claimed *c, const char *name)
{
	wq_effect_status st = 0;
	char *result = NULL;
	wq_error e;

	assert_int_equal(M->effect_begin(f->s, c->id, c->attempt, name, f->now, &st, &result, &e),
			 WQ_OK);
	free(result);
	return st;
}

/* ---- the contract ---- */

/* Defect (a): a worker declared lost (its row deleted) claims nothing under its old id,
 * neither tasks nor deliveries. */
static void lost_instance_cannot_claim(void **state)
{
	struct fx *f = *state;
	struct wq__delivery_claimed *d = NULL;
	struct wq__claimed c;
	wq_task t;
	size_t n = 9;
	int64_t id;
	int count = -1;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(M->instance_reap(f->s, "w1", f->now, "worker-lost", f->now, &count, &e),
			 WQ_OK);
	assert_int_equal(count, 0);
	assert_int_equal(claim(f, "w1", &c), 0);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_PENDING);
	assert_int_equal(t.attempts, 0);

	/* deliveries too: a delivery made due by another instance's success */
	instance(f, "w2");
	assert_int_equal(enqueue(f, "with-notify", "[\"inbox:bob\"]", &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w2", &c), 2); /* both tasks */
	{
		struct wq__outcome o = succeeded(&c, "w2", f->now);

		assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	}
	assert_int_equal(M->delivery_claim(f->s, "w1", 5, f->now + 1, &d, &n, &e), WQ_OK);
	assert_int_equal(n, 0);
	free(d);
}

/* A finish under a stale attempt changes nothing but a stale-outcome event. */
static void stale_finish_records_only_stale_outcome(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_task before, after;
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	assert_int_equal(M->get(f->s, id, &before, &e), WQ_OK);
	o = succeeded(&c, "w1", f->now + 5);
	o.attempt = c.attempt + 1;
	assert_int_equal(M->finish(f->s, &o, &e), WQ_ESTALE);
	o.attempt = c.attempt;
	o.instance = "w-other";
	assert_int_equal(M->finish(f->s, &o, &e), WQ_ESTALE);
	assert_int_equal(M->get(f->s, id, &after, &e), WQ_OK);
	assert_int_equal(after.state, WQ_STATE_RUNNING);
	assert_int_equal(after.has_result, 0);
	assert_int_equal(after.updated_at, before.updated_at);
	assert_int_equal(events_of(f, id, "stale-outcome", NULL), 2);
	assert_int_equal(events_of(f, id, "succeeded", NULL), 0);
	/* and the real owner still records its outcome */
	o.instance = "w1";
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
}

/* A finish repeated after a lost COMMIT answer recognises its own outcome. */
static void finish_repeated_is_recognised(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	o = succeeded(&c, "w1", f->now + 5);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(events_of(f, id, "succeeded", NULL), 1);
	assert_int_equal(events_of(f, id, "stale-outcome", NULL), 0);
}

/* Defect (b): ids that leave the store are never handed out again. */
static void ids_not_reused_after_prune(void **state)
{
	struct fx *f = *state;
	struct wq__delivery_claimed *d = NULL;
	struct wq__delivery_outcome dout;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_notification *inbox = NULL;
	wq_prune_counts pc;
	int64_t a, b, ev_a = 0, ev_b = INT64_MAX, dlv_a;
	wq_event *ev = NULL;
	size_t n = 0, i;
	int round;
	wq_error e;

	instance(f, "w1");
	for (round = 0; round < 2; round++) {
		f->now += 1000;
		assert_int_equal(enqueue(f, NULL, "[\"inbox:bob\"]", round ? &b : &a, &e), WQ_OK);
		assert_int_equal(claim(f, "w1", &c), 1);
		o = succeeded(&c, "w1", f->now);
		assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
		assert_int_equal(M->delivery_claim(f->s, "w1", 5, f->now, &d, &n, &e), WQ_OK);
		assert_int_equal(n, 1);
		memset(&dout, 0, sizeof(dout));
		dout.id = d[0].id;
		dout.attempts = d[0].attempts;
		dout.instance = "w1";
		dout.kind = WQ__DELIVERY_DELIVERED;
		dout.inbox = "bob";
		dout.status = -1;
		dout.now = f->now;
		assert_int_equal(M->delivery_finish(f->s, &dout, &e), WQ_OK);
		if (round == 0) {
			dlv_a = d[0].id;
			events_of(f, a, "accepted", &ev_a);
			assert_int_equal(M->prune(f->s, f->now + 1, f->now + 1, &pc, &e), WQ_OK);
			assert_int_equal(pc.tasks, 1);
		} else {
			assert_true(d[0].id > dlv_a);
		}
		free(d);
		d = NULL;
	}
	assert_true(b > a);
	assert_int_equal(M->events(f->s, b, &ev, &n, &e), WQ_OK);
	for (i = 0; i < n; i++)
		if (ev[i].id < ev_b)
			ev_b = ev[i].id;
	free(ev);
	assert_true(ev_b > ev_a);
	/* both notifications are there: `delivery:<id>` was not taken by the pruned one */
	assert_int_equal(M->inbox_list(f->s, "bob", 0, &inbox, &n, &e), WQ_OK);
	assert_int_equal(n, 2);
	assert_true(inbox[1].id > inbox[0].id);
	assert_true(inbox[1].delivery_id > inbox[0].delivery_id);
	free(inbox);
}

/* Defect (c): identity fields are never rewritten: invalid UTF-8 is refused, and nothing
 * is written. */
static void invalid_utf8_key_refused(void **state)
{
	struct fx *f = *state;
	wq_task *all = NULL;
	int64_t id = 0, tid = 0;
	size_t n = 9;
	wq_error e;

	assert_int_equal(enqueue(f, "order-\xff", NULL, &id, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "UTF-8"));
	assert_int_equal(enqueue(f, "order-\xfe", NULL, &id, &e), WQ_EINVAL);
	assert_int_equal(M->list(f->s, NULL, &all, &n, &e), WQ_OK);
	assert_int_equal(n, 0);
	free(all);
	assert_int_equal(M->operation_find(f->s, "", "", "k", "order-\xff", &tid, &e), WQ_EINVAL);
	/* a valid key with the same prefix is its own operation */
	assert_int_equal(enqueue(f, "order-\xc3\xbf", NULL, &id, &e), WQ_OK);
	assert_int_equal(M->operation_find(f->s, "", "", "k", "order-\xc3\xbf", &tid, &e), WQ_OK);
	assert_int_equal(tid, id);
}

/* Registering the same instance again (a retry) is fine; another one under its id is a
 * conflict. host_id is stored and listed. */
static void instance_register_again(void **state)
{
	struct fx *f = *state;
	struct wq__instance in, *list = NULL;
	size_t n = 0;
	wq_error e;

	instance(f, "w1");
	instance(f, "w1");
	memset(&in, 0, sizeof(in));
	snprintf(in.id, sizeof(in.id), "w1");
	snprintf(in.host, sizeof(in.host), "host-b");
	in.pid = 1;
	assert_int_equal(M->instance_register(f->s, &in, &e), WQ_ECONFLICT);
	assert_int_equal(M->instance_list(f->s, &list, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].host_id, "boot/4026531836");
	free(list);
}

/* A keyed enqueue: same input replays, other input conflicts (and says so on the task). */
static void keyed_enqueue_replay_and_conflict(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t;
	struct wq__enqueued_row row;
	int64_t a = 0, b = 0;
	wq_error e;

	assert_int_equal(enqueue(f, "k1", NULL, &a, &e), WQ_OK);
	assert_int_equal(enqueue(f, "k1", NULL, &b, &e), WQ_OK);
	assert_int_equal(a, b);
	memset(&t, 0, sizeof(t));
	t.kind = "k";
	t.tenant = t.scope = "";
	t.operation = t.key = "k1";
	t.payload = "{}";
	t.payload_len = 2;
	t.payload_version = 1;
	t.payload_sha256 = FP;
	t.fingerprint = "ff" FP;
	t.max_attempts = 1;
	assert_int_equal(M->enqueue(f->s, &t, &row, &e), WQ_ECONFLICT);
	assert_int_equal(events_of(f, a, "replayed", NULL), 1);
	assert_int_equal(events_of(f, a, "conflict", NULL), 1);
}

/* An operation recorded by 0.1.0 holds the legacy fingerprint: the same input offered
 * with the new fingerprint and its legacy one is a replay, not a conflict. */
static void legacy_fingerprint_replays(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t;
	struct wq__enqueued_row row, again;
	wq_error e;

	memset(&t, 0, sizeof(t));
	t.kind = "k";
	t.tenant = t.scope = "";
	t.operation = t.key = "old-1";
	t.payload = "{}";
	t.payload_len = 2;
	t.payload_version = 1;
	t.payload_sha256 = FP;
	t.fingerprint = "aa23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; /* as 0.1.0 stored it */
	t.max_attempts = 1;
	t.now = f->now;
	assert_int_equal(M->enqueue(f->s, &t, &row, &e), WQ_OK);
	t.fingerprint = "bb23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; /* this version's algorithm */
	t.fingerprint_legacy = "aa23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(M->enqueue(f->s, &t, &again, &e), WQ_OK);
	assert_int_equal(again.replayed, 1);
	assert_int_equal(again.id, row.id);
	t.fingerprint_legacy = "cc23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; /* other input: still a conflict */
	assert_int_equal(M->enqueue(f->s, &t, &again, &e), WQ_ECONFLICT);
}

/* An instance reaped while running: its task is interrupted, and its late outcome is
 * stale. */
static void reap_interrupts_and_fences(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_task t;
	int64_t id;
	int count = 0;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	assert_int_equal(M->instance_reap(f->s, "w1", f->now + 1, "worker-lost", f->now, &count, &e),
			 WQ_OK);
	assert_int_equal(count, 0); /* it heartbeat meanwhile: left alone */
	assert_int_equal(M->instance_reap(f->s, "w1", f->now, "worker-lost", f->now, &count, &e),
			 WQ_OK);
	assert_int_equal(count, 1);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_INTERRUPTED);
	o = succeeded(&c, "w1", f->now + 1);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_ESTALE);
	assert_int_equal(M->instance_heartbeat(f->s, "w1", f->now + 2, &e), WQ_ENOTFOUND);
}

/* Item 6 (SPEC §13): a cancel confirmed by the handler ends `cancelled` only when the
 * attempt left no effect begun and unconfirmed; otherwise `interrupted`
 * (cancelled-while-running) naming the effect. */
static void cancel_after_effect_begun_is_interrupted(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_state after = 0;
	wq_task t;
	int64_t a, b, d;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &a, &e), WQ_OK);
	f->now++;
	assert_int_equal(enqueue(f, NULL, NULL, &b, &e), WQ_OK);
	f->now++;
	assert_int_equal(enqueue(f, NULL, NULL, &d, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 3);

	/* a: effect begun, not confirmed, then cancelled */
	c.id = a;
	c.attempt = 1;
	assert_int_equal(M->cancel(f->s, a, f->now, &after, &e), WQ_OK);
	assert_int_equal(after, WQ_STATE_RUNNING);
	assert_int_equal(begin_effect(f, &c, "send-mail"), WQ_EFFECT_NEW);
	o = cancelled(&c, "w1", f->now + 1);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->get(f->s, a, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_INTERRUPTED);
	assert_string_equal(t.reason, "cancelled-while-running");
	assert_string_equal(t.reason_detail, "effect send-mail begun, not confirmed");
	assert_int_equal(events_of(f, a, "cancelled", NULL), 0);
	assert_int_equal(events_of(f, a, "interrupted", NULL), 1);
	/* the same finish repeated (a lost COMMIT answer) is recognised */
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(events_of(f, a, "stale-outcome", NULL), 0);

	/* b: effect begun and confirmed, then cancelled: nothing is unknown */
	c.id = b;
	assert_int_equal(begin_effect(f, &c, "send-mail"), WQ_EFFECT_NEW);
	assert_int_equal(M->effect_done(f->s, b, 1, "send-mail", "ok", f->now, &e), WQ_OK);
	o = cancelled(&c, "w1", f->now + 1);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->get(f->s, b, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_CANCELLED);

	/* d: no effect at all */
	c.id = d;
	o = cancelled(&c, "w1", f->now + 1);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->get(f->s, d, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_CANCELLED);
}

/* Doctor's rows of one kind for task id (tasks running since before stuck_before are
 * stuck; *row gets the last row found when non-NULL). */
static int doctor_rows_at(struct fx *f, int64_t stuck_before, int64_t id,
			  enum wq__doctor_kind kind, struct wq__doctor_row *row)
{
	struct wq__doctor_row *rows = NULL;
	size_t n = 0, i;
	int count = 0;
	wq_error e;

	assert_int_equal(M->doctor(f->s, stuck_before, &rows, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		if (rows[i].task_id != id || rows[i].kind != kind)
			continue;
		count++;
		if (row)
			*row = rows[i];
	}
	free(rows);
	return count;
}

static int doctor_rows(struct fx *f, int64_t id, enum wq__doctor_kind kind)
{
	return doctor_rows_at(f, 0, id, kind, NULL);
}

static void resolve(struct fx *f, int64_t id, wq_resolution d)
{
	struct wq__resolve r = {id, d, NULL, "operator", f->now};
	wq_error e;

	assert_int_equal(M->resolve(f->s, &r, &e), WQ_OK);
}

/* Item 15: an attempt that got `uncertain` did not begin the effect (effect-begun-twice
 * means two `new` answers); a resolution answers the task's effect findings, and an
 * attempt that begins the effect again after it makes it a finding again. */
static void doctor_effect_findings_and_resolution(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_task t;
	int64_t id;
	int count = 0;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, "mail-a", NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	assert_int_equal(begin_effect(f, &c, "send-mail"), WQ_EFFECT_NEW);
	assert_int_equal(M->instance_reap(f->s, "w1", f->now, "worker-lost", f->now, &count, &e),
			 WQ_OK);
	assert_int_equal(count, 1);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_UNCERTAIN), 1);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_INTERRUPTED), 1);

	/* a retry finds it uncertain: still begun once */
	instance(f, "w2");
	f->now += 1000;
	resolve(f, id, WQ_RESOLVE_RETRY);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_UNCERTAIN), 0); /* answered */
	assert_int_equal(claim(f, "w2", &c), 1);
	assert_int_equal(c.attempt, 2);
	assert_int_equal(begin_effect(f, &c, "send-mail"), WQ_EFFECT_UNCERTAIN);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_UNCERTAIN), 1); /* begun again */
	o = succeeded(&c, "w2", f->now + 1);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_string_equal(t.reason, "uncertain-effect");
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_EFFECT_TWICE), 0);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_UNCERTAIN), 1);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_INTERRUPTED), 1);

	/* the operator decides: nothing about this task is left to report */
	f->now += 1000;
	resolve(f, id, WQ_RESOLVE_SUCCEEDED);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_EFFECT_TWICE), 0);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_UNCERTAIN), 0);
	assert_int_equal(doctor_rows(f, id, WQ__DOCTOR_INTERRUPTED), 0);
}

/* Item 13: a kind's attempt limit overrides the task's; the claim records it on the task
 * row in the same transaction, so reads show the limit that applies. */
static void claim_records_kind_limit(void **state)
{
	static const char *const kinds[] = {"k", "other"};
	static const int limits[] = {2, 0};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 2, .limit = 10, .max_attempts = limits};
	struct wq__claimed *out = NULL;
	wq_task t;
	size_t n = 0, i;
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK); /* max_attempts 3 */
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.max_attempts, 3); /* before the first claim: its own */
	req.now = f->now;
	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].max_attempts, 2);
	for (i = 0; i < n; i++)
		free(out[i].payload);
	free(out);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.max_attempts, 2);
}

/* wave7 drain: the kind's limit is looked up by the kind's whole name (SQLite:
 * json_extract with a quoted label, no json_each per claimed row): a name with '.' and
 * '-' (allowed in kinds) is one label, never a path through another kind's entry. */
static void claim_kind_limit_dotted_name(void **state)
{
	static const char *const kinds[] = {"a", "a.b-c"};
	static const int limits[] = {5, 2};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 2, .limit = 10,
				    .max_attempts = limits};
	struct wq__claimed *out = NULL;
	struct wq__new_task t;
	struct wq__enqueued_row row;
	size_t n = 0, i;
	wq_task got;
	wq_error e;

	instance(f, "w1");
	memset(&t, 0, sizeof(t));
	memset(&row, 0, sizeof(row));
	t.kind = "a.b-c";
	t.tenant = t.scope = "";
	t.operation = "op-dotted";
	t.payload = "{}";
	t.payload_len = 2;
	t.payload_version = 1;
	t.payload_sha256 = t.fingerprint = FP;
	t.due_at = t.order_at = t.now = f->now;
	t.max_attempts = 3;
	assert_int_equal(M->enqueue(f->s, &t, &row, &e), WQ_OK);
	req.now = f->now;
	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].max_attempts, 2);
	for (i = 0; i < n; i++)
		free(out[i].payload);
	free(out);
	assert_int_equal(M->get(f->s, row.id, &got, &e), WQ_OK);
	assert_int_equal(got.max_attempts, 2);
}

/* wave7 drain: a claim of 40 writes 40 attempts rows and 80 events in one transaction
 * (SQLite: attempts 32 + 8 rows a statement; events queued, then written 32, 32, 8 and
 * 8 to a statement): each task has its attempt row (this instance, this start), its
 * `claimed` then its `started`, every event id above the ids before the claim. */
static void claim_many_events_in_order(void **state)
{
	static const char *const kinds[] = {"k"};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 1, .limit = 40};
	struct wq__claimed *out = NULL;
	wq_event *ev = NULL;
	wq_attempt *att = NULL;
	int64_t before = 0;
	size_t n = 0, nev = 0, natt = 0, i;
	wq_error e;

	instance(f, "w1");
	for (i = 0; i < 40; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, NULL, &e), WQ_OK);
	}
	events_of(f, 1, "accepted", &before);
	req.now = f->now;
	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	assert_int_equal(n, 40);
	for (i = 0; i < n; i++) {
		assert_int_equal(M->events(f->s, out[i].id, &ev, &nev, &e), WQ_OK);
		assert_int_equal(nev, 3);
		assert_string_equal(ev[1].type, "claimed");
		assert_string_equal(ev[2].type, "started");
		assert_true(ev[1].id > before);
		assert_true(ev[2].id > ev[1].id);
		free(ev);
		assert_int_equal(M->attempts(f->s, out[i].id, &att, &natt, &e), WQ_OK);
		assert_int_equal(natt, 1);
		assert_int_equal(att[0].attempt, 1);
		assert_string_equal(att[0].instance, "w1");
		assert_true(att[0].started_at == req.now);
		free(att);
		free(out[i].payload);
	}
	free(out);
}

/* Item 2: a task running since before the bound is reported stuck, with its instance
 * and start; a task running for less is not, nor one that finished. */
static void doctor_reports_stuck_running(void **state)
{
	struct fx *f = *state;
	struct wq__doctor_row row;
	struct wq__claimed c;
	struct wq__outcome o;
	const int64_t hour = INT64_C(3600000000);
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	/* an hour's bound, asked right away: not stuck */
	assert_int_equal(doctor_rows_at(f, f->now - hour, id, WQ__DOCTOR_STUCK, NULL), 0);
	/* asked three hours later */
	memset(&row, 0, sizeof(row));
	assert_int_equal(doctor_rows_at(f, f->now + 3 * hour - hour, id, WQ__DOCTOR_STUCK, &row), 1);
	assert_string_equal(row.instance, "w1");
	assert_true(row.since == f->now);
	assert_int_equal(row.attempt, 1);
	o = succeeded(&c, "w1", f->now + 3 * hour);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(doctor_rows_at(f, f->now + 3 * hour, id, WQ__DOCTOR_STUCK, NULL), 0);
}

/* ---- operator's side (issue 14) ---- */

/* retry: only failed or cancelled; a new round with the budget counted from the attempts
 * used, under a kind's limit too; a `retried` event; the claim after it is attempt n+1. */
static void retry_new_round(void **state)
{
	static const char *const kinds[] = {"k"};
	static const int limits[] = {2};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 1, .limit = 10, .max_attempts = limits};
	struct wq__claimed *out = NULL;
	struct wq__retry r = {0, "why", "alice", 0};
	struct wq__outcome o;
	struct wq__claimed c;
	wq_task t;
	size_t n = 0;
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, "key-1", NULL, &id, &e), WQ_OK); /* max_attempts 3 */
	r.task_id = id;
	r.now = f->now;
	assert_int_equal(M->retry(f->s, &r, &e), WQ_ESTATE); /* pending */
	assert_non_null(strstr(e.message, "pending"));
	assert_int_equal(claim(f, "w1", &c), 1);
	o = outcome_of(&c, "w1", WQ__FINISH_FAILED, f->now);
	o.reason = "exit-1";
	o.exit_status = 1;
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->retry(f->s, &r, &e), WQ_OK);
	assert_int_equal(M->retry(f->s, &r, &e), WQ_ESTATE); /* pending again */
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_PENDING);
	assert_int_equal(t.attempts, 1);
	assert_int_equal(t.max_attempts, 4); /* 1 used + a budget of 3 */
	assert_int_equal(t.finished_at, 0);
	assert_int_equal(events_of(f, id, "retried", NULL), 1);
	/* the kind's limit applies on top of the base: 1 + 2 */
	req.now = f->now;
	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].attempt, 2);
	assert_int_equal(out[0].max_attempts, 3);
	free(out[0].payload);
	free(out);
	assert_int_equal(M->retry(f->s, &r, &e), WQ_ESTATE); /* running */
	r.task_id = id + 1000;
	assert_int_equal(M->retry(f->s, &r, &e), WQ_ENOTFOUND);
}

/* prune keeps a finished task whose delivery is pending; the preview deletes nothing. */
static void prune_keeps_owed_delivery(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	wq_prune_counts pc = {0, 0};
	wq_task t;
	int64_t owed, plain;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, "[\"webhook:x\"]", &owed, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	o = succeeded(&c, "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	f->now++;
	assert_int_equal(enqueue(f, NULL, NULL, &plain, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	o = succeeded(&c, "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->get(f->s, owed, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(M->prune_preview(f->s, f->now + 10, f->now + 10, &pc, &e), WQ_OK);
	assert_int_equal(pc.tasks, 1);
	assert_int_equal(M->get(f->s, plain, &t, &e), WQ_OK); /* still there */
	assert_int_equal(M->prune(f->s, f->now + 10, f->now + 10, &pc, &e), WQ_OK);
	assert_int_equal(pc.tasks, 1);
	assert_int_equal(M->get(f->s, owed, &t, &e), WQ_OK);
	assert_int_equal(M->get(f->s, plain, &t, &e), WQ_ENOTFOUND);
}

#include "store_schedule_cases.h" /* schedules (issue 12) */

/* ---- turn locks, paused kinds (issue 10) ---- */

/* A pending task of `kind` with turn lock `lock` (NULL: none), due at due_at and ordered
 * at order_at (0: the fixture's clock, a microsecond after the previous task's: FIFO by
 * enqueue); its id. */
static int64_t enqueue_task(struct fx *f, const char *kind, const char *lock, int64_t due_at,
			    int64_t order_at)
{
	struct wq__new_task t;
	struct wq__enqueued_row row;
	char op[48];
	wq_error e;

	f->now++;
	snprintf(op, sizeof(op), "op_%s_%" PRId64, kind, f->now);
	memset(&t, 0, sizeof(t));
	t.kind = kind;
	t.tenant = t.scope = "";
	t.operation = op;
	t.payload = "{}";
	t.payload_len = 2;
	t.payload_version = 1;
	t.payload_sha256 = t.fingerprint = FP;
	t.now = f->now;
	t.due_at = due_at ? due_at : f->now;
	t.order_at = order_at ? order_at : f->now;
	t.max_attempts = 3;
	t.lock = lock;
	memset(&row, 0, sizeof(row));
	assert_int_equal(M->enqueue(f->s, &t, &row, &e), WQ_OK);
	return row.id;
}

/* A task of kind k with turn lock `lock` (or none), due and ordered at due_at (0: now). */
static int64_t enqueue_at(struct fx *f, const char *lock, int64_t due_at)
{
	return enqueue_task(f, "k", lock, due_at, due_at);
}

static int64_t enqueue_locked(struct fx *f, const char *lock)
{
	return enqueue_at(f, lock, 0);
}

/* Claims up to 10 for inst; the claimed ids in ids[] (ascending), their count returned. */
static size_t claim_ids(struct fx *f, const char *inst, int64_t *ids, struct wq__claimed *all)
{
	static const char *const kinds[] = {"k"};
	struct wq__claim_req req = {.instance = inst, .kinds = kinds, .nkinds = 1, .limit = 10, .now = f->now};
	struct wq__claimed *out = NULL;
	size_t n = 0, i;
	wq_error e;

	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		ids[i] = out[i].id;
		if (all) {
			all[i] = out[i];
			all[i].payload = NULL;
		}
		free(out[i].payload);
	}
	free(out);
	return n;
}

/* The claim rule: per key only the oldest due task, only while the key is free; other
 * keys and unlocked tasks are claimed freely in the same batch; a finish frees the key
 * for the next task of it (FIFO), recorded as lock-acquired / lock-released. */
static void claim_takes_oldest_task_of_a_free_key(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c[10];
	struct wq__outcome o;
	wq_lock held;
	int64_t a1, a2, a3, b1, u, ids[10];
	wq_error e;

	instance(f, "w1");
	instance(f, "w2");
	a1 = enqueue_locked(f, "A");
	a2 = enqueue_locked(f, "A");
	a3 = enqueue_locked(f, "A");
	b1 = enqueue_locked(f, "B");
	u = enqueue_locked(f, NULL);
	assert_int_equal(claim_ids(f, "w1", ids, c), 3);
	assert_true(ids[0] == a1 && ids[1] == b1 && ids[2] == u);
	assert_string_equal(c[0].lock, "A");
	assert_string_equal(c[2].lock, "");
	assert_int_equal(claim_ids(f, "w2", ids, NULL), 0); /* A and B are held */
	/* a task's hold is visible, and no lease can take it */
	f->now++;
	assert_int_equal(M->lock_acquire(f->s, "A", "chat", 1000, &held, &e), WQ_ELIMIT);
	assert_true(held.task_id == a1);
	assert_int_equal(held.expires_at, 0);
	o = succeeded(&c[0], "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(events_of(f, a1, "lock-acquired", NULL), 1);
	assert_int_equal(events_of(f, a1, "lock-released", NULL), 1);
	assert_int_equal(claim_ids(f, "w2", ids, NULL), 1);
	assert_true(ids[0] == a2); /* not a3: FIFO within the key */
	(void)a3;
}

/* Lists the unexpired holds; their count. */
static size_t locks_held(struct fx *f)
{
	wq_lock *all = NULL;
	size_t n = 0;
	wq_error e;

	assert_int_equal(M->lock_list(f->s, &all, &n, &e), WQ_OK);
	free(all);
	return n;
}

/* Polls (bounded: 20 s) until fewer than `n` holds are listed, i.e. a lease expired on
 * the store's clock; the test has no other way to move that clock. */
static void wait_locks_below(struct fx *f, size_t n)
{
	for (int i = 0; i < 2000 && locks_held(f) >= n; i++)
		usleep(10000);
	assert_true(locks_held(f) < n);
}

/* An external lease holds its key until it is released or expires; the same holder
 * renews; another is refused with the holder and expiry. The lease is a duration: its
 * times are the store's (issue 15), whatever the callers' clocks say. */
static void lease_blocks_key_until_released_or_expired(void **state)
{
	struct fx *f = *state;
	wq_lock held, first, gone;
	int64_t t1, t2, ids[10];
	wq_error e;

	instance(f, "w1");
	assert_int_equal(M->lock_acquire(f->s, "C", "chat", 60 * SEC, &held, &e), WQ_OK);
	assert_string_equal(held.holder, "chat");
	/* on the store's clock (today), not the test's simulated T0 */
	assert_true(held.acquired_at > T0 && held.expires_at == held.acquired_at + 60 * SEC);
	first = held;
	t1 = enqueue_locked(f, "C");
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 0);
	assert_int_equal(M->lock_acquire(f->s, "C", "other", 500 * SEC, &held, &e), WQ_ELIMIT);
	assert_string_equal(held.holder, "chat");
	assert_true(held.expires_at == first.expires_at);
	assert_int_equal(M->lock_renew(f->s, "C", "chat", 120 * SEC, &held, &e), WQ_OK);
	assert_true(held.expires_at >= first.acquired_at + 120 * SEC);
	assert_int_equal(M->lock_renew(f->s, "C", "other", 120 * SEC, NULL, &e), WQ_ENOTFOUND);
	assert_int_equal(M->lock_acquire(f->s, "C", "x", 0, NULL, &e), WQ_EINVAL);
	assert_int_equal(M->lock_release(f->s, "C", "chat", &e), WQ_OK);
	assert_int_equal(M->lock_release(f->s, "C", "chat", &e), WQ_ENOTFOUND);
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	assert_true(ids[0] == t1);
	/* a lease never released: its key is free once it expired on the store's clock */
	assert_int_equal(M->lock_acquire(f->s, "D", "gone", 2 * SEC, &gone, &e), WQ_OK);
	t2 = enqueue_locked(f, "D");
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 0);
	assert_int_equal(locks_held(f), 2); /* C by task t1, D by "gone" */
	wait_locks_below(f, 2);             /* the expired lease is not listed */
	assert_int_equal(M->lock_acquire(f->s, "D", "next", SEC, &held, &e), WQ_OK);
	assert_true(held.acquired_at >= gone.expires_at); /* never before, on one clock */
	assert_int_equal(M->lock_release(f->s, "D", "next", &e), WQ_OK);
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	assert_true(ids[0] == t2);
}

/* Clock skew (issue 15): a claimer whose clock runs 10 minutes ahead does not take a key
 * whose lease is live on the store's clock, and one whose clock runs 10 minutes behind
 * is not kept from a key whose lease expired there. */
static void lease_expiry_ignores_the_claimers_clock(void **state)
{
	struct fx *f = *state;
	wq_lock held;
	int64_t t1, ids[10], store_now;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(M->store_now(f->s, &store_now, &e), WQ_OK);
	assert_int_equal(M->lock_acquire(f->s, "K", "chat", 60 * SEC, &held, &e), WQ_OK);
	assert_true(held.acquired_at >= store_now);
	t1 = enqueue_locked(f, "K"); /* due at T0: due for either claimer */
	f->now = store_now + 600 * SEC;
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 0);
	assert_int_equal(M->lock_release(f->s, "K", "chat", &e), WQ_OK);
	assert_int_equal(M->lock_acquire(f->s, "K", "short", SEC / 2, &held, &e), WQ_OK);
	wait_locks_below(f, 1);
	f->now = store_now - 600 * SEC;
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	assert_true(ids[0] == t1);
}

/* Recovery interrupts a lost worker's task and frees its key in the same transaction:
 * the next task of the key can run. */
static void reap_frees_the_key(void **state)
{
	struct fx *f = *state;
	int64_t a1, a2, ids[10];
	int count = 0;
	wq_error e;

	instance(f, "w1");
	a1 = enqueue_locked(f, "A");
	a2 = enqueue_locked(f, "A");
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	assert_int_equal(M->instance_reap(f->s, "w1", T0, "worker-lost", f->now, &count, &e),
			 WQ_OK);
	assert_int_equal(count, 1);
	assert_int_equal(events_of(f, a1, "lock-released", NULL), 1);
	instance(f, "w2");
	assert_int_equal(claim_ids(f, "w2", ids, NULL), 1);
	assert_true(ids[0] == a2);
}

/* A prefetched task given back (unclaim) gives back its turn lock too: it and the later
 * tasks of its key are claimable again (regression: the lock stayed held by the returned
 * attempt and the key's tasks were never claimed again). */
static void unclaim_frees_the_key(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c[10];
	int64_t a1, a2, ids[10], released = 0, returned = 0;
	wq_event *ev = NULL;
	size_t n = 0, i;
	wq_rc rcs[1];
	wq_error e;

	instance(f, "w1");
	a1 = enqueue_locked(f, "A");
	a2 = enqueue_locked(f, "A");
	assert_int_equal(claim_ids(f, "w1", ids, c), 1);
	assert_true(ids[0] == a1);
	assert_int_equal(M->unclaim(f->s, c, 1, "w1", f->now, rcs, &e), WQ_OK);
	assert_int_equal(rcs[0], WQ_OK);
	assert_int_equal(events_of(f, a1, "lock-released", NULL), 1);
	assert_int_equal(M->events(f->s, a1, &ev, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		if (strcmp(ev[i].type, "lock-released") == 0)
			released = ev[i].id;
		if (strcmp(ev[i].type, "prefetch-returned") == 0)
			returned = ev[i].id;
	}
	free(ev);
	assert_true(returned > 0 && returned < released); /* the transition first */
	assert_int_equal(locks_held(f), 0);
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	assert_true(ids[0] == a1); /* its turn again: still the oldest of its key */
	(void)a2;
}

/* A paused kind is not claimed; resumed, it is. */
static void paused_kind_is_not_claimed(void **state)
{
	struct fx *f = *state;
	wq_kind_pause *p = NULL;
	size_t n = 0;
	int64_t ids[10];
	wq_error e;

	instance(f, "w1");
	enqueue_locked(f, NULL);
	assert_int_equal(M->kind_pause(f->s, "k", 1, f->now, &e), WQ_OK);
	assert_int_equal(M->kind_pause(f->s, "k", 1, f->now, &e), WQ_OK);
	assert_int_equal(M->kinds_paused(f->s, &p, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_string_equal(p[0].kind, "k");
	free(p);
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 0);
	assert_int_equal(M->kind_pause(f->s, "k", 0, f->now, &e), WQ_OK);
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
}

#include "store_commit_cases.h" /* group commit (issue 11) */
#include "store_rows_cases.h"   /* multi-row writes (issue 11, wave 4) */
#include "store_policy_cases.h" /* limits, follow-ups (issue 10) */
#include "store_intake_cases.h" /* intake (issue 13) */
#include "store_batch_cases.h" /* batch enqueue (issue 11) */
#include "store_wakeup_cases.h" /* wake-ups (issues 11, 12) */
#include "store_enqueue_group_cases.h" /* group commit of enqueues (wave 4) */
#include "store_enqueue_rows_cases.h" /* multi-row enqueues (wave 5) */
#include "store_clock_cases.h" /* the store's clock (issue 15) */
#include "store_finish_many_cases.h" /* multi-row successes (wave 5 pgw) */
#include "store_claim_kind_cases.h" /* the claim by kind (wave 6) */
#include "store_pg_plan_cases.h" /* plans on PostgreSQL (wave 7 pg) */

/* An event for a task that is not in the store is refused, and nothing is written; one
 * for a task that is there is written (both stores: events.task_id's foreign key, which
 * docs/performance.md "Wave 8: PostgreSQL drain server CPU" kept). */
static void event_needs_its_task(void **state)
{
	struct fx *f = *state;
	int64_t id, max = 0;
	wq_error e;

	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(M->event(f->s, id + 1, 0, "note", "", "{}", f->now, &e), WQ_ENOTFOUND);
	assert_int_equal(M->event(f->s, id, 0, "note", "", "{}", f->now, &e), WQ_OK);
	assert_int_equal(events_of(f, id, "note", &max), 1);
}

/* wave6 sqcpu: event ids counted on in C within a transaction (sql.c event_counted, on
 * SQLite) stay unique and ascending in write order when another statement inserts an
 * event between them (SQL_EVENT_INSERT: the next counted one reads the base again),
 * from one transaction to the next, and after a rolled-back transaction. */
static void event_ids_counted_within_a_transaction(void **state)
{
	static const char *const want[] = {"accepted", "a", "b", "c", "d", "e"};
	struct fx *f = *state;
	wq_event *ev = NULL;
	size_t n = 0;
	int64_t id;
	wq_error e;

	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(wq__begin(f->s, 1, &e), WQ_OK);
	assert_int_equal(wq__eventf(f->s, id, f->now, 0, "a", "", &e, "i", "n", (int64_t)1),
			 WQ_OK);
	assert_int_equal(wq__eventf(f->s, id, f->now, 0, "b", "", &e, ""), WQ_OK);
	assert_int_equal(wq__run(f->s, SQL_EVENT_INSERT,
				 WQ__ARGS(WQ__AI(id), WQ__AI(f->now), WQ__AI(0), WQ__AT("c"),
					  WQ__AT(""), WQ__AT("{}")),
				 NULL, "append event", &e),
			 WQ_OK);
	assert_int_equal(wq__eventf(f->s, id, f->now, 0, "d", "", &e, ""), WQ_OK);
	assert_int_equal(wq__end(f->s, WQ_OK, &e), WQ_OK);
	assert_int_equal(wq__begin(f->s, 1, &e), WQ_OK); /* rolled back: leaves nothing */
	assert_int_equal(wq__eventf(f->s, id, f->now, 0, "x", "", &e, ""), WQ_OK);
	wq__end(f->s, WQ_ECONFLICT, &e);
	assert_int_equal(wq__begin(f->s, 1, &e), WQ_OK);
	assert_int_equal(wq__eventf(f->s, id, f->now, 0, "e", "", &e, ""), WQ_OK);
	assert_int_equal(wq__end(f->s, WQ_OK, &e), WQ_OK);
	assert_int_equal(M->events(f->s, id, &ev, &n, &e), WQ_OK);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(ev[i].type, want[i]);
		if (i > 0)
			assert_true(ev[i].id > ev[i - 1].id);
	}
	assert_string_equal(ev[1].detail, "{\"n\":1}");
	free(ev);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lost_instance_cannot_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(stale_finish_records_only_stale_outcome, setup,
						teardown),
		cmocka_unit_test_setup_teardown(finish_repeated_is_recognised, setup, teardown),
		cmocka_unit_test_setup_teardown(ids_not_reused_after_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(event_ids_counted_within_a_transaction, setup,
						teardown),
		cmocka_unit_test_setup_teardown(invalid_utf8_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(instance_register_again, setup, teardown),
		cmocka_unit_test_setup_teardown(keyed_enqueue_replay_and_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(reap_interrupts_and_fences, setup, teardown),
		cmocka_unit_test_setup_teardown(legacy_fingerprint_replays, setup, teardown),
		cmocka_unit_test_setup_teardown(cancel_after_effect_begun_is_interrupted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(doctor_effect_findings_and_resolution, setup,
						teardown),
		cmocka_unit_test_setup_teardown(claim_records_kind_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_kind_limit_dotted_name, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_many_events_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(doctor_reports_stuck_running, setup, teardown),
		/* operator's side (issue 14) */
		cmocka_unit_test_setup_teardown(retry_new_round, setup, teardown),
		cmocka_unit_test_setup_teardown(prune_keeps_owed_delivery, setup, teardown),
		/* schedules (issue 12) */
		cmocka_unit_test_setup_teardown(schedule_lease_and_fire_once, setup, teardown),
		cmocka_unit_test_setup_teardown(schedule_lease_ignores_the_callers_clock, setup,
						teardown),
		cmocka_unit_test_setup_teardown(schedule_catch_up_and_overlap, setup, teardown),
		/* turn locks, paused kinds (issue 10) */
		cmocka_unit_test_setup_teardown(claim_takes_oldest_task_of_a_free_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lease_blocks_key_until_released_or_expired, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lease_expiry_ignores_the_claimers_clock, setup,
						teardown),
		cmocka_unit_test_setup_teardown(reap_frees_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(unclaim_frees_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(paused_kind_is_not_claimed, setup, teardown),
		/* group commit (issue 11) */
		cmocka_unit_test_setup_teardown(claim_records_started, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_batch_one_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_batch_with_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_batch_rows_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_batch_many_succeeded, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_batch_rows_of_32, setup, teardown),
		/* limits, follow-ups (issue 10) */
		cmocka_unit_test_setup_teardown(kind_concurrency_across_instances, setup, teardown),
		cmocka_unit_test_setup_teardown(starts_per_day_defer_in_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(followups_with_success_once, setup, teardown),
		/* intake (issue 13) */
		cmocka_unit_test_setup_teardown(intake_record_finish_acknowledge, setup, teardown),
		cmocka_unit_test_setup_teardown(intake_abandon_reports_once, setup, teardown),
		cmocka_unit_test_setup_teardown(intake_ack_lease_ignores_the_callers_clock, setup,
						teardown),
		/* batch enqueue (issue 11) */
		cmocka_unit_test_setup_teardown(enqueue_many_items_answer_each, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_many_failure_writes_nothing, setup,
						teardown),
		/* wake-ups (issues 11, 12) */
		cmocka_unit_test_setup_teardown(wake_next_and_wake_file, setup, teardown),
		cmocka_unit_test_setup_teardown(due_reads_with_tasks_due_at_enqueue, setup,
						teardown),
		/* group commit of enqueues (wave 4) */
		cmocka_unit_test_setup_teardown(enqueue_group_items_answer_each, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_rows_mixed_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_rows_same_rows_as_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_rows_group_answers_each, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_rows_ids_above_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_threads_share_a_handle, setup, teardown),
		/* the store's clock (issue 15) */
		cmocka_unit_test_setup_teardown(prune_forgets_expired_leases_and_old_start_days,
						setup, teardown),
		/* the claim by kind (wave 6) */
		cmocka_unit_test_setup_teardown(claim_merges_kinds_by_order, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_limit_spans_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_kind_blocked_oldest_yields_later, setup,
						teardown),
		cmocka_unit_test_setup_teardown(claim_paused_kind_among_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_empty_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_ignores_other_kinds_backlog, setup,
						teardown),
		/* plans on PostgreSQL (wave 7 pg) */
		cmocka_unit_test_setup_teardown(attempts_finish_planned_by_index, setup,
						teardown),
		cmocka_unit_test_setup_teardown(finish_many_checks_its_row_count, setup,
						teardown),
		cmocka_unit_test_setup_teardown(event_needs_its_task, setup, teardown),
	};
	int rc = fresh_store_begin("test_store", argc, argv);

	if (rc != 0)
		return rc;
	backend = fresh_store_backend();
#ifdef WQ_HAVE_POSTGRES
	M = strcmp(backend, "sqlite") == 0 ? &wq__sqlite_methods : &wq__postgres_methods;
#else
	M = &wq__sqlite_methods;
#endif
	rc = cmocka_run_group_tests_name(backend, tests, NULL, NULL);
	fresh_store_end();
	return rc;
}
