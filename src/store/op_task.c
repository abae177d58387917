/*
 * op_task.c — a task's life outside a worker's hands: enqueue (with the operation
 * identity), reads, cancel, resolve, events appended by the core; and the one table of
 * each state encoding the store writes.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encodings: the store writes the public names (state.c, outbox.c: one table each)
 * and the outcome names below ---- */

static const char *const finish_names[] = {
	[WQ__FINISH_SUCCEEDED] = "succeeded", [WQ__FINISH_RETRY] = "retry",
	[WQ__FINISH_FAILED] = "failed",       [WQ__FINISH_INTERRUPTED] = "interrupted",
	[WQ__FINISH_CANCELLED] = "cancelled",
};

const char *wq__finish_text(enum wq__finish_kind k)
{
	return (int)k >= 1 && (size_t)k < WQ__ARRAY_LEN(finish_names) ? finish_names[k] : NULL;
}

wq_state wq__state_parse(const char *text)
{
	wq_state st = 0;

	return wq_state_parse(text, &st, NULL) == WQ_OK ? st : 0;
}

wq_delivery_state wq__delivery_state_parse(const char *text)
{
	wq_delivery_state st = 0;

	return wq_delivery_state_parse(text, &st, NULL) == WQ_OK ? st : 0;
}

/* ---- enqueue ---- */

struct enq {
	const struct wq__new_task *t;
	const char *payload; /* NUL-terminated */
	int64_t op_id, id;
	size_t found;
	char stored[WQ_SHA256_HEX];
	int64_t task_id;
	wq_state state;
	struct wq__enqueued_row row;
	int batched; /* enqueue_many: one wake-up for the batch, not one per task */
};

static const struct wq__col op_cols[] = { /* SQL_OP_GET */
	WQ__COL('s', struct enq, stored), WQ__COL('i', struct enq, task_id),
	WQ__COL('S', struct enq, state),
};

/* The message of an operation conflict: the identity and both fingerprints, never the
 * input. */
static wq_rc op_conflict(const struct wq__new_task *t, const char *stored, wq_error *err)
{
	return wq__err(err, WQ_ECONFLICT,
		       "operation key '%s' (tenant '%s', scope '%s', kind '%s') already exists "
		       "with different input (stored fingerprint %.12s..., this input %.12s...)",
		       t->key, wq__nz(t->tenant), wq__nz(t->scope), t->kind, stored, t->fingerprint);
}

/* Claims the operation identity through the unique index. q->op_id > 0: this
 * transaction inserted it; else q->found and the existing one is described. An insert
 * meets a concurrent uncommitted one and waits for it; when the row it then meets is
 * gone by the read (pruned meanwhile), it tries once more. */
static wq_rc op_claim(struct wq__store *s, struct enq *q, wq_error *err)
{
	const struct wq__new_task *t = q->t;
	int tries;
	wq_rc rc;

	for (tries = 0; tries < 2; tries++) {
		rc = wq__insert(s, SQL_OP_INSERT,
				WQ__ARGS(WQ__AT(t->tenant), WQ__AT(t->scope), WQ__AT(t->kind),
					 WQ__AT(t->key), WQ__AT(t->fingerprint),
					 WQ__AI(t->payload_version), WQ__AI(t->now)),
				&q->op_id, "insert operation", err);
		if (rc || q->op_id)
			return rc;
		rc = wq__select1(s, SQL_OP_GET,
				 WQ__ARGS(WQ__AT(t->tenant), WQ__AT(t->scope), WQ__AT(t->kind),
					  WQ__AT(t->key)),
				 WQ__COLS(op_cols), q, &q->found, "read operation", err);
		if (rc || q->found)
			return rc;
	}
	return wq__err(err, WQ_EBUSY, "database %s is busy (operation key '%s' changed "
				      "concurrently); retry",
		       s->drv->label(s->c), t->key);
}

/* The identity is taken: a replay (same fingerprint) or a conflict, recorded on its task
 * when the task row still exists. */
static wq_rc enqueue_existing(struct wq__store *s, struct enq *q, wq_error *err)
{
	const struct wq__new_task *t = q->t;
	int same = strcmp(q->stored, t->fingerprint) == 0 ||
		   (t->fingerprint_legacy && strcmp(q->stored, t->fingerprint_legacy) == 0);
	wq_rc rc = WQ_OK;

	if (q->state && same)
		rc = wq__eventf(s, q->task_id, t->now, 0, "replayed", "", err, "si", "fingerprint",
				q->stored, WQ_SHA256_HEX - 1, "payload_size", (int64_t)t->payload_len);
	else if (q->state)
		rc = wq__eventf(s, q->task_id, t->now, 0, "conflict", "", err, "ssi", "fingerprint",
				q->stored, WQ_SHA256_HEX - 1, "offered", t->fingerprint,
				WQ_SHA256_HEX - 1, "offered_payload_version",
				(int64_t)t->payload_version);
	if (rc)
		return rc;
	if (!same) {
		s->keep = 1; /* the conflict event stays */
		return op_conflict(t, q->stored, err);
	}
	q->row.id = q->task_id;
	q->row.replayed = 1;
	q->row.state = q->state;
	wq__strlcpy(q->row.fingerprint, q->stored, sizeof(q->row.fingerprint));
	return WQ_OK;
}

/* wave5 enq: the same decision for a batch's item (op_enqueue_rows.c). */
wq_rc wq__enqueue_existing(struct wq__store *s, const struct wq__new_task *t,
			   const char *stored, int64_t task_id, wq_state state,
			   struct wq__enqueued_row *row, wq_error *err)
{
	struct enq q;
	wq_rc rc;

	memset(&q, 0, sizeof(q));
	q.t = t;
	wq__strlcpy(q.stored, stored, sizeof(q.stored));
	q.task_id = task_id;
	q.state = state;
	if ((rc = enqueue_existing(s, &q, err)) == WQ_OK)
		*row = q.row;
	return rc;
}

const char *wq__accepted_text(const struct wq__new_task *t, char *buf, size_t bufsz,
			      char **owned, wq_error *err)
{
	json_t *d;

	*owned = NULL;
	if (wq__detail_accepted(buf, bufsz, t) >= 0)
		return buf;
	if (!(d = wq__detailf(err, ACCEPTED_FIELDS(t))))
		return NULL;
	*owned = wq__detail_text(d);
	json_decref(d);
	if (!*owned)
		wq__err(err, WQ_ENOMEM, "out of memory (event accepted)");
	return *owned;
}

/* Invariant: the multi-row path (op_enqueue_rows.c) writes what enqueue_body writes for
 * a task without the steps below that it lacks (the limit count, the lock key); a step
 * added to enqueue_body is either written there too or excluded here. */
int wq__enqueue_rows_fit(const struct wq__new_task *const *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i]->max_active > 0 || t[i]->lock)
			return 0; /* a count or a lock key: the item-by-item path */
	return 1;
}

static wq_rc enqueue_body(struct wq__store *s, struct enq *q, wq_error *err)
{
	const struct wq__new_task *t = q->t;
	int64_t changes = 0;
	wq_rc rc;

	if (t->key) {
		rc = op_claim(s, q, err);
		if (rc || q->found)
			return rc ? rc : enqueue_existing(s, q, err);
	}
	rc = wq__limit_check(s, t, err); /* issue 10: only new tasks count against it */
	if (rc)
		return rc;
	rc = wq__insert(s, SQL_TASK_INSERT,
			WQ__ARGS(WQ__AT(t->kind), WQ__AT(t->tenant), WQ__AT(t->scope),
				 WQ__AT(t->operation), WQ__AT(q->payload), WQ__AI(t->payload_len),
				 WQ__AT(t->payload_sha256), WQ__AI(t->payload_version),
				 WQ__AI(t->priority), WQ__AI(t->due_at), WQ__AI(t->order_at),
				 WQ__AI(t->now), WQ__AI(t->max_attempts), WQ__AI(t->key != NULL),
				 WQ__AT(t->fingerprint), t->notify ? WQ__AT(t->notify) : WQ__ANULL),
			&q->id, "insert task", err);
	if (rc == WQ_ECONFLICT)
		rc = wq__err(err, WQ_ECONFLICT, "operation %s already exists", t->operation);
	if (rc)
		return rc;
	if (t->key) {
		rc = wq__run(s, SQL_OP_SET_TASK, WQ__ARGS(WQ__AI(q->op_id), WQ__AI(q->id)),
			     &changes, "link operation", err);
		if (!rc && changes != 1)
			rc = wq__err(err, WQ_ESTORE, "database %s: operation '%s' could not be "
						     "linked to task %" PRId64,
				     s->drv->label(s->c), t->key, q->id);
		if (rc)
			return rc;
	}
	rc = wq__eventf(s, q->id, t->now, 0, "accepted", "", err, ACCEPTED_FIELDS(t));
	/* Turn lock key (issue 10): what the claim's FIFO-per-key rule reads. */
	if (!rc && t->lock)
		rc = wq__run(s, SQL_TASK_SET_LOCK,
			     WQ__ARGS(WQ__AI(q->id), WQ__AT(t->lock), WQ__AI(t->now)), NULL,
			     "set lock key", err);
	/* Due later too: an idle worker sets its timer to the earliest due time. A batch
	 * sends one wake-up for all its tasks (enqueue_many). */
	if (!rc && !q->batched)
		rc = wq__notify(s, err);
	q->row.id = q->id;
	q->row.state = WQ_STATE_PENDING;
	wq__strlcpy(q->row.fingerprint, t->fingerprint, sizeof(q->row.fingerprint));
	return rc;
}

wq_rc wq__enqueue_in(struct wq__store *s, const struct wq__new_task *t,
		     struct wq__enqueued_row *out, wq_error *err)
{
	struct enq q;
	wq_rc rc;

	memset(&q, 0, sizeof(q));
	q.t = t;
	q.payload = t->payload; /* NUL-terminated by the caller */
	if ((rc = enqueue_body(s, &q, err)) == WQ_OK)
		*out = q.row;
	return rc;
}

/* The store's own checks of a task the core validated (enqueue, enqueue_many, and
 * enqueue_group in op_enqueue_group.c). */
wq_rc wq__enqueue_store_check(const struct wq__new_task *t, wq_error *err)
{
	wq_rc rc;

	if (!t->kind || !t->operation || !t->payload_sha256 || !t->fingerprint)
		return wq__err(err, WQ_EINVAL, "enqueue: kind, operation, payload hash and "
					       "fingerprint are required");
	if ((rc = wq__check_utf8("kind", t->kind, err)) ||
	    (rc = wq__check_utf8("tenant", t->tenant, err)) ||
	    (rc = wq__check_utf8("scope", t->scope, err)) ||
	    (rc = wq__check_utf8("operation key", t->operation, err)) ||
	    (rc = wq__check_utf8("notify channels", t->notify, err)))
		return rc;
	return WQ_OK;
}

wq_rc wq__op_enqueue(struct wq__store *s, const struct wq__new_task *t,
		     struct wq__enqueued_row *out, wq_error *err)
{
	struct enq q;
	char *payload;
	size_t len;
	wq_rc rc;

	if ((rc = wq__enqueue_store_check(t, err)))
		return rc;
	/* The payload is text in the store: NUL-terminated here, whatever the caller had. */
	len = t->payload ? t->payload_len : 0; /* valid JSON: no NUL inside */
	if (!(payload = strndup(t->payload ? t->payload : "", len)))
		return wq__err(err, WQ_ENOMEM, "out of memory (payload of %zu bytes)", len);
	memset(&q, 0, sizeof(q));
	q.t = t;
	q.payload = payload;
	/* PostgreSQL: a new task in one statement, one round trip (op_enqueue_one.c) */
	rc = wq__enqueue_one(s, t, payload, &q.row, err);
	if (rc != WQ__ENQUEUE_ONE_NO) {
		free(payload);
		if (rc == WQ_OK)
			*out = q.row;
		return rc;
	}
	rc = wq__begin(s, 1, err);
	if (!rc) {
		s->lost_op = t->key ? t->key : t->operation; /* for a lost COMMIT answer */
		s->lost_op_keyed = t->key != NULL;
		rc = wq__end(s, enqueue_body(s, &q, err), err);
	}
	free(payload);
	if (rc == WQ_OK)
		*out = q.row;
	return rc;
}

/* ---- reads ---- */

#define T(type, f) WQ__COL(type, wq_task, f)
static const struct wq__col task_cols[] = { /* WQ__TASK_COLUMNS */
	T('i', id), T('s', kind), T('s', tenant), T('s', scope), T('s', operation), T('S', state),
	T('i', priority), T('i', payload_version), T('i', payload_size), T('s', payload_sha256),
	T('i', attempts), T('i', max_attempts), T('i', created_at), T('i', updated_at),
	T('i', due_at), T('i', started_at), T('i', finished_at), T('s', instance),
	T('s', reason), T('s', reason_detail), T('s', outcome), T('i', cancel_requested),
	T('i', has_result), T('i', result_size), T('s', result_sha256), T('i', keyed),
	T('s', fingerprint),
};
#undef T
/* The same columns for other op_*.c files (op_stats.c's query). */
const struct wq__col *const wq__task_cols = task_cols;
const size_t wq__task_ncols = WQ__ARRAY_LEN(task_cols);

wq_rc wq__op_get(struct wq__store *s, int64_t id, wq_task *out, wq_error *err)
{
	wq_task t;
	size_t n = 0;
	wq_rc rc;

	memset(&t, 0, sizeof(t));
	rc = wq__select1(s, SQL_TASK_GET, WQ__ARGS(WQ__AI(id)), WQ__COLS(task_cols), &t, &n,
			 "read task", err);
	if (!rc && n == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
	if (!rc)
		*out = t;
	return rc;
}

wq_rc wq__op_list(struct wq__store *s, const wq_list_filter *f, wq_task **out, size_t *n,
		  wq_error *err)
{
	static const wq_list_filter none;
	wq_rc rc;

	if (!f)
		f = &none;
	if (f->state && !wq_state_name(f->state))
		return wq__err(err, WQ_EINVAL, "list filter: no state %d", (int)f->state);
	if (f->limit < 0)
		return wq__err(err, WQ_EINVAL, "list filter: negative limit %d", f->limit);
	if (f->kind && (rc = wq__check_utf8("kind", f->kind, err)))
		return rc;
	return wq__select(s, SQL_TASK_LIST,
			  WQ__ARGS(WQ__AT(f->state ? wq_state_name(f->state) : ""),
				   WQ__AT(wq__nz(f->kind)), WQ__AI(f->limit ? f->limit : 100)),
			  WQ__COLS(task_cols), sizeof(wq_task), out, n, "listing tasks", err);
}

struct result_read {
	int found, has;
	char *body;
	size_t len;
};

static wq_rc read_result(const struct wq__row *r, void *ctx)
{
	struct result_read *x = ctx;
	const char *p;

	x->found = 1;
	x->has = wq__int(r, 0) != 0;
	if (!x->has)
		return WQ_OK;
	p = wq__text(r, 1, &x->len);
	if (!(x->body = malloc(x->len + 1)))
		return WQ_ENOMEM;
	if (x->len)
		memcpy(x->body, p, x->len);
	x->body[x->len] = '\0';
	return WQ_OK;
}

wq_rc wq__op_result(struct wq__store *s, int64_t id, char **body, size_t *len, wq_error *err)
{
	struct result_read x = {0, 0, NULL, 0};
	wq_rc rc = wq__rows(s, SQL_RESULT, WQ__ARGS(WQ__AI(id)), read_result, &x, NULL,
			    "result of a task", err);

	if (!rc && !x.found)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
	else if (!rc && !x.has)
		rc = wq__err(err, WQ_ENOTFOUND, "task %" PRId64 " has no stored result", id);
	if (rc) {
		free(x.body);
		return rc;
	}
	*body = x.body;
	*len = x.len;
	return WQ_OK;
}

wq_rc wq__task_exists(struct wq__store *s, int64_t id, wq_error *err)
{
	size_t n = 0;
	wq_rc rc = wq__rows(s, SQL_TASK_EXISTS, WQ__ARGS(WQ__AI(id)), NULL, NULL, &n,
			    "read task", err);

	if (!rc && n == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
	return rc;
}

wq_rc wq__task_rows(struct wq__store *s, int id, int64_t task_id, const struct wq__col *cols,
		    size_t ncols, size_t size, void *out, size_t *n, const char *what,
		    wq_error *err)
{
	wq_rc rc = wq__begin(s, 0, err);

	if (rc)
		return rc;
	rc = wq__task_exists(s, task_id, err);
	if (!rc)
		rc = wq__select(s, id, WQ__ARGS(WQ__AI(task_id)), cols, ncols, size, out, n, what,
				err);
	rc = wq__end(s, rc, err);
	if (rc) {
		free(*(void **)out);
		*(void **)out = NULL;
	}
	return rc;
}

#define E(type, f) WQ__COL(type, wq_event, f)
static const struct wq__col event_cols[] = {
	E('i', id), E('i', task_id), E('i', at), E('i', attempt), E('s', type), E('s', instance),
	E('s', detail),
};
#undef E

wq_rc wq__op_events(struct wq__store *s, int64_t task_id, wq_event **out, size_t *n,
		    wq_error *err)
{
	return wq__task_rows(s, SQL_EVENTS, task_id, WQ__COLS(event_cols), sizeof(wq_event), out,
			     n, "timeline", err);
}

/* A row of one id: an array of it is an array of int64_t. */
struct id_row {
	int64_t id;
};
static const struct wq__col id_cols[] = {WQ__COL('i', struct id_row, id)};

wq_rc wq__op_cancel_requests(struct wq__store *s, const char *instance, int64_t **ids,
			     size_t *n, wq_error *err)
{
	return wq__select(s, SQL_CANCEL_REQUESTS, WQ__ARGS(WQ__AT(wq__nz(instance))),
			  WQ__COLS(id_cols), sizeof(int64_t), ids, n, "read cancel requests", err);
}

wq_rc wq__op_interrupted_of_kind(struct wq__store *s, const char *kind, int limit,
				 int64_t **ids, size_t *n, wq_error *err)
{
	if (limit <= 0) {
		*ids = NULL;
		*n = 0;
		return WQ_OK;
	}
	return wq__select(s, SQL_INTERRUPTED_OF_KIND,
			  WQ__ARGS(WQ__AT(wq__nz(kind)), WQ__AI(limit)), WQ__COLS(id_cols),
			  sizeof(int64_t), ids, n, "read interrupted tasks", err);
}

struct due {
	int64_t due;
	int running;
};

static wq_rc read_due(const struct wq__row *r, void *ctx)
{
	struct due *x = ctx;

	x->due = wq__null(r, 0) ? 0 : wq__i64(r, 0);
	x->running = wq__int(r, 1) != 0;
	return WQ_OK;
}

wq_rc wq__op_next_due(struct wq__store *s, const char *const *kinds, size_t nkinds,
		      int64_t *due_out, int *running_out, wq_error *err)
{
	struct due x = {0, 0};
	char *kj;
	wq_rc rc = wq__json_texts(kinds, nkinds, "kind", &kj, err);

	if (rc)
		return rc;
	rc = wq__rows(s, SQL_NEXT_DUE, WQ__ARGS(WQ__AT(kj)), read_due, &x, NULL,
		      "read next due time", err);
	free(kj);
	if (!rc) {
		*due_out = x.due;
		*running_out = x.running;
	}
	return rc;
}

/* ---- cancel, resolve ---- */

#define S(type, f) WQ__COL(type, struct wq__task_state, f)
static const struct wq__col state_cols[] = {
	S('s', state), S('i', attempt), S('s', instance), S('i', cancel_requested),
	S('s', uncertain),
};
#undef S

/* Within a write transaction: the state of task `id` (locked where the dialect locks
 * rows), or WQ_ENOTFOUND. It names the state in messages and picks which conditional
 * UPDATE to try; the UPDATE's row count still decides. */
wq_rc wq__task_state(struct wq__store *s, int64_t id, struct wq__task_state *ts,
		    wq_error *err)
{
	wq_rc rc;

	size_t found = 0;

	memset(ts, 0, sizeof(*ts));
	rc = wq__select1(s, SQL_TASK_STATE, WQ__ARGS(WQ__AI(id)), WQ__COLS(state_cols), ts,
			 &found, "read task", err);
	if (!rc && !found)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, id);
	return rc;
}

/* A conditional UPDATE that must change exactly one row (the state was read just
 * before under the same lock, so 0 rows means the store is not what we believe). */
static wq_rc transition(struct wq__store *s, int id, const struct wq__arg *a, int n,
			int64_t task_id, const char *from, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = wq__run(s, id, a, n, &changes, "update task", err);

	if (!rc && changes != 1)
		rc = wq__err(err, WQ_ESTATE, "task %" PRId64 " is no longer %s", task_id, from);
	return rc;
}

static wq_rc cancel_body(struct wq__store *s, int64_t id, int64_t now, wq_state *after,
			 wq_error *err)
{
	struct wq__task_state ts;
	wq_rc rc = wq__task_state(s, id, &ts, err);

	if (rc)
		return rc;
	if (strcmp(ts.state, "pending") == 0) {
		*after = WQ_STATE_CANCELLED;
		rc = transition(s, SQL_CANCEL_PENDING, WQ__ARGS(WQ__AI(id), WQ__AI(now)), id,
				"pending", err);
		if (!rc) /* a keyed task's leaving may end another's wait (WQ__HELD) */
			rc = wq__key_unhold(s, id, err);
		return rc ? rc : wq__event(s, id, now, 0, "cancelled", "", NULL, err);
	}
	if (strcmp(ts.state, "running") != 0)
		return wq__err(err, WQ_ESTATE,
			       "task %" PRId64 " is %s; only a pending or running task can be "
			       "cancelled",
			       id, ts.state);
	*after = WQ_STATE_RUNNING;
	if (ts.cancel_requested)
		return WQ_OK; /* requested already: nothing changes, nothing to record */
	rc = transition(s, SQL_CANCEL_REQUEST,
			WQ__ARGS(WQ__AI(id), WQ__AI(now), WQ__AI(ts.attempt)), id, "running", err);
	return rc ? rc
		  : wq__eventf(s, id, now, ts.attempt, "cancel-requested", ts.instance, err, "a",
			       id, ts.attempt);
}

wq_rc wq__op_cancel(struct wq__store *s, int64_t id, int64_t now, wq_state *state_out,
		    wq_error *err)
{
	wq_state after = 0;
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	rc = wq__end(s, cancel_body(s, id, now, &after, err), err);
	if (!rc)
		*state_out = after;
	return rc;
}

static wq_rc resolve_body(struct wq__store *s, const struct wq__resolve *r,
			  const char *decision, const char *target, wq_error *err)
{
	struct wq__task_state ts;
	wq_rc rc = wq__task_state(s, r->task_id, &ts, err);

	if (rc)
		return rc;
	if (strcmp(ts.state, "interrupted") != 0)
		return wq__err(err, WQ_ESTATE,
			       "task %" PRId64 " is %s; only an interrupted task can be resolved",
			       r->task_id, ts.state);
	if (target)
		rc = transition(s, SQL_RESOLVE_END,
				WQ__ARGS(WQ__AI(r->task_id), WQ__AI(r->now), WQ__AT(target)),
				r->task_id, "interrupted", err);
	else
		rc = transition(s, SQL_RESOLVE_RETRY, WQ__ARGS(WQ__AI(r->task_id), WQ__AI(r->now)),
				r->task_id, "interrupted", err);
	/* The decision answers the task's effect findings so far (doctor); an attempt
	 * that begins one of them again makes it a finding again. */
	if (!rc)
		rc = wq__run(s, SQL_EFFECT_RESOLVE, WQ__ARGS(WQ__AI(r->task_id), WQ__AI(r->now)),
			     NULL, "record resolution", err);
	if (!rc)
		rc = wq__eventf(s, r->task_id, r->now, ts.attempt, "resolved", "", err, "ssS",
				"decision", decision, WQ_REASON_MAX, "by",
				r->by ? r->by : "operator", WQ_REASON_MAX, "note", r->note,
				WQ__NOTE_MAX);
	if (!rc && !target)
		rc = wq__notify(s, err); /* due now */
	return rc;
}

wq_rc wq__op_resolve(struct wq__store *s, const struct wq__resolve *r, wq_error *err)
{
	const char *decision, *target = NULL;
	wq_rc rc;

	switch (r->decision) {
	case WQ_RESOLVE_RETRY:
		decision = "retry";
		break;
	case WQ_RESOLVE_SUCCEEDED:
		decision = target = "succeeded";
		break;
	case WQ_RESOLVE_FAILED:
		decision = target = "failed";
		break;
	case WQ_RESOLVE_CANCEL:
		decision = "cancel";
		target = "cancelled";
		break;
	default:
		return wq__err(err, WQ_EINVAL, "resolve: unknown decision %d", (int)r->decision);
	}
	rc = wq__begin(s, 1, err);
	return rc ? rc : wq__end(s, resolve_body(s, r, decision, target, err), err);
}

wq_rc wq__op_event(struct wq__store *s, int64_t task_id, int attempt, const char *type,
		   const char *instance, const char *detail, int64_t now, wq_error *err)
{
	json_t *parsed;
	wq_rc rc;
	int ok;

	if (!type || !*type || strlen(type) >= sizeof(((wq_event *)0)->type))
		return wq__err(err, WQ_EINVAL, "event type '%s' is empty or too long", wq__nz(type));
	if (!detail)
		detail = "{}";
	if (strlen(detail) > WQ__DETAIL_MAX)
		return wq__err(err, WQ_EINVAL, "event %s: detail is longer than %zu bytes", type,
			       WQ__DETAIL_MAX);
	parsed = json_loads(detail, 0, NULL);
	ok = json_is_object(parsed);
	json_decref(parsed);
	if (!ok)
		return wq__err(err, WQ_EINVAL, "event %s: detail is not a JSON object", type);
	if ((rc = wq__check_utf8("event type", type, err)) ||
	    (rc = wq__check_utf8("instance", instance, err)))
		return rc;
	rc = wq__write1(s, SQL_EVENT_INSERT,
			WQ__ARGS(WQ__AI(task_id), WQ__AI(now), WQ__AI(attempt), WQ__AT(type),
				 WQ__AT(wq__nz(instance)), WQ__AT(detail)),
			NULL, "append event", err);
	if (rc && s->last_sqlerr == WQ__SQL_FOREIGN)
		rc = wq__err(err, WQ_ENOTFOUND, "no task %" PRId64, task_id);
	return rc;
}

/* ---- operations ---- */

struct op_found {
	char kinds[160];
	int64_t id;
	int rows, exists;
};

static wq_rc read_found(const struct wq__row *r, void *ctx)
{
	struct op_found *f = ctx;
	const char *k = wq__text(r, 0, NULL);
	size_t used = strlen(f->kinds);

	if (used + strlen(k) + 3 < sizeof(f->kinds))
		snprintf(f->kinds + used, sizeof(f->kinds) - used, "%s%s", f->rows ? ", " : "", k);
	f->id = wq__i64(r, 1);
	f->exists = wq__int(r, 2);
	f->rows++;
	return WQ_OK;
}

wq_rc wq__op_operation_find(struct wq__store *s, const char *tenant, const char *scope,
			    const char *kind, const char *key, int64_t *task_id, wq_error *err)
{
	struct op_found f;
	wq_rc rc;

	if ((rc = wq__check_utf8("tenant", tenant, err)) ||
	    (rc = wq__check_utf8("scope", scope, err)) || (rc = wq__check_utf8("kind", kind, err)) ||
	    (rc = wq__check_utf8("operation key", key, err)))
		return rc;
	memset(&f, 0, sizeof(f));
	rc = wq__rows(s, SQL_OP_FIND,
		      WQ__ARGS(WQ__AT(wq__nz(tenant)), WQ__AT(wq__nz(scope)), WQ__AT(wq__nz(key)),
			       kind ? WQ__AT(kind) : WQ__ANULL),
		      read_found, &f, NULL, "find operation", err);
	if (rc)
		return rc;
	if (f.rows == 0)
		return wq__err(err, WQ_ENOTFOUND,
			       "no operation with key '%s' (tenant '%s', scope '%s'%s%s%s)", key,
			       wq__nz(tenant), wq__nz(scope), kind ? ", kind '" : "", kind ? kind : "",
			       kind ? "'" : "");
	if (f.rows > 1)
		return wq__err(err, WQ_EINVAL,
			       "operation key '%s' (tenant '%s', scope '%s') exists for several "
			       "kinds (%s): name the kind",
			       key, wq__nz(tenant), wq__nz(scope), f.kinds);
	if (!f.exists)
		return wq__err(err, WQ_ENOTFOUND,
			       "operation key '%s' (tenant '%s', scope '%s', kind '%s') was task "
			       "%" PRId64 ", whose row was pruned; the operation record remains "
			       "until its retention ends",
			       key, wq__nz(tenant), wq__nz(scope), f.kinds, f.id);
	*task_id = f.id;
	return WQ_OK;
}

/* ---- batch enqueue (issue 11) ---- */

/* Item i within the batch's transaction. An operation conflict is the item's answer
 * (enqueue_existing found the identity: nothing was written but its event, which stays);
 * anything else fails the batch. */
static wq_rc enqueue_item(struct wq__store *s, const struct wq__new_task *t, size_t i,
			  struct wq__enqueued_row *row, wq_rc *item_rc, wq_error *item_err,
			  int *wake, wq_error *err)
{
	struct enq q;
	wq_error e = {0, ""};
	char *payload;
	wq_rc rc;

	if (!(payload = strndup(t->payload ? t->payload : "", t->payload ? t->payload_len : 0)))
		return wq__err(err, WQ_ENOMEM, "out of memory (payload of item %zu)", i);
	memset(&q, 0, sizeof(q));
	q.t = t;
	q.payload = payload;
	q.batched = 1;
	rc = enqueue_body(s, &q, &e);
	free(payload);
	s->keep = 0; /* the batch's own commit decides */
	if (rc == WQ_ECONFLICT && q.found) {
		*item_rc = WQ_ECONFLICT;
		if (item_err)
			*item_err = e;
		return WQ_OK;
	}
	if (rc) { /* the batch fails; the item's slot says why */
		if (item_err)
			*item_err = e;
		*item_rc = rc;
		return wq__err(err, rc, "item %zu: %s", i, e.message);
	}
	*item_rc = WQ_OK;
	*row = q.row;
	if (!q.row.replayed && t->due_at <= t->now)
		*wake = 1;
	return WQ_OK;
}

wq_rc wq__op_enqueue_many(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
			  struct wq__enqueued_row *rows, wq_rc *item_rc, wq_error *item_errs,
			  wq_error *err)
{
	int wake = 0;
	size_t i;
	wq_rc rc;

	for (i = 0; i < n; i++) {
		wq_error e = {0, ""};
		if ((rc = wq__enqueue_store_check(t[i], &e)) != WQ_OK)
			return wq__err(err, rc, "item %zu: %s", i, e.message);
	}
	/* wave5 enq: a few multi-row statements (op_enqueue_rows.c) unless an item needs a
	 * count or a lock key, or a key was taken meanwhile: then item by item below */
	if (wq__enqueue_rows_fit(t, n) &&
	    (rc = wq__enqueue_many_rows(s, t, n, rows, item_rc, item_errs, err)) !=
		    WQ__ENQUEUE_ROWS_NO)
		return rc;
	if ((rc = wq__begin(s, 1, err)))
		return rc;
	for (i = 0; i < n && !rc; i++) {
		memset(&rows[i], 0, sizeof(rows[i]));
		rc = enqueue_item(s, t[i], i, &rows[i], &item_rc[i],
				  item_errs ? &item_errs[i] : NULL, &wake, err);
	}
	if (!rc && wake)
		rc = wq__notify(s, err);
	return wq__end(s, rc, err);
}
