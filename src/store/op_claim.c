/*
 * op_claim.c — a task in a worker's hands: claim (pending → running, fenced by attempt
 * and instance), finish (running → the outcome, or a stale-outcome record), and the
 * interruption of running tasks whose instance is gone.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* WQ__CLAIMABLE bounds the claim's walk by WQ__ORDER_AFTER_DUE_MAX: the lowest
 * priority's head start, which must be the one task.c gives. */
_Static_assert(-(int64_t)WQ__PRIORITY_MIN * WQ__PRIORITY_STEP_US == INT64_C(60000000000),
	       "WQ__ORDER_AFTER_DUE_MAX (statements.h) is the lowest priority's head start");

struct claim_row {
	struct wq__claimed c;
	int64_t order_at;
};

static int claim_row_cmp(const void *a, const void *b)
{
	const struct claim_row *x = a, *y = b;

	if (x->order_at != y->order_at)
		return x->order_at < y->order_at ? -1 : 1;
	return x->c.id < y->c.id ? -1 : x->c.id > y->c.id;
}

static wq_rc push_claimed(const struct wq__row *r, void *ctx)
{
	struct claim_row *x = wq__push(ctx);
	const char *payload;
	size_t len = 0;

	if (!x)
		return WQ_ENOMEM;
	x->c.id = wq__i64(r, 0);
	x->c.attempt = wq__int(r, 1);
	wq__str(r, 2, x->c.kind, sizeof(x->c.kind));
	wq__str(r, 3, x->c.tenant, sizeof(x->c.tenant));
	wq__str(r, 4, x->c.scope, sizeof(x->c.scope));
	wq__str(r, 5, x->c.operation, sizeof(x->c.operation));
	x->c.payload_version = wq__int(r, 6);
	x->c.max_attempts = wq__int(r, 7);
	payload = wq__text(r, 8, &len);
	x->order_at = wq__i64(r, 9);
	x->c.keyed = wq__int(r, 10);
	wq__str(r, 11, x->c.lock, sizeof(x->c.lock));
	if (!(x->c.payload = malloc(len + 1)))
		return WQ_ENOMEM;
	if (len)
		memcpy(x->c.payload, payload, len);
	x->c.payload[len] = '\0';
	x->c.payload_len = len;
	return WQ_OK;
}

static void claim_rows_free(struct wq__vec *v)
{
	struct claim_row *rows = v->p;
	size_t i;

	for (i = 0; i < v->n; i++)
		free(rows[i].c.payload);
	free(v->p);
	v->p = NULL;
	v->n = 0;
}

/* A claim whose COMMIT got no answer may have moved tasks to running under this
 * instance without handing them out. They are ours (nobody else runs a task of a live
 * instance), so the next claim of the same instance takes them first. */
static void lost_claim_remember(struct wq__store *s, const struct wq__claim_req *req)
{
	if (strcmp(s->lost_instance, req->instance) != 0) {
		s->nlost_claims = 0;
		wq__strlcpy(s->lost_instance, req->instance, sizeof(s->lost_instance));
	}
	if (s->nlost_claims == WQ__LOST_CLAIMS_MAX) {
		/* Give up the oldest: if it took tasks, recovery interrupts them once this
		 * instance is gone. */
		memmove(s->lost_claims, s->lost_claims + 1,
			(WQ__LOST_CLAIMS_MAX - 1) * sizeof(s->lost_claims[0]));
		s->nlost_claims--;
	}
	s->lost_claims[s->nlost_claims++] = req->now;
}

/* The attempts row's end; in a claim or finish transaction with the others of the batch
 * at COMMIT (op_rows.c: nothing there reads it back before). */
static wq_rc attempt_finish(struct wq__store *s, int64_t task_id, int attempt, int64_t now,
			    const char *outcome, const char *reason, int exit_status,
			    wq_error *err)
{
	if (wq__rows_attempt_finish(s, task_id, attempt, now, outcome, wq__nz(reason),
				    exit_status))
		return WQ_OK;
	return wq__run(s, SQL_ATTEMPT_FINISH,
		       WQ__ARGS(WQ__AI(task_id), WQ__AI(attempt), WQ__AI(now), WQ__AT(outcome),
				WQ__AT(wq__nz(reason)), WQ__AI(exit_status)),
		       NULL, "record attempt", err);
}

/* The JSON object text {"kind": limit} of the kinds with an attempt limit of their own
 * (SQL_CLAIM's $5); malloc'd. */
static wq_rc claim_limits(const struct wq__claim_req *req, char **out, wq_error *err)
{
	json_t *obj = json_object();
	size_t i;
	int bad = !obj;

	for (i = 0; !bad && req->max_attempts && i < req->nkinds; i++)
		if (req->max_attempts[i] > 0)
			bad = json_object_set_new(obj, req->kinds[i],
						  json_integer(req->max_attempts[i])) != 0;
	*out = bad ? NULL : json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!*out)
		return wq__err(err, WQ_ENOMEM, "out of memory (kind limits)");
	return WQ_OK;
}

/* 1 when kind runs in-process (req->in_process). */
static int claim_in_process(const struct wq__claim_req *req, const char *kind)
{
	for (size_t i = 0; req->in_process && i < req->nkinds; i++)
		if (strcmp(req->kinds[i], kind) == 0)
			return req->in_process[i];
	return 0;
}

/* The attempt's `started` event, in the claim's transaction: the worker starts every task
 * it claimed at once (a start that fails records its outcome after it), so one commit
 * serves both. The handler's pid is in the worker's log line. */
static wq_rc started_event(struct wq__store *s, const struct wq__claim_req *req,
			   const struct wq__claimed *c, wq_error *err)
{
	if (claim_in_process(req, c->kind))
		return wq__eventf(s, c->id, req->now, c->attempt, "started", req->instance, err,
				  "ab", c->id, c->attempt, "in_process", 1);
	return wq__eventf(s, c->id, req->now, c->attempt, "started", req->instance, err, "a",
			  c->id, c->attempt);
}

/* wave7 drain: the multi-row attempts inserts (SQLite), largest first */
static const struct wq__rows_stmt att_stmts[] = {
	{SQL_ATTEMPTS_INSERT_AT32, 32},
	{SQL_ATTEMPTS_INSERT_AT8, 8},
	{SQL_ATTEMPTS_INSERT_AT4, 4},
	{SQL_ATTEMPT_INSERT, 1},
};

struct att_ctx {
	const struct wq__claim_req *req;
	const struct claim_row *x;
};

/* Claimed task `row`'s attempts row: task, attempt, instance, started. */
static void attempt_args(struct wq__arg *a, size_t row, const void *ctx)
{
	const struct att_ctx *c = ctx;

	a[0] = WQ__AI(c->x[row].c.id);
	a[1] = WQ__AI(c->x[row].c.attempt);
	a[2] = WQ__AT(c->req->instance);
	a[3] = WQ__AI(c->req->now);
}

/* The rows of n newly claimed tasks x: their attempts rows (one statement of JSON rows,
 * or up to 32 rows of bound parameters each where statements run in-process), and each
 * one's `claimed`, `lock-acquired` and `started` events (buffered: op_rows.c). */
static wq_rc claim_rows(struct wq__store *s, const struct wq__claim_req *req,
			struct claim_row *x, size_t n, wq_error *err)
{
	struct wq__rowbuf att = {0};
	wq_rc rc = WQ_OK;
	size_t i;

	if (wq__rows_batched(s)) { /* one statement (a round trip saved per row) */
		for (i = 0; i < n; i++)
			wq__rb_row(&att, "ii", x[i].c.id, (int64_t)x[i].c.attempt);
		rc = wq__rows_attempts_insert(s, &att, req->instance, req->now, err);
		free(att.p);
	} else { /* in-process: bound rows cost less than JSON rows */
		struct att_ctx c = {req, x};

		rc = wq__run_rows(s, att_stmts, n, 4, attempt_args, &c, NULL, "insert attempts",
				  err);
	}
	for (i = 0; !rc && i < n; i++) {
		rc = wq__eventf(s, x[i].c.id, req->now, x[i].c.attempt, "claimed", req->instance,
				err, "as", x[i].c.id, x[i].c.attempt, "instance", req->instance,
				WQ_NAME_MAX);
		if (!rc) /* issue 10 */
			rc = wq__locks_take(s, &x[i].c, req->instance, req->now, err);
		if (!rc)
			rc = started_event(s, req, &x[i].c, err);
	}
	return rc;
}

/* Within the claim transaction: the tasks of lost claims first (they keep their attempt
 * and their `claimed` and `started` events), then new ones, each with an attempts row and
 * its events. */
static wq_rc claim_body(struct wq__store *s, const struct wq__claim_req *req, const char *kj,
			struct wq__vec *v, wq_error *err)
{
	size_t recovered = 0;
	char *lost = NULL, *limits = NULL;
	wq_rc rc;

	if (s->nlost_claims > 0 && strcmp(s->lost_instance, req->instance) == 0) {
		rc = wq__json_ids(s->lost_claims, (size_t)s->nlost_claims, &lost, err);
		if (!rc)
			rc = wq__rows(s, SQL_RECLAIM, WQ__ARGS(WQ__AT(req->instance), WQ__AT(lost)),
				      push_claimed, v, NULL, "claim tasks", err);
		free(lost);
		if (rc)
			return rc;
		recovered = v->n;
	}
	if (recovered < (size_t)req->limit) {
		rc = claim_limits(req, &limits, err);
		if (!rc) /* SQL_CLAIM, under the kinds' concurrency and starts per day */
			rc = wq__claim_pick(s, req, kj, limits, req->limit - (int)recovered,
					    push_claimed, v, err);
		free(limits);
		if (rc)
			return rc;
	}
	return claim_rows(s, req, (struct claim_row *)v->p + recovered, v->n - recovered, err);
}

/* A claim in the making: its rows, and the array they move to once committed. */
struct claim_tx {
	struct wq__vec v;         /* of struct claim_row */
	struct wq__claimed *arr;  /* allocated before COMMIT */
	char *kj;                 /* the kinds as JSON */
};

/* The kinds' JSON of req into c; WQ_OK with nothing to claim when *none. */
static wq_rc claim_prepare(const struct wq__claim_req *req, struct claim_tx *c, int *none,
			   wq_error *err)
{
	memset(c, 0, sizeof(*c));
	c->v.size = sizeof(struct claim_row);
	*none = 0;
	if (!req->instance || !*req->instance)
		return wq__err(err, WQ_EINVAL, "claim: no instance given");
	if (req->limit <= 0 || req->nkinds == 0) {
		*none = 1;
		return WQ_OK;
	}
	return wq__json_texts(req->kinds, req->nkinds, "kind", &c->kj, err);
}

/* Within the open write transaction: the claim, and its array allocated before COMMIT
 * (once committed the tasks run under this instance: a failure after that point would
 * strand them). */
static wq_rc claim_in(struct wq__store *s, const struct wq__claim_req *req,
		      struct claim_tx *c, wq_error *err)
{
	wq_rc rc = claim_body(s, req, c->kj, &c->v, err);

	if (!rc && c->v.n && !(c->arr = malloc(c->v.n * sizeof(*c->arr))))
		rc = WQ_ENOMEM;
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (claiming tasks)");
	return rc;
}

/* After wq__end returned rc: the claimed tasks in order into *out, or (a lost COMMIT
 * answer) the claim remembered for the next one. Frees c. */
static wq_rc claim_done(struct wq__store *s, const struct wq__claim_req *req,
			struct claim_tx *c, wq_rc rc, struct wq__claimed **out, size_t *n)
{
	struct claim_row *rows = c->v.p;
	size_t i;

	free(c->kj);
	if (rc) {
		if (s->commit_lost && c->v.n)
			lost_claim_remember(s, req);
		claim_rows_free(&c->v);
		free(c->arr);
		return rc;
	}
	s->nlost_claims = 0;
	if (c->v.n > 1) /* RETURNING order is unspecified */
		qsort(rows, c->v.n, sizeof(*rows), claim_row_cmp);
	for (i = 0; i < c->v.n; i++)
		c->arr[i] = rows[i].c; /* the payload moves over */
	free(c->v.p);
	*out = c->arr;
	*n = c->v.n;
	return WQ_OK;
}

wq_rc wq__op_claim(struct wq__store *s, const struct wq__claim_req *req,
		   struct wq__claimed **out, size_t *n, wq_error *err)
{
	struct claim_tx c;
	size_t found = 0;
	int none;
	wq_rc rc;

	*out = NULL;
	*n = 0;
	rc = claim_prepare(req, &c, &none, err);
	if (rc || none)
		return rc;
	/* A single writer: idle workers polling a shared file take no write lock. A plain
	 * read; the claim re-checks everything. */
	if ((s->drv->caps & WQ__SQL_CAP_PROBE_FIRST) && s->nlost_claims == 0) {
		rc = wq__rows(s, SQL_CLAIM_PROBE, WQ__ARGS(WQ__AI(req->now), WQ__AT(c.kj)), NULL,
			      NULL, &found, "look for claimable tasks", err);
		if (rc || found == 0) {
			free(c.kj);
			return rc;
		}
	}
	rc = wq__begin(s, 1, err);
	if (!rc) {
		s->retry_safe = 1; /* a lost claim is remembered and taken by the next one */
		wq__rows_on(s);
		rc = wq__end(s, claim_in(s, req, &c, err), err);
	}
	return claim_done(s, req, &c, rc, out, n);
}

/* ---- finish ---- */

/* `detail` (may be NULL) with the open effect's note appended, when it fits. */
static void detail_with_effect(const char *detail, const struct wq__open_effect *oe,
			       char *buf, size_t bufsz)
{
	if (!detail || !*detail)
		snprintf(buf, bufsz, "%s", oe->note);
	else if (strlen(detail) + 2 + strlen(oe->note) < bufsz)
		snprintf(buf, bufsz, "%s; %s", detail, oe->note);
	else
		snprintf(buf, bufsz, "%s", detail);
}

/*
 * Before the conditional UPDATE: an attempt that found an effect uncertain ends
 * `interrupted` (uncertain-effect, naming it) whatever the handler reported (the default
 * policy of SPEC §7); a cancelled attempt that began an effect and never confirmed it
 * ends `interrupted` (cancelled-while-running, naming it: SPEC §13); an interrupted
 * attempt with an open effect names it in reason_detail. *adj is the outcome to record; `detail` holds its reason_detail.
 */
int wq__attempt_holds(const struct wq__task_state *ts, const struct wq__outcome *o)
{
	return strcmp(ts->state, "running") == 0 && ts->attempt == o->attempt && o->instance &&
	       strcmp(ts->instance, o->instance) == 0;
}

int wq__finish_uncertain(const struct wq__task_state *ts, const struct wq__outcome *o)
{
	return wq__attempt_holds(ts, o) && ts->uncertain[0];
}

static wq_rc finish_effects(struct wq__store *s, const struct wq__outcome *o,
			    struct wq__outcome *adj, struct wq__open_effect *oe, char *detail,
			    size_t dsz, wq_error *err)
{
	const struct wq__task_facts *f;
	struct wq__task_state ts;
	wq_rc rc;

	*adj = *o;
	memset(oe, 0, sizeof(*oe));
	if ((f = wq__rows_fact(s, o->task_id)) != NULL) /* read with its batch */
		ts = f->ts;
	else if ((rc = wq__task_state(s, o->task_id, &ts, err)) != WQ_OK)
		return rc;
	/* Invariant: this is the only rule here that changes a SUCCEEDED outcome; the
	 * multi-row finish (op_finish_many.c) has written the ones it does not change
	 * already. A new rule changing one must be part of wq__finish_uncertain (or that
	 * file must ask it). */
	if (wq__finish_uncertain(&ts, o)) {
		adj->kind = WQ__FINISH_INTERRUPTED;
		adj->reason = "uncertain-effect";
		snprintf(detail, dsz, "%s", ts.uncertain);
		adj->reason_detail = detail;
		adj->outcome = NULL;
		adj->result = NULL;
		adj->result_len = 0;
		adj->result_sha256 = NULL;
		wq__strlcpy(oe->name, ts.uncertain, sizeof(oe->name));
		return WQ_OK;
	}
	if (o->kind != WQ__FINISH_INTERRUPTED && o->kind != WQ__FINISH_CANCELLED)
		return WQ_OK;
	rc = wq__open_effect(s, o->task_id, o->attempt, oe, err);
	if (rc || !oe->name[0])
		return rc;
	if (o->kind == WQ__FINISH_CANCELLED) {
		/* SPEC §13: `cancelled` only when the attempt left no effect begun and
		 * unconfirmed; otherwise nobody knows whether it happened. */
		adj->kind = WQ__FINISH_INTERRUPTED;
		adj->reason = "cancelled-while-running";
		snprintf(detail, dsz, "%s", oe->note);
	} else {
		detail_with_effect(o->reason_detail, oe, detail, dsz);
	}
	adj->reason_detail = detail;
	return WQ_OK;
}

/* The event that records outcome o; `effect` names an open effect, `reported` what the
 * handler reported when the store recorded something else. */
static wq_rc finish_event(struct wq__store *s, const struct wq__outcome *o, const char *effect,
			  const char *reported, wq_error *err)
{
	const char *fin = wq__finish_text(o->kind);

	switch (o->kind) {
	case WQ__FINISH_SUCCEEDED:
		return wq__eventf(s, o->task_id, o->now, o->attempt, "succeeded", o->instance, err,
				  "aiSSSS", o->task_id, o->attempt, "result_size",
				  (int64_t)(o->result ? o->result_len : 0), "result_sha256",
				  o->result ? o->result_sha256 : NULL, WQ_SHA256_HEX - 1, "outcome",
				  o->outcome, WQ_REASON_MAX, "effect", effect, WQ_EFFECT_NAME_MAX,
				  "handler_outcome", reported, WQ_REASON_MAX);
	case WQ__FINISH_RETRY:
		return wq__eventf(s, o->task_id, o->now, o->attempt, "retry-scheduled", o->instance,
				  err, "asitSS", o->task_id, o->attempt, "reason", o->reason,
				  WQ_REASON_MAX, "exit_status", (int64_t)o->exit_status, "retry_at",
				  o->retry_at, "effect", effect, WQ_EFFECT_NAME_MAX, "handler_outcome",
				  reported, WQ_REASON_MAX);
	case WQ__FINISH_FAILED:
	case WQ__FINISH_INTERRUPTED:
		return wq__eventf(s, o->task_id, o->now, o->attempt, fin, o->instance, err, "assiSS",
				  o->task_id, o->attempt, "reason", o->reason, WQ_REASON_MAX,
				  "reason_detail", o->reason_detail, WQ_DETAIL_MAX,
				  o->kind == WQ__FINISH_FAILED ? "exit_status" : "signal",
				  (int64_t)(o->kind == WQ__FINISH_FAILED ? o->exit_status : o->signal),
				  "effect", effect, WQ_EFFECT_NAME_MAX, "handler_outcome", reported,
				  WQ_REASON_MAX);
	default:
		return wq__eventf(s, o->task_id, o->now, o->attempt, "cancelled", o->instance, err,
				  "aSS", o->task_id, o->attempt, "effect", effect, WQ_EFFECT_NAME_MAX,
				  "handler_outcome", reported, WQ_REASON_MAX);
	}
}

/* The conditional UPDATE found no row owned by this attempt. The same outcome recorded
 * by an earlier call whose COMMIT answer was lost is WQ_OK; anything else is a
 * `stale-outcome` event (kept) and WQ_ESTALE. */
static wq_rc finish_stale(struct wq__store *s, const struct wq__outcome *o, wq_error *err)
{
	struct wq__task_state ts;
	size_t recorded = 0;
	wq_rc rc;

	rc = wq__rows(s, SQL_ATTEMPT_RECORDED,
		      WQ__ARGS(WQ__AI(o->task_id), WQ__AI(o->attempt), WQ__AT(o->instance),
			       WQ__AI(o->now), WQ__AT(wq__finish_text(o->kind)),
			       WQ__AT(wq__nz(o->reason))),
		      NULL, NULL, &recorded, "read attempt", err);
	if (!rc && !recorded)
		rc = wq__task_state(s, o->task_id, &ts, err);
	if (rc || recorded)
		return rc;
	rc = wq__eventf(s, o->task_id, o->now, o->attempt, "stale-outcome", o->instance, err,
			"ass", o->task_id, o->attempt, "instance", o->instance, WQ_NAME_MAX,
			"outcome", wq__finish_text(o->kind), WQ_REASON_MAX);
	if (rc)
		return rc;
	s->keep = 1;
	if (strcmp(ts.state, "running") == 0 && ts.attempt == o->attempt)
		return wq__err(err, WQ_ESTALE,
			       "task %" PRId64 " attempt %" PRId64 ".%d no longer owns the task "
			       "(it is running under instance %s)",
			       o->task_id, o->task_id, o->attempt, ts.instance);
	return wq__err(err, WQ_ESTALE,
		       "task %" PRId64 " attempt %" PRId64 ".%d no longer owns the task "
		       "(now %s, attempt %d)",
		       o->task_id, o->task_id, o->attempt, ts.state, ts.attempt);
}

static wq_rc finish_update(struct wq__store *s, const struct wq__outcome *o, int64_t *changes,
			   wq_error *err)
{
	struct wq__arg a[WQ__SUCCEEDED_ARGS];

	if (wq__finish_many_take(s, o, changes)) /* wave5 pgw: ran with its batch */
		return WQ_OK;
	switch (o->kind) {
	case WQ__FINISH_SUCCEEDED:
		wq__succeeded_args(a, o);
		return wq__run(s, SQL_FINISH_SUCCEEDED, a, WQ__SUCCEEDED_ARGS, changes,
			       "record outcome", err);
	case WQ__FINISH_RETRY:
		return wq__run(s, SQL_FINISH_RETRY,
			       WQ__ARGS(WQ__AI(o->task_id), WQ__AI(o->attempt), WQ__AT(o->instance),
					WQ__AI(o->now), WQ__AI(o->retry_at), WQ__AT(wq__nz(o->reason)),
					WQ__AT(wq__nz(o->reason_detail)), WQ__AI(o->exit_status)),
			       changes, "record outcome", err);
	default:
		return wq__run(s, SQL_FINISH_END,
			       WQ__ARGS(WQ__AI(o->task_id), WQ__AI(o->attempt), WQ__AT(o->instance),
					WQ__AI(o->now),
					WQ__AT(o->kind == WQ__FINISH_FAILED        ? "failed"
					       : o->kind == WQ__FINISH_CANCELLED ? "cancelled"
										 : "interrupted"),
					WQ__AT(wq__nz(o->reason)), WQ__AT(wq__nz(o->reason_detail)),
					WQ__AI(o->exit_status)),
			       changes, "record outcome", err);
	}
}

static wq_rc finish_body(struct wq__store *s, const struct wq__outcome *in,
			 struct wq__open_effect *oe, struct wq__outcome *o, wq_error *err)
{
	/* Read with the batch (op_rows.c): a step whose rows the task does not have (no
	 * turn lock row, no notify list, no intake record) would find nothing: skipped. */
	const struct wq__task_facts *f = wq__rows_fact(s, in->task_id);
	char detail[WQ_DETAIL_MAX + 1];
	int64_t changes = 0;
	wq_rc rc;

	rc = finish_effects(s, in, o, oe, detail, sizeof(detail), err);
	if (!rc)
		rc = finish_update(s, o, &changes, err);
	if (rc)
		return rc;
	if (changes == 0)
		return finish_stale(s, o, err);
	rc = attempt_finish(s, o->task_id, o->attempt, o->now, wq__finish_text(o->kind),
			    o->reason, o->exit_status, err);
	if (!rc && o->stderr_tail) /* keep_stderr (issue 14) */
		rc = wq__attempt_stderr_set(s, o, err);
	if (rc)
		return rc;
	rc = finish_event(s, o, oe->name, in->kind != o->kind ? wq__finish_text(in->kind) : NULL,
			  err);
	/* A task's turn lock ends with its attempt, in the transaction recording it. */
	if (!rc && (!f || f->lock))
		rc = wq__locks_drop(s, o->task_id, o->attempt, o->instance,
				    wq__finish_text(o->kind), o->now, err);
	if (!rc && o->kind == WQ__FINISH_RETRY)
		rc = wq__notify(s, err);
	/* SPEC §8: the deliveries in the transaction that stores the result; a discarded
	 * task has nothing to deliver. */
	if (!rc && o->kind == WQ__FINISH_SUCCEEDED && (!f || f->notify) &&
	    !(o->outcome && strcmp(o->outcome, "discarded") == 0))
		rc = wq__deliveries_queue(s, o->task_id, o->now, err);
	if (!rc) /* issue 10: the follow-ups with the success that asked for them */
		rc = wq__followups_create(s, o, err);
	/* issue 13: a mailbox message's acknowledgement, in the transaction that records
	 * its task handled */
	if (!rc && (!f || f->intake))
		rc = wq__intake_finished(s, o, err);
	return rc;
}

/*
 * Finishes one task inside an already-open write transaction: the body of finish() and
 * of finish_batch(). WQ_OK (recorded, or found recorded by an earlier call whose answer
 * was lost), WQ_ESTALE (only its `stale-outcome` event was written, s->keep set), or an
 * error: the caller rolls back. Work that belongs to recording an outcome (follow-ups,
 * acknowledgements, ...) goes inside finish_body, so it commits with the outcome.
 */
wq_rc wq__finish_in(struct wq__store *s, const struct wq__outcome *in, wq_error *err)
{
	struct wq__outcome clean = *in, o;
	struct wq__open_effect oe;
	char *reason = NULL, *detail = NULL;
	wq_rc rc;

	if (!wq__finish_text(in->kind))
		return wq__err(err, WQ_EINVAL, "finish: unknown outcome kind %d", (int)in->kind);
	if (!in->instance)
		return wq__err(err, WQ_EINVAL, "finish: no instance given");
	/* A handler's reason text is free text: made valid UTF-8 here, once, for any store. */
	if (in->reason)
		clean.reason = reason = wq__utf8_clean(in->reason, strlen(in->reason));
	if (in->reason_detail)
		clean.reason_detail = detail =
			wq__utf8_clean(in->reason_detail, strlen(in->reason_detail));
	if ((in->reason && !reason) || (in->reason_detail && !detail)) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (finish)");
		goto out;
	}
	rc = finish_body(s, &clean, &oe, &o, err);
	if (!rc && in->uncertain_out && strcmp(wq__nz(o.reason), "uncertain-effect") == 0)
		wq__strlcpy(in->uncertain_out, oe.name, WQ_EFFECT_NAME_MAX + 1);
	if (!rc && in->cancel_effect_out && in->kind == WQ__FINISH_CANCELLED &&
	    o.kind == WQ__FINISH_INTERRUPTED &&
	    strcmp(wq__nz(o.reason), "cancelled-while-running") == 0)
		wq__strlcpy(in->cancel_effect_out, oe.name, WQ_EFFECT_NAME_MAX + 1);
out:
	free(reason);
	free(detail);
	return rc;
}

wq_rc wq__op_finish(struct wq__store *s, const struct wq__outcome *in, wq_error *err)
{
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	s->retry_safe = 1; /* a retry recognises its own recorded outcome */
	wq__rows_on(s);
	return wq__end(s, wq__finish_in(s, in, err), err);
}

/* A refusal that belongs to one outcome, not to the transaction: the others of a batch
 * still commit (each on its own, see finish_batch). */
static int refuses_one(wq_rc rc)
{
	return rc == WQ_EINVAL || rc == WQ_ENOTFOUND || rc == WQ_ETOOBIG || rc == WQ_ESTATE ||
	       rc == WQ_ECONFLICT;
}

static int by_task(const void *a, const void *b)
{
	const struct wq__outcome *x = *(const struct wq__outcome *const *)a;
	const struct wq__outcome *y = *(const struct wq__outcome *const *)b;

	return x->task_id < y->task_id ? -1 : x->task_id > y->task_id;
}

/* The n tasks of v (in task order) read in one statement, for finish_body. */
static wq_rc batch_facts(struct wq__store *s, const struct wq__outcome **v, size_t n,
			 struct wq__task_facts **facts, size_t *nfacts, wq_error *err)
{
	int64_t *ids = malloc(n * sizeof(*ids));
	wq_rc rc;

	if (!ids)
		return wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
	for (size_t i = 0; i < n; i++)
		ids[i] = v[i]->task_id;
	rc = wq__rows_facts(s, ids, n, facts, nfacts, err);
	free(ids);
	if (!rc) {
		s->facts = *facts;
		s->nfacts = *nfacts;
	}
	return rc;
}

/* One transaction for all n outcomes (v: in task order) and then the claim c (NULL:
 * none); *refused when one outcome was refused on its own. */
static wq_rc batch_once(struct wq__store *s, const struct wq__outcome **v, size_t n,
			const struct wq__outcome *const *o, wq_rc *rcs, wq_error *errs,
			const struct wq__claim_req *req, struct claim_tx *c, int *refused,
			wq_error *err)
{
	struct wq__task_facts *facts = NULL;
	wq_rc rc = wq__begin(s, 1, err);
	size_t i, k, nfacts = 0;

	*refused = 0;
	if (rc)
		return rc;
	s->retry_safe = 1; /* a retry recognises each outcome it recorded; a lost claim is
			    * remembered and taken by the next one */
	wq__rows_on(s);
	rc = batch_facts(s, v, n, &facts, &nfacts, err);
	if (!rc) /* wave5 pgw: the `succeeded` ones in one statement (op_finish_many.c) */
		rc = wq__finish_many(s, v, n, err);
	for (i = 0; i < n && !rc; i++) {
		for (k = 0; o[k] != v[i]; k++)
			;
		rcs[k] = wq__finish_in(s, v[i], &errs[k]);
		if (rcs[k] == WQ_OK || rcs[k] == WQ_ESTALE)
			continue;
		rc = rcs[k];
		*err = errs[k];
		*refused = refuses_one(rc);
		s->keep = 0; /* a stale-outcome event before does not commit this */
	}
	if (!rc && c) {
		rc = claim_in(s, req, c, err);
		s->keep = rc ? 0 : s->keep;
	}
	rc = wq__end(s, rc, err);
	wq__finish_many_end(s);
	free(facts);
	return rc;
}

wq_rc wq__op_finish_batch(struct wq__store *s, const struct wq__outcome *const *o, size_t n,
			  wq_rc *rcs, wq_error *errs, const struct wq__claim_req *req,
			  struct wq__claimed **got, size_t *ngot, wq_error *err)
{
	const struct wq__outcome **v;
	struct claim_tx c, *cp = NULL;
	int refused = 0, none = 1;
	size_t i;
	wq_rc rc;

	if (req) {
		*got = NULL;
		*ngot = 0;
		if ((rc = claim_prepare(req, &c, &none, err)) != WQ_OK)
			return rc;
		cp = none ? NULL : &c;
	}
	if (n == 0)
		return cp ? wq__op_claim(s, req, got, ngot, err) : WQ_OK;
	if (!(v = malloc(n * sizeof(*v)))) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
	} else {
		/* Task order: two transactions that lock task rows take them in one order. */
		memcpy(v, o, n * sizeof(*v));
		qsort(v, n, sizeof(*v), by_task);
		rc = batch_once(s, v, n, o, rcs, errs, req, cp, &refused, err);
		free(v);
	}
	if (cp) {
		wq_rc crc = claim_done(s, req, cp, rc, got, ngot);

		if (!rc)
			rc = crc;
	}
	/* The multi-row finish's self-check failed (facts and fence disagreed: not
	 * expected): nothing of the batch was kept, and the same batch would fail alike
	 * for ever. Each outcome alone takes its own fenced path instead. */
	if (rc == WQ_ESTORE && strstr(err->message, WQ__FIN_MANY_MISMATCH))
		refused = 1;
	if (rc && refused) {
		/* One outcome was refused: nothing of the batch was kept. Each alone, so the
		 * refusal is that outcome's only; the claim on its own (a failure there is
		 * the next claim's to retry). */
		for (i = 0; i < n; i++)
			rcs[i] = wq__op_finish(s, o[i], &errs[i]);
		if (cp && wq__op_claim(s, req, got, ngot, err) != WQ_OK) {
			*got = NULL;
			*ngot = 0;
		}
		return WQ_OK;
	}
	for (i = 0; rc && i < n; i++) {
		rcs[i] = rc;
		errs[i] = *err;
	}
	return rc;
}

/* ---- interruption of running tasks (op_instance.c) ---- */

struct interrupted_row {
	int64_t id;
	int attempt;
	char instance[WQ_NAME_MAX + 1];
};

static const struct wq__col interrupted_cols[] = {
	WQ__COL('i', struct interrupted_row, id),
	WQ__COL('i', struct interrupted_row, attempt),
	WQ__COL('s', struct interrupted_row, instance),
};

wq_rc wq__interrupt(struct wq__store *s, int id, const struct wq__arg *a, int n,
		    const char *reason, int64_t now, int *count, wq_error *err)
{
	struct interrupted_row *rows = NULL, *x;
	struct wq__open_effect oe;
	size_t i, cnt = 0;
	wq_rc rc;

	rc = wq__select(s, id, a, n, WQ__COLS(interrupted_cols), sizeof(*rows), &rows, &cnt,
			"interrupt tasks", err);
	for (i = 0; !rc && i < cnt; i++) {
		x = rows + i;
		rc = attempt_finish(s, x->id, x->attempt, now, "interrupted", reason, -1, err);
		if (!rc)
			rc = wq__open_effect(s, x->id, x->attempt, &oe, err);
		if (!rc && oe.name[0])
			rc = wq__run(s, SQL_SET_DETAIL,
				     WQ__ARGS(WQ__AI(x->id), WQ__AI(x->attempt), WQ__AT(oe.note)),
				     NULL, "record reason detail", err);
		if (!rc)
			rc = wq__eventf(s, x->id, now, x->attempt, "interrupted", x->instance, err,
					"asSS", x->id, x->attempt, "reason", reason, WQ_REASON_MAX,
					"reason_detail", oe.note, WQ_DETAIL_MAX, "effect", oe.name,
					WQ_EFFECT_NAME_MAX);
		/* The task no longer runs: its key is free again (issue 10). */
		if (!rc)
			rc = wq__locks_drop(s, x->id, x->attempt, x->instance, reason, now, err);
	}
	if (!rc)
		*count = (int)cnt;
	free(rows);
	return rc;
}
