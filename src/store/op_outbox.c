/*
 * op_outbox.c — the outbox (SPEC §8): deliveries queued with a succeeded task, claimed
 * and finished by workers under the same fencing as tasks (attempt number and
 * instance), recovered when their worker is gone; and the inbox they write.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct delivery_row {
	int64_t id, task_id;
	char channel[WQ_NAME_MAX + 1];
	char state[16];
	int attempts;
	char instance[WQ_NAME_MAX + 1];
};

static int by_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b; /* id is the first member */

	return x < y ? -1 : x > y;
}

#define R(type, f) WQ__COL(type, struct delivery_row, f)
#define C(type, f) WQ__COL(type, struct wq__delivery_claimed, f)
static const struct wq__col queued_cols[] = {R('i', id), R('s', channel)};
static const struct wq__col owned_cols[] = {R('i', task_id), R('s', channel)};
static const struct wq__col state_cols[] = { /* SQL_DLV_STATE */
	R('i', task_id), R('s', channel), R('s', state), R('i', attempts), R('s', instance),
};
static const struct wq__col recovered_cols[] = {
	R('i', id), R('i', task_id), R('s', channel), R('i', attempts), R('s', instance),
};
static const struct wq__col claimed_cols[] = {
	C('i', id), C('i', task_id), C('s', channel), C('i', attempts), C('i', retry_base),
};
static const struct wq__col task_cols[] = { /* SQL_DLV_TASK */
	C('s', kind), C('s', operation), C('S', task_state), C('s', outcome), C('i', has_result),
	C('i', result_size), C('s', result_sha256),
};
#undef C
#undef R
#define D(type, f) WQ__COL(type, wq_delivery, f)
static const struct wq__col delivery_cols[] = {
	D('i', id), D('i', task_id), D('s', channel), D('D', state), D('i', attempts),
	D('i', max_attempts), D('i', created_at), D('i', updated_at), D('i', next_at),
	D('i', delivered_at), D('s', last_error),
};
#undef D
#define N(type, f) WQ__COL(type, wq_notification, f)
static const struct wq__col notification_cols[] = {
	N('i', id), N('s', recipient), N('i', delivery_id), N('i', task_id), N('s', kind),
	N('s', operation), N('s', subject), N('i', result_size), N('s', result_sha256),
	N('i', created_at), N('i', read_at),
};
#undef N

wq_rc wq__deliveries_queue(struct wq__store *s, int64_t task_id, int64_t now, wq_error *err)
{
	struct delivery_row *rows = NULL;
	size_t i, n = 0;
	wq_rc rc;

	rc = wq__select(s, SQL_DLV_QUEUE,
			WQ__ARGS(WQ__AI(task_id), WQ__AI(now), WQ__AI(WQ__DELIVERY_MAX_ATTEMPTS)),
			WQ__COLS(queued_cols), sizeof(*rows), &rows, &n, "queue deliveries", err);
	if (!rc && n > 1)
		qsort(rows, n, sizeof(*rows), by_id);
	for (i = 0; !rc && i < n; i++)
		rc = wq__eventf(s, task_id, now, 0, "delivery-queued", "", err, "is", "delivery_id",
				rows[i].id, "channel", rows[i].channel, WQ_NAME_MAX);
	if (!rc && n > 0)
		rc = wq__notify(s, err); /* due now: any worker's delivery slot may take it */
	free(rows);
	return rc;
}

/* Outside a transaction: whether the EXISTS query `id` finds a row. Most polls find
 * nothing to do, and then take no write lock. */
static wq_rc any(struct wq__store *s, int id, int64_t now, int *yes, wq_error *err)
{
	int64_t v = 0; /* (SQL_DLV_ANY_SENDING takes no argument: drivers ignore extra ones) */
	wq_rc rc = wq__rows(s, id, WQ__ARGS(WQ__AI(now)), wq__read_i64, &v, NULL,
			    "read deliveries", err);

	*yes = v != 0;
	return rc;
}

static wq_rc claim_body(struct wq__store *s, const char *instance, int limit, int64_t now,
			struct wq__delivery_claimed **out, size_t *n, wq_error *err)
{
	struct wq__delivery_claimed *c;
	size_t i;
	wq_rc rc;

	/* Only while the instance row exists: a lost instance claims nothing. */
	rc = wq__select(s, SQL_DLV_CLAIM, WQ__ARGS(WQ__AT(instance), WQ__AI(now), WQ__AI(limit)),
			WQ__COLS(claimed_cols), sizeof(**out), out, n, "claim deliveries", err);
	for (i = 0; !rc && i < *n; i++) {
		c = *out + i;
		rc = wq__select1(s, SQL_DLV_TASK, WQ__ARGS(WQ__AI(c->task_id)), WQ__COLS(task_cols),
				 c, NULL, "read task of a delivery", err);
		if (!rc)
			rc = wq__eventf(s, c->task_id, now, 0, "delivery-attempt", instance, err,
					"isis", "delivery_id", c->id, "channel", c->channel,
					WQ_NAME_MAX, "attempt", (int64_t)c->attempts, "instance",
					instance, WQ_NAME_MAX);
	}
	return rc;
}

wq_rc wq__op_delivery_claim(struct wq__store *s, const char *instance, int limit, int64_t now,
			    struct wq__delivery_claimed **out, size_t *n, wq_error *err)
{
	struct wq__delivery_claimed *arr = NULL;
	size_t cnt = 0;
	int due = 0;
	wq_rc rc;

	if (!instance || !*instance)
		return wq__err(err, WQ_EINVAL, "delivery claim: no instance given");
	*out = NULL;
	*n = 0;
	if (limit <= 0)
		return WQ_OK;
	rc = any(s, SQL_DLV_ANY_DUE, now, &due, err);
	if (rc || !due)
		return rc;
	rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	/* A claim whose COMMIT answer was lost leaves its deliveries sending under this
	 * instance: delivery_recover() hands them back (`unrecorded`). */
	s->retry_safe = 1;
	rc = wq__end(s, claim_body(s, instance, limit, now, &arr, &cnt, err), err);
	if (rc) {
		free(arr);
		return rc;
	}
	if (cnt > 1) /* RETURNING order is unspecified */
		qsort(arr, cnt, sizeof(*arr), by_id);
	*out = arr;
	*n = cnt;
	return WQ_OK;
}

/* Within a write transaction: delivery `id` (locked where the dialect locks rows), or
 * WQ_ENOTFOUND. */
static wq_rc delivery_state(struct wq__store *s, int64_t id, struct delivery_row *x,
			    wq_error *err)
{
	size_t n = 0;
	wq_rc rc;

	memset(x, 0, sizeof(*x));
	x->id = id;
	rc = wq__select1(s, SQL_DLV_STATE, WQ__ARGS(WQ__AI(id)), WQ__COLS(state_cols), x, &n,
			 "read delivery", err);
	if (!rc && n == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no delivery %" PRId64, id);
	return rc;
}

/* The conditional update of delivery_finish found no row sending under this attempt:
 * WQ_OK (nothing written) when the row shows this very outcome recorded (a retry after
 * a lost COMMIT answer), else a `delivery-stale` event (kept) and WQ_ESTALE. */
static wq_rc delivery_stale(struct wq__store *s, const struct wq__delivery_outcome *o,
			    const char *want, wq_error *err)
{
	struct delivery_row x;
	wq_rc rc = delivery_state(s, o->id, &x, err);

	if (rc)
		return rc;
	if (strcmp(x.state, want) == 0 && x.attempts == o->attempts &&
	    strcmp(x.instance, o->instance) == 0)
		return WQ_OK;
	rc = wq__eventf(s, x.task_id, o->now, 0, "delivery-stale", o->instance, err, "isiss",
			"delivery_id", o->id, "channel", x.channel, WQ_NAME_MAX, "attempt",
			(int64_t)o->attempts, "instance", o->instance, WQ_NAME_MAX, "outcome", want,
			WQ_REASON_MAX);
	if (rc)
		return rc;
	s->keep = 1;
	return wq__err(err, WQ_ESTALE,
		       "delivery %" PRId64 " attempt %d no longer owns the delivery (now %s, "
		       "attempt %d)",
		       o->id, o->attempts, x.state, x.attempts);
}

/* Within a transaction: one inbox notification, unless its key is there already. */
static wq_rc inbox_insert(struct wq__store *s, const char *recipient, const char *key,
			  int64_t delivery_id, int64_t task_id, const char *subject, int64_t now,
			  wq_error *err)
{
	return wq__run(s, SQL_INBOX_INSERT,
		       WQ__ARGS(WQ__AT(recipient), WQ__AT(key), WQ__AI(delivery_id),
				WQ__AT(subject), WQ__AI(now), WQ__AI(task_id)),
		       NULL, "write the inbox", err);
}

/* The event that records a delivery outcome. */
static wq_rc finish_event(struct wq__store *s, const struct wq__delivery_outcome *o,
			  const struct delivery_row *x, const char *error, wq_error *err)
{
	char to[WQ_NAME_MAX + 8] = "";

	if (o->kind == WQ__DELIVERY_DELIVERED)
		return wq__eventf(s, x->task_id, o->now, 0, "delivered", o->instance, err, "isiI",
				  "delivery_id", o->id, "channel", x->channel, WQ_NAME_MAX,
				  "attempt", (int64_t)o->attempts, "status", (int64_t)o->status);
	if (o->kind == WQ__DELIVERY_RETRY)
		return wq__eventf(s, x->task_id, o->now, 0, "delivery-failed", o->instance, err,
				  "isistI", "delivery_id", o->id, "channel", x->channel,
				  WQ_NAME_MAX, "attempt", (int64_t)o->attempts, "error", error,
				  WQ_DETAIL_MAX, "retry_at", o->next_at, "status", (int64_t)o->status);
	if (o->operators)
		snprintf(to, sizeof(to), "inbox:%.50s", o->operators);
	return wq__eventf(s, x->task_id, o->now, 0, "dead", o->instance, err, "isisIS",
			  "delivery_id", o->id, "channel", x->channel, WQ_NAME_MAX, "attempts",
			  (int64_t)o->attempts, "error", error, WQ_DETAIL_MAX, "status",
			  (int64_t)o->status, "reported_to", to, WQ_NAME_MAX);
}

static wq_rc finish_body(struct wq__store *s, const struct wq__delivery_outcome *o,
			 const char *error, wq_error *err)
{
	static const char *const want[] = {
		[WQ__DELIVERY_DELIVERED] = "delivered",
		[WQ__DELIVERY_RETRY] = "pending",
		[WQ__DELIVERY_DEAD] = "dead",
	};
	struct delivery_row x;
	char key[64];
	size_t found = 0;
	wq_rc rc;

	memset(&x, 0, sizeof(x));
	if (o->kind == WQ__DELIVERY_DELIVERED)
		rc = wq__select1(s, SQL_DLV_DELIVERED,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now)),
			      WQ__COLS(owned_cols), &x, &found, "record delivery outcome", err);
	else if (o->kind == WQ__DELIVERY_RETRY)
		rc = wq__select1(s, SQL_DLV_RETRY,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now), WQ__AT(error), WQ__AI(o->max_attempts),
				       WQ__AI(o->next_at)),
			      WQ__COLS(owned_cols), &x, &found, "record delivery outcome", err);
	else
		rc = wq__select1(s, SQL_DLV_DEAD,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now), WQ__AT(error), WQ__AI(o->max_attempts)),
			      WQ__COLS(owned_cols), &x, &found, "record delivery outcome", err);
	if (rc)
		return rc;
	if (!found)
		return delivery_stale(s, o, want[o->kind], err);
	rc = finish_event(s, o, &x, error, err);
	if (rc)
		return rc;
	if (o->kind == WQ__DELIVERY_DELIVERED && o->inbox) {
		snprintf(key, sizeof(key), "delivery:%" PRId64, o->id);
		rc = inbox_insert(s, o->inbox, key, o->id, x.task_id, "succeeded", o->now, err);
	} else if (o->kind == WQ__DELIVERY_DEAD && o->operators) {
		/* One report per death: a retried report adds nothing, a later death after an
		 * operator's retry (more attempts) is a new one. */
		snprintf(key, sizeof(key), "dead:%" PRId64 ":%d", o->id, o->attempts);
		rc = inbox_insert(s, o->operators, key, o->id, x.task_id, "dead-delivery", o->now,
				  err);
	}
	return rc;
}

wq_rc wq__op_delivery_finish(struct wq__store *s, const struct wq__delivery_outcome *o,
			     wq_error *err)
{
	char *error = NULL;
	wq_rc rc;

	if (o->kind < WQ__DELIVERY_DELIVERED || o->kind > WQ__DELIVERY_DEAD)
		return wq__err(err, WQ_EINVAL, "delivery finish: unknown outcome %d", (int)o->kind);
	if (!o->instance)
		return wq__err(err, WQ_EINVAL, "delivery finish: no instance given");
	if ((rc = wq__check_utf8("inbox recipient", o->inbox, err)) ||
	    (rc = wq__check_utf8("operators' inbox", o->operators, err)))
		return rc;
	/* The receiver's error text is free text: made valid UTF-8 here, once. */
	if (!(error = wq__utf8_clean(wq__nz(o->error), strlen(wq__nz(o->error)))))
		return wq__err(err, WQ_ENOMEM, "out of memory (delivery finish)");
	rc = wq__begin(s, 1, err);
	if (!rc) {
		s->retry_safe = 1; /* a retry recognises its own recorded outcome */
		rc = wq__end(s, finish_body(s, o, error, err), err);
	}
	free(error);
	return rc;
}

static wq_rc recover_body(struct wq__store *s, const char *instance, const char *held,
			  int64_t now, struct delivery_row **rows, size_t *n, wq_error *err)
{
	struct delivery_row *x;
	size_t i;
	wq_rc rc;

	rc = wq__select(s, SQL_DLV_RECOVER,
			WQ__ARGS(WQ__AT(wq__nz(instance)), WQ__AT(held), WQ__AI(now)),
			WQ__COLS(recovered_cols), sizeof(**rows), rows, n, "recover deliveries",
			err);
	if (!rc && *n > 1)
		qsort(*rows, *n, sizeof(**rows), by_id);
	for (i = 0; !rc && i < *n; i++) {
		x = *rows + i;
		rc = wq__eventf(s, x->task_id, now, 0, "delivery-uncertain", x->instance, err,
				"isiss", "delivery_id", x->id, "channel", x->channel, WQ_NAME_MAX,
				"attempt", (int64_t)x->attempts, "instance", x->instance, WQ_NAME_MAX,
				"reason",
				instance && strcmp(x->instance, instance) == 0 ? "unrecorded"
									       : "worker-lost",
				WQ_REASON_MAX);
	}
	return rc;
}

wq_rc wq__op_delivery_recover(struct wq__store *s, const char *instance, const int64_t *held,
			      size_t nheld, int64_t now, int *count, wq_error *err)
{
	struct delivery_row *rows = NULL;
	size_t cnt = 0;
	char *hj = NULL;
	int sending = 0;
	wq_rc rc = any(s, SQL_DLV_ANY_SENDING, now, &sending, err);

	if (rc)
		return rc;
	if (!sending) {
		*count = 0;
		return WQ_OK;
	}
	rc = wq__json_ids(held, nheld, &hj, err);
	if (!rc)
		rc = wq__begin(s, 1, err);
	if (!rc)
		rc = wq__end(s, recover_body(s, instance, hj, now, &rows, &cnt, err), err);
	if (!rc)
		*count = (int)cnt;
	free(rows);
	free(hj);
	return rc;
}

wq_rc wq__op_delivery_next(struct wq__store *s, int64_t *due_out, wq_error *err)
{
	int64_t due = 0;
	wq_rc rc = wq__rows(s, SQL_DLV_NEXT, WQ__NOARGS, wq__read_i64, &due, NULL,
			    "read next delivery", err);

	if (!rc)
		*due_out = due; /* NULL (none) reads as 0 */
	return rc;
}

wq_rc wq__op_delivery_list(struct wq__store *s, wq_delivery_state state, wq_delivery **out,
			   size_t *n, wq_error *err)
{
	if (state && !wq_delivery_state_name(state))
		return wq__err(err, WQ_EINVAL, "delivery list: no state %d", (int)state);
	return wq__select(s, SQL_DLV_LIST,
			  WQ__ARGS(WQ__AT(state ? wq_delivery_state_name(state) : "")),
			  WQ__COLS(delivery_cols), sizeof(wq_delivery), out, n, "listing deliveries",
			  err);
}

static wq_rc retry_body(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	struct delivery_row x;
	int64_t changes = 0;
	wq_rc rc = delivery_state(s, id, &x, err);

	if (rc)
		return rc;
	if (strcmp(x.state, "dead") != 0)
		return wq__err(err, WQ_ESTATE,
			       "delivery %" PRId64 " is %s; only a dead delivery can be retried", id,
			       x.state);
	rc = wq__run(s, SQL_DLV_RETRY_DEAD, WQ__ARGS(WQ__AI(id), WQ__AI(now)), &changes,
		     "retry delivery", err);
	if (!rc && changes != 1)
		rc = wq__err(err, WQ_ESTATE, "delivery %" PRId64 " is no longer dead", id);
	return rc ? rc
		  : wq__eventf(s, x.task_id, now, 0, "delivery-retry", "", err, "iss",
			       "delivery_id", id, "channel", x.channel, WQ_NAME_MAX, "by",
			       "operator", WQ_REASON_MAX);
}

wq_rc wq__op_delivery_retry(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	rc = retry_body(s, id, now, err);
	if (!rc)
		rc = wq__notify(s, err); /* due now */
	return wq__end(s, rc, err);
}

wq_rc wq__op_inbox_list(struct wq__store *s, const char *recipient, int unread_only,
			wq_notification **out, size_t *n, wq_error *err)
{
	wq_rc rc = wq__check_utf8("recipient", recipient, err);

	return rc ? rc
		  : wq__select(s, SQL_INBOX_LIST,
			       WQ__ARGS(WQ__AT(wq__nz(recipient)), WQ__AI(unread_only ? 1 : 0)),
			       WQ__COLS(notification_cols), sizeof(wq_notification), out, n,
			       "reading the inbox", err);
}

static wq_rc read_body(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	int64_t changes = 0;
	size_t n = 0;
	wq_rc rc = wq__run(s, SQL_INBOX_READ, WQ__ARGS(WQ__AI(id), WQ__AI(now)), &changes,
			   "mark notification read", err);

	/* No change: read already (nothing to do), or no such notification. */
	if (!rc && changes == 0)
		rc = wq__rows(s, SQL_INBOX_EXISTS, WQ__ARGS(WQ__AI(id)), NULL, NULL, &n,
			      "read notification", err);
	if (!rc && changes == 0 && n == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no notification %" PRId64, id);
	return rc;
}

wq_rc wq__op_inbox_read(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	wq_rc rc = wq__begin(s, 1, err);

	return rc ? rc : wq__end(s, read_body(s, id, now, err), err);
}
