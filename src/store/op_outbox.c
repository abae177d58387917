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

/* A delivery event's detail: delivery_id and channel, plus what the caller adds. NULL
 * with err set when out of memory. */
static json_t *delivery_detail(int64_t id, const char *channel, wq_error *err)
{
	json_t *d = wq__jobj(err);

	if (d && (wq__jset_int(d, "delivery_id", id) || wq__jset_str(d, "channel", channel, WQ_NAME_MAX))) {
		wq__jfail(d, err);
		return NULL;
	}
	return d;
}

static wq_rc push_queued(const struct wq__row *r, void *ctx)
{
	struct delivery_row *x = wq__push(ctx);

	if (!x)
		return WQ_ENOMEM;
	x->id = wq__i64(r, 0);
	wq__str(r, 1, x->channel, sizeof(x->channel));
	return WQ_OK;
}

wq_rc wq__deliveries_queue(struct wq__store *s, int64_t task_id, int64_t now, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(struct delivery_row)};
	struct delivery_row *rows;
	json_t *d;
	size_t i;
	wq_rc rc;

	rc = wq__rows(s, SQL_DLV_QUEUE,
		      WQ__ARGS(WQ__AI(task_id), WQ__AI(now), WQ__AI(WQ__DELIVERY_MAX_ATTEMPTS)),
		      push_queued, &v, NULL, "queue deliveries", err);
	rows = v.p;
	if (!rc && v.n > 1)
		qsort(rows, v.n, sizeof(*rows), by_id);
	for (i = 0; !rc && i < v.n; i++) {
		if (!(d = delivery_detail(rows[i].id, rows[i].channel, err)))
			rc = WQ_ENOMEM;
		else
			rc = wq__event(s, task_id, now, 0, "delivery-queued", "", d, err);
	}
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (queueing deliveries)");
	free(v.p);
	return rc;
}

/* Outside a transaction: whether the EXISTS query `id` finds a row. Most polls find
 * nothing to do, and then take no write lock. */
static wq_rc any(struct wq__store *s, int id, int64_t now, int *yes, wq_error *err)
{
	int64_t v = 0;
	wq_rc rc = id == SQL_DLV_ANY_DUE
			   ? wq__rows(s, id, WQ__ARGS(WQ__AI(now)), wq__read_i64, &v, NULL,
				      "read deliveries", err)
			   : wq__rows(s, id, WQ__NOARGS, wq__read_i64, &v, NULL, "read deliveries",
				      err);

	*yes = v != 0;
	return rc;
}

static wq_rc push_claimed(const struct wq__row *r, void *ctx)
{
	struct wq__delivery_claimed *c = wq__push(ctx);

	if (!c)
		return WQ_ENOMEM;
	c->id = wq__i64(r, 0);
	c->task_id = wq__i64(r, 1);
	wq__str(r, 2, c->channel, sizeof(c->channel));
	c->attempts = wq__int(r, 3);
	c->retry_base = wq__int(r, 4);
	return WQ_OK;
}

static wq_rc read_task_of(const struct wq__row *r, void *ctx)
{
	struct wq__delivery_claimed *c = ctx;

	wq__str(r, 0, c->kind, sizeof(c->kind));
	wq__str(r, 1, c->operation, sizeof(c->operation));
	c->task_state = wq__state_parse(wq__text(r, 2, NULL));
	wq__str(r, 3, c->outcome, sizeof(c->outcome));
	c->has_result = wq__int(r, 4);
	c->result_size = wq__i64(r, 5);
	wq__str(r, 6, c->result_sha256, sizeof(c->result_sha256));
	return WQ_OK;
}

static wq_rc claim_body(struct wq__store *s, const char *instance, int limit, int64_t now,
			struct wq__vec *v, wq_error *err)
{
	struct wq__delivery_claimed *c;
	json_t *d;
	size_t i;
	wq_rc rc;

	/* Only while the instance row exists: a lost instance claims nothing. */
	rc = wq__rows(s, SQL_DLV_CLAIM, WQ__ARGS(WQ__AT(instance), WQ__AI(now), WQ__AI(limit)),
		      push_claimed, v, NULL, "claim deliveries", err);
	for (i = 0; !rc && i < v->n; i++) {
		c = (struct wq__delivery_claimed *)v->p + i;
		rc = wq__rows(s, SQL_DLV_TASK, WQ__ARGS(WQ__AI(c->task_id)), read_task_of, c, NULL,
			      "read task of a delivery", err);
		if (rc)
			break;
		if (!(d = delivery_detail(c->id, c->channel, err)))
			return WQ_ENOMEM;
		if (wq__jset_int(d, "attempt", c->attempts) ||
		    wq__jset_str(d, "instance", instance, WQ_NAME_MAX))
			return wq__jfail(d, err);
		rc = wq__event(s, c->task_id, now, 0, "delivery-attempt", instance, d, err);
	}
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (claiming deliveries)");
	return rc;
}

wq_rc wq__op_delivery_claim(struct wq__store *s, const char *instance, int limit, int64_t now,
			    struct wq__delivery_claimed **out, size_t *n, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(struct wq__delivery_claimed)};
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
	rc = wq__end(s, claim_body(s, instance, limit, now, &v, err), err);
	if (rc) {
		free(v.p);
		return rc;
	}
	if (v.n > 1) /* RETURNING order is unspecified */
		qsort(v.p, v.n, v.size, by_id);
	*out = wq__take(&v, n);
	return WQ_OK;
}

static wq_rc read_delivery_row(const struct wq__row *r, void *ctx)
{
	struct delivery_row *x = ctx;

	x->task_id = wq__i64(r, 0);
	wq__str(r, 1, x->channel, sizeof(x->channel));
	wq__str(r, 2, x->state, sizeof(x->state));
	x->attempts = wq__int(r, 3);
	wq__str(r, 4, x->instance, sizeof(x->instance));
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
	rc = wq__rows(s, SQL_DLV_STATE, WQ__ARGS(WQ__AI(id)), read_delivery_row, x, &n,
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
	json_t *d;
	wq_rc rc = delivery_state(s, o->id, &x, err);

	if (rc)
		return rc;
	if (strcmp(x.state, want) == 0 && x.attempts == o->attempts &&
	    strcmp(x.instance, o->instance) == 0)
		return WQ_OK;
	if (!(d = delivery_detail(o->id, x.channel, err)))
		return WQ_ENOMEM;
	if (wq__jset_int(d, "attempt", o->attempts) ||
	    wq__jset_str(d, "instance", o->instance, WQ_NAME_MAX) ||
	    wq__jset_str(d, "outcome", want, WQ_REASON_MAX))
		return wq__jfail(d, err);
	rc = wq__event(s, x.task_id, o->now, 0, "delivery-stale", o->instance, d, err);
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

static wq_rc read_task_channel(const struct wq__row *r, void *ctx)
{
	struct delivery_row *x = ctx;

	x->task_id = wq__i64(r, 0);
	wq__str(r, 1, x->channel, sizeof(x->channel));
	return WQ_OK;
}

/* The event that records a delivery outcome. NULL with err set when out of memory. */
static json_t *finish_detail(const struct wq__delivery_outcome *o, const char *channel,
			     const char **type, wq_error *err)
{
	json_t *d = delivery_detail(o->id, channel, err);
	char to[WQ_NAME_MAX + 8];
	int bad;

	if (!d)
		return NULL;
	bad = wq__jset_int(d, o->kind == WQ__DELIVERY_DEAD ? "attempts" : "attempt", o->attempts);
	if (o->kind != WQ__DELIVERY_DELIVERED)
		bad |= wq__jset_str(d, "error", o->error, WQ_DETAIL_MAX);
	if (o->kind == WQ__DELIVERY_RETRY)
		bad |= wq__jset_time(d, "retry_at", o->next_at);
	if (o->status >= 0)
		bad |= wq__jset_int(d, "status", o->status);
	if (o->kind == WQ__DELIVERY_DEAD && o->operators) {
		snprintf(to, sizeof(to), "inbox:%.50s", o->operators);
		bad |= wq__jset_str(d, "reported_to", to, WQ_NAME_MAX);
	}
	*type = o->kind == WQ__DELIVERY_DELIVERED ? "delivered"
		: o->kind == WQ__DELIVERY_RETRY	  ? "delivery-failed"
						  : "dead";
	if (bad) {
		wq__jfail(d, err);
		return NULL;
	}
	return d;
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
	const char *type;
	char key[64];
	size_t found = 0;
	json_t *d;
	wq_rc rc;

	memset(&x, 0, sizeof(x));
	if (o->kind == WQ__DELIVERY_DELIVERED)
		rc = wq__rows(s, SQL_DLV_DELIVERED,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now)),
			      read_task_channel, &x, &found, "record delivery outcome", err);
	else if (o->kind == WQ__DELIVERY_RETRY)
		rc = wq__rows(s, SQL_DLV_RETRY,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now), WQ__AT(error), WQ__AI(o->max_attempts),
				       WQ__AI(o->next_at)),
			      read_task_channel, &x, &found, "record delivery outcome", err);
	else
		rc = wq__rows(s, SQL_DLV_DEAD,
			      WQ__ARGS(WQ__AI(o->id), WQ__AI(o->attempts), WQ__AT(o->instance),
				       WQ__AI(o->now), WQ__AT(error), WQ__AI(o->max_attempts)),
			      read_task_channel, &x, &found, "record delivery outcome", err);
	if (rc)
		return rc;
	if (!found)
		return delivery_stale(s, o, want[o->kind], err);
	if (!(d = finish_detail(o, x.channel, &type, err)))
		return WQ_ENOMEM;
	rc = wq__event(s, x.task_id, o->now, 0, type, o->instance, d, err);
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

static wq_rc push_recovered(const struct wq__row *r, void *ctx)
{
	struct delivery_row *x = wq__push(ctx);

	if (!x)
		return WQ_ENOMEM;
	x->id = wq__i64(r, 0);
	x->task_id = wq__i64(r, 1);
	wq__str(r, 2, x->channel, sizeof(x->channel));
	x->attempts = wq__int(r, 3);
	wq__str(r, 4, x->instance, sizeof(x->instance));
	return WQ_OK;
}

static wq_rc recover_body(struct wq__store *s, const char *instance, const char *held,
			  int64_t now, struct wq__vec *v, wq_error *err)
{
	struct delivery_row *x;
	json_t *d;
	size_t i;
	wq_rc rc;

	rc = wq__rows(s, SQL_DLV_RECOVER,
		      WQ__ARGS(WQ__AT(wq__nz(instance)), WQ__AT(held), WQ__AI(now)),
		      push_recovered, v, NULL, "recover deliveries", err);
	if (!rc && v->n > 1)
		qsort(v->p, v->n, v->size, by_id);
	for (i = 0; !rc && i < v->n; i++) {
		x = (struct delivery_row *)v->p + i;
		if (!(d = delivery_detail(x->id, x->channel, err)))
			return WQ_ENOMEM;
		if (wq__jset_int(d, "attempt", x->attempts) ||
		    wq__jset_str(d, "instance", x->instance, WQ_NAME_MAX) ||
		    wq__jset_str(d, "reason",
				 instance && strcmp(x->instance, instance) == 0 ? "unrecorded"
										: "worker-lost",
				 WQ_REASON_MAX))
			return wq__jfail(d, err);
		rc = wq__event(s, x->task_id, now, 0, "delivery-uncertain", x->instance, d, err);
	}
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (recovering deliveries)");
	return rc;
}

wq_rc wq__op_delivery_recover(struct wq__store *s, const char *instance, const int64_t *held,
			      size_t nheld, int64_t now, int *count, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(struct delivery_row)};
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
		rc = wq__end(s, recover_body(s, instance, hj, now, &v, err), err);
	if (!rc)
		*count = (int)v.n;
	free(v.p);
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

static wq_rc push_delivery(const struct wq__row *r, void *ctx)
{
	wq_delivery *x = wq__push(ctx);

	if (!x)
		return WQ_ENOMEM;
	x->id = wq__i64(r, 0);
	x->task_id = wq__i64(r, 1);
	wq__str(r, 2, x->channel, sizeof(x->channel));
	x->state = wq__delivery_state_parse(wq__text(r, 3, NULL));
	x->attempts = wq__int(r, 4);
	x->max_attempts = wq__int(r, 5);
	x->created_at = wq__i64(r, 6);
	x->updated_at = wq__i64(r, 7);
	x->next_at = wq__i64(r, 8);
	x->delivered_at = wq__i64(r, 9);
	wq__str(r, 10, x->last_error, sizeof(x->last_error));
	return WQ_OK;
}

wq_rc wq__op_delivery_list(struct wq__store *s, wq_delivery_state state, wq_delivery **out,
			   size_t *n, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(wq_delivery)};
	wq_rc rc;

	if (state && !wq__delivery_state_text(state))
		return wq__err(err, WQ_EINVAL, "delivery list: no state %d", (int)state);
	rc = wq__rows(s, SQL_DLV_LIST,
		      WQ__ARGS(WQ__AT(state ? wq__delivery_state_text(state) : "")), push_delivery,
		      &v, NULL, "list deliveries", err);
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (listing deliveries)");
	if (rc) {
		free(v.p);
		return rc;
	}
	*out = wq__take(&v, n);
	return WQ_OK;
}

static wq_rc retry_body(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	struct delivery_row x;
	int64_t changes = 0;
	json_t *d;
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
	if (rc)
		return rc;
	if (!(d = delivery_detail(id, x.channel, err)))
		return WQ_ENOMEM;
	if (wq__jset_str(d, "by", "operator", WQ_REASON_MAX))
		return wq__jfail(d, err);
	return wq__event(s, x.task_id, now, 0, "delivery-retry", "", d, err);
}

wq_rc wq__op_delivery_retry(struct wq__store *s, int64_t id, int64_t now, wq_error *err)
{
	wq_rc rc = wq__begin(s, 1, err);

	return rc ? rc : wq__end(s, retry_body(s, id, now, err), err);
}

static wq_rc push_notification(const struct wq__row *r, void *ctx)
{
	wq_notification *x = wq__push(ctx);

	if (!x)
		return WQ_ENOMEM;
	x->id = wq__i64(r, 0);
	wq__str(r, 1, x->recipient, sizeof(x->recipient));
	x->delivery_id = wq__i64(r, 2);
	x->task_id = wq__i64(r, 3);
	wq__str(r, 4, x->kind, sizeof(x->kind));
	wq__str(r, 5, x->operation, sizeof(x->operation));
	wq__str(r, 6, x->subject, sizeof(x->subject));
	x->result_size = wq__i64(r, 7);
	wq__str(r, 8, x->result_sha256, sizeof(x->result_sha256));
	x->created_at = wq__i64(r, 9);
	x->read_at = wq__i64(r, 10);
	return WQ_OK;
}

wq_rc wq__op_inbox_list(struct wq__store *s, const char *recipient, int unread_only,
			wq_notification **out, size_t *n, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(wq_notification)};
	wq_rc rc = wq__check_utf8("recipient", recipient, err);

	if (!rc)
		rc = wq__rows(s, SQL_INBOX_LIST,
			      WQ__ARGS(WQ__AT(wq__nz(recipient)), WQ__AI(unread_only ? 1 : 0)),
			      push_notification, &v, NULL, "read the inbox", err);
	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (reading the inbox)");
	if (rc) {
		free(v.p);
		return rc;
	}
	*out = wq__take(&v, n);
	return WQ_OK;
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
