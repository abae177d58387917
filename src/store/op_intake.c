/*
 * op_intake.c — intake (SPEC §9, issue 13): mailbox messages recorded with their task in
 * one transaction, and the acknowledgement at the source as an outbox step of its own.
 *
 * A record's life: pending (its task runs; each attempt is one handout) → handled or
 * giving-up, set by finish() in the transaction that records the task's outcome, which
 * also queues the acknowledgement (due now) → acknowledged or abandoned, set only by
 * intake_ack_finish once the source took the acknowledgement. A refused acknowledgement
 * stays queued with a backoff, so the two markers (the source's flag and this record)
 * only ever move together: the record changes after the flag, and the flag is set again
 * (idempotent at the source) until the record has changed. `retired`: the mailbox's
 * UIDVALIDITY changed, the old keys mean nothing any more.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key_row {
	char key[WQ_INTAKE_KEY_MAX + 1];
};

struct task_row { /* SQL_INTAKE_OF_TASK, SQL_INTAKE_RETIRE */
	int64_t id, task_id;
	char source[WQ_INTAKE_SOURCE_MAX + 1];
	char key[WQ_INTAKE_KEY_MAX + 1];
	char state[16];
};

#define K(type, f) WQ__COL(type, struct key_row, f)
static const struct wq__col key_cols[] = {K('s', key)};
#undef K
#define T(type, f) WQ__COL(type, struct task_row, f)
static const struct wq__col of_task_cols[] = {T('i', id), T('s', source), T('s', key),
					      T('s', state)};
static const struct wq__col retired_cols[] = {T('i', id), T('i', task_id), T('s', key)};
#undef T
#define A(type, f) WQ__COL(type, struct wq__intake_ack_row, f)
static const struct wq__col claim_cols[] = {
	A('i', id), A('s', key), A('i', uidvalidity), A('i', uid), A('s', state),
	A('i', ack_attempts), A('i', task_id),
};
#undef A
#define R(type, f) WQ__COL(type, struct wq__intake_acked, f)
static const struct wq__col acked_cols[] = {
	R('s', source), R('s', key), R('s', state), R('s', outcome), R('i', task_id),
	R('s', operators), R('i', handouts),
};
#undef R
#define I(type, f) WQ__COL(type, wq_intake, f)
static const struct wq__col intake_cols[] = { /* WQ__INTAKE_COLUMNS */
	I('i', id), I('s', source), I('s', key), I('i', uidvalidity), I('i', uid),
	I('s', state), I('s', outcome), I('i', task_id), I('i', handouts), I('i', max_handouts),
	I('i', size), I('i', ack_attempts), I('i', ack_next_at), I('s', ack_error),
	I('i', created_at), I('i', updated_at), I('i', handled_at), I('i', acked_at),
};
#undef I

wq_rc wq__op_intake_known(struct wq__store *s, const char *source, const char *const *keys,
			  size_t n, unsigned char *known, wq_error *err)
{
	struct key_row *rows = NULL;
	size_t i, j, cnt = 0;
	char *kj = NULL;
	wq_rc rc;

	memset(known, 0, n);
	if (n == 0)
		return WQ_OK;
	rc = wq__json_texts(keys, n, "intake key", &kj, err);
	if (!rc)
		rc = wq__select(s, SQL_INTAKE_KNOWN, WQ__ARGS(WQ__AT(source), WQ__AT(kj)),
				WQ__COLS(key_cols), sizeof(*rows), &rows, &cnt,
				"read intake records", err);
	/* n and cnt are one poll's batch (bounded by the caller): quadratic is fine. */
	for (i = 0; !rc && i < cnt; i++)
		for (j = 0; j < n; j++)
			if (strcmp(rows[i].key, keys[j]) == 0)
				known[j] = 1;
	free(rows);
	free(kj);
	return rc;
}

static wq_rc retire_body(struct wq__store *s, const char *source, int64_t uidvalidity,
			 int64_t now, int *count, wq_error *err)
{
	struct task_row *rows = NULL;
	size_t i, n = 0;
	wq_rc rc;

	rc = wq__select(s, SQL_INTAKE_RETIRE, WQ__ARGS(WQ__AT(source), WQ__AI(uidvalidity),
						      WQ__AI(now)),
			WQ__COLS(retired_cols), sizeof(*rows), &rows, &n, "retire intake records",
			err);
	for (i = 0; !rc && i < n; i++)
		if (rows[i].task_id > 0)
			rc = wq__eventf(s, rows[i].task_id, now, 0, "intake-retired", "", err, "ssi",
					"source", source, WQ_INTAKE_SOURCE_MAX, "key", rows[i].key,
					WQ_INTAKE_KEY_MAX, "uidvalidity", uidvalidity);
	if (!rc)
		*count = (int)n;
	free(rows);
	return rc;
}

wq_rc wq__op_intake_retire(struct wq__store *s, const char *source, int64_t uidvalidity,
			   int64_t now, int *count, wq_error *err)
{
	size_t stale = 0;
	wq_rc rc;

	*count = 0;
	/* Nearly every poll finds the validity unchanged: a read, no write lock. */
	rc = wq__rows(s, SQL_INTAKE_STALE_ANY, WQ__ARGS(WQ__AT(source), WQ__AI(uidvalidity)),
		      NULL, NULL, &stale, "read intake records", err);
	if (rc || !stale)
		return rc;
	rc = wq__begin(s, 1, err);
	return rc ? rc : wq__end(s, retire_body(s, source, uidvalidity, now, count, err), err);
}

static wq_rc record_body(struct wq__store *s, const struct wq__intake_msg *m,
			 int64_t *task_id, wq_error *err)
{
	struct wq__enqueued_row row;
	int64_t id = 0;
	wq_rc rc;

	rc = wq__insert(s, SQL_INTAKE_INSERT,
			WQ__ARGS(WQ__AT(m->source), WQ__AT(m->key), WQ__AI(m->uidvalidity),
				 WQ__AI(m->uid), WQ__AI(m->max_handouts), WQ__AI(m->size),
				 WQ__AT(wq__nz(m->operators)), WQ__AI(m->task.now)),
			&id, "record intake message", err);
	if (rc || id == 0) /* recorded by an earlier poll (or another worker): nothing new */
		return rc;
	memset(&row, 0, sizeof(row));
	rc = wq__enqueue_in(s, &m->task, &row, err);
	if (!rc)
		rc = wq__run(s, SQL_INTAKE_SET_TASK, WQ__ARGS(WQ__AI(id), WQ__AI(row.id)), NULL,
			     "record intake message", err);
	if (!rc)
		*task_id = row.id;
	return rc;
}

wq_rc wq__op_intake_record(struct wq__store *s, const struct wq__intake_msg *m,
			   int64_t *task_id, wq_error *err)
{
	wq_rc rc;

	*task_id = 0;
	if ((rc = wq__check_utf8("source", m->source, err)) ||
	    (rc = wq__check_utf8("intake key", m->key, err)) ||
	    (rc = wq__check_utf8("operators' inbox", m->operators, err)))
		return rc;
	rc = wq__begin(s, 1, err);
	return rc ? rc : wq__end(s, record_body(s, m, task_id, err), err);
}

/* Within finish(): see op.h. A task of a retired record, or one that is not an intake
 * task at all, finds no pending record and changes nothing here. */
wq_rc wq__intake_finished(struct wq__store *s, const struct wq__outcome *o, wq_error *err)
{
	struct task_row x;
	const char *state, *outcome;
	size_t found = 0;
	int64_t changes = 0;
	wq_rc rc;

	memset(&x, 0, sizeof(x));
	rc = wq__select1(s, SQL_INTAKE_OF_TASK, WQ__ARGS(WQ__AI(o->task_id)),
			 WQ__COLS(of_task_cols), &x, &found, "read intake record", err);
	if (rc || !found)
		return rc;
	if (o->kind != WQ__FINISH_SUCCEEDED && o->kind != WQ__FINISH_FAILED)
		/* the message comes back: a retry is the next handout; an interrupted or
		 * cancelled task waits for a decision (resolve, retry) */
		return wq__run(s, SQL_INTAKE_HANDOUTS,
			       WQ__ARGS(WQ__AI(x.id), WQ__AI(o->attempt), WQ__AI(o->now)), NULL,
			       "count the handout", err);
	if (o->kind == WQ__FINISH_SUCCEEDED) {
		state = "handled";
		outcome = o->outcome && strcmp(o->outcome, "discarded") == 0 ? "discarded"
									    : "succeeded";
	} else { /* the last handout failed: give up, acknowledge, report (SPEC §9) */
		state = "giving-up";
		outcome = "abandoned";
	}
	rc = wq__run(s, SQL_INTAKE_HANDLED,
		     WQ__ARGS(WQ__AI(x.id), WQ__AI(o->task_id), WQ__AT(state), WQ__AT(outcome),
			      WQ__AI(o->now), WQ__AI(o->attempt)),
		     &changes, "queue the acknowledgement", err);
	if (rc || changes != 1)
		return rc ? rc
			  : wq__err(err, WQ_EBUSY, "intake record %" PRId64 " changed meanwhile",
				    x.id);
	return wq__eventf(s, o->task_id, o->now, o->attempt, "source-ack-queued", o->instance,
			  err, "sss", "source", x.source, WQ_INTAKE_SOURCE_MAX, "key", x.key,
			  WQ_INTAKE_KEY_MAX, "outcome", outcome, WQ_REASON_MAX);
}

/* The owner lease (ack_until) is written and judged on the store's clock, read once in
 * this transaction (issue 15): an instance whose clock runs ahead cannot take an
 * acknowledgement another is still sending (the source would see it twice), nor one
 * whose clock runs behind wait past an expired lease. */
static wq_rc ack_claim_body(struct wq__store *s, const char *instance, const char *source,
			    int limit, int64_t now, int64_t lease,
			    struct wq__intake_ack_row **out, size_t *n, wq_error *err)
{
	struct wq__intake_ack_row *x;
	int64_t store_now = 0;
	size_t i;
	wq_rc rc;

	rc = wq__store_clock(s, &store_now, err);
	if (!rc)
		rc = wq__select(s, SQL_INTAKE_ACK_CLAIM,
				WQ__ARGS(WQ__AT(instance), WQ__AI(now), WQ__AT(source),
					 WQ__AI(store_now + lease), WQ__AI(limit),
					 WQ__AI(store_now)),
				WQ__COLS(claim_cols), sizeof(**out), out, n,
				"claim acknowledgements", err);
	for (i = 0; !rc && i < *n; i++) {
		x = *out + i;
		rc = wq__eventf(s, x->task_id, now, 0, "source-ack-attempt", instance, err, "ssis",
				"source", source, WQ_INTAKE_SOURCE_MAX, "key", x->key,
				WQ_INTAKE_KEY_MAX, "attempt", (int64_t)x->ack_attempts, "instance",
				instance, WQ_NAME_MAX);
	}
	return rc;
}

static int by_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b; /* id is the first member */

	return x < y ? -1 : x > y;
}

wq_rc wq__op_intake_ack_claim(struct wq__store *s, const char *instance, const char *source,
			      int limit, int64_t now, int64_t lease,
			      struct wq__intake_ack_row **out, size_t *n, wq_error *err)
{
	struct wq__intake_ack_row *arr = NULL;
	size_t cnt = 0, due = 0;
	int64_t store_now = 0;
	wq_rc rc;

	*out = NULL;
	*n = 0;
	if (!instance || !*instance)
		return wq__err(err, WQ_EINVAL, "acknowledgement claim: no instance given");
	if (lease <= 0)
		return wq__err(err, WQ_EINVAL, "acknowledgement claim: the lease must be positive");
	if (limit <= 0)
		return WQ_OK;
	/* Most ticks find nothing due: a read, no write lock. */
	rc = wq__store_clock(s, &store_now, err);
	if (!rc)
		rc = wq__rows(s, SQL_INTAKE_ACK_ANY,
			      WQ__ARGS(WQ__AT(source), WQ__AI(now), WQ__AI(store_now)), NULL, NULL,
			      &due, "read acknowledgements", err);
	if (rc || !due)
		return rc;
	rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	/* A claim whose COMMIT answer was lost leaves rows owned for `lease`; after it
	 * they are claimable again (the acknowledgement is idempotent at the source). */
	s->retry_safe = 1;
	rc = wq__end(s, ack_claim_body(s, instance, source, limit, now, lease, &arr, &cnt, err),
		     err);
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

/* The fenced update found nothing: this very answer recorded already (a retry after a
 * lost COMMIT answer: the row shows a final state, or the failure's next_at) is WQ_OK;
 * anything else WQ_ESTALE. */
static wq_rc ack_stale(struct wq__store *s, const struct wq__intake_ack *a,
		       struct wq__intake_acked *out, wq_error *err)
{
	struct {
		struct wq__intake_acked r;
		int ack_attempts;
		int64_t acked_at;
	} x;
	static const struct wq__col cols[] = {
		WQ__COL('s', __typeof__(x), r.source), WQ__COL('s', __typeof__(x), r.key),
		WQ__COL('s', __typeof__(x), r.state), WQ__COL('s', __typeof__(x), r.outcome),
		WQ__COL('i', __typeof__(x), r.task_id), WQ__COL('s', __typeof__(x), r.operators),
		WQ__COL('i', __typeof__(x), r.handouts), WQ__COL('i', __typeof__(x), ack_attempts),
		WQ__COL('i', __typeof__(x), acked_at),
	};
	size_t found = 0;
	wq_rc rc;

	memset(&x, 0, sizeof(x));
	rc = wq__select1(s, SQL_INTAKE_ROW, WQ__ARGS(WQ__AI(a->id)), WQ__COLS(cols), &x, &found,
			 "read intake record", err);
	if (rc)
		return rc;
	if (!found)
		return wq__err(err, WQ_ENOTFOUND, "no intake record %" PRId64, a->id);
	*out = x.r;
	if (a->ok && x.ack_attempts == a->ack_attempts && x.acked_at == a->now)
		return WQ_OK;
	return wq__err(err, WQ_ESTALE,
		       "acknowledgement %d of intake record %" PRId64 " no longer owns it (now %s, "
		       "attempt %d)",
		       a->ack_attempts, a->id, x.r.state, x.ack_attempts);
}

static wq_rc ack_finish_body(struct wq__store *s, const struct wq__intake_ack *a,
			     const char *error, struct wq__intake_acked *r, wq_error *err)
{
	char key[48];
	size_t found = 0;
	wq_rc rc;

	if (a->ok)
		rc = wq__select1(s, SQL_INTAKE_ACKED,
				 WQ__ARGS(WQ__AI(a->id), WQ__AI(a->ack_attempts), WQ__AT(a->instance),
					  WQ__AI(a->now)),
				 WQ__COLS(acked_cols), r, &found, "record the acknowledgement", err);
	else
		rc = wq__select1(s, SQL_INTAKE_ACK_RETRY,
				 WQ__ARGS(WQ__AI(a->id), WQ__AI(a->ack_attempts), WQ__AT(a->instance),
					  WQ__AI(a->next_at), WQ__AT(error), WQ__AI(a->now)),
				 WQ__COLS(acked_cols), r, &found, "record the acknowledgement", err);
	if (rc)
		return rc;
	if (!found)
		return ack_stale(s, a, r, err);
	if (!a->ok)
		return wq__eventf(s, r->task_id, a->now, 0, "source-ack-failed", a->instance, err,
				  "ssist", "source", r->source, WQ_INTAKE_SOURCE_MAX, "key", r->key,
				  WQ_INTAKE_KEY_MAX, "attempt", (int64_t)a->ack_attempts, "error",
				  error, WQ_DETAIL_MAX, "retry_at", a->next_at);
	rc = wq__eventf(s, r->task_id, a->now, 0, "source-acknowledged", a->instance, err,
			"sssi", "source", r->source, WQ_INTAKE_SOURCE_MAX, "key", r->key,
			WQ_INTAKE_KEY_MAX, "outcome", r->outcome, WQ_REASON_MAX, "attempt",
			(int64_t)a->ack_attempts);
	if (rc || strcmp(r->state, "abandoned") != 0)
		return rc;
	/* The give-up's second channel (the worker's error line is the first): one
	 * notification per record, whatever repeats. */
	snprintf(key, sizeof(key), "intake:%" PRId64, a->id);
	rc = wq__run(s, SQL_INBOX_INSERT,
		     WQ__ARGS(WQ__AT(r->operators), WQ__AT(key), WQ__AI(0),
			      WQ__AT("abandoned-intake"), WQ__AI(a->now), WQ__AI(r->task_id)),
		     NULL, "write the operators' inbox", err);
	if (!rc)
		rc = wq__eventf(s, r->task_id, a->now, 0, "intake-abandoned", a->instance, err,
				"ssis", "source", r->source, WQ_INTAKE_SOURCE_MAX, "key", r->key,
				WQ_INTAKE_KEY_MAX, "handouts", (int64_t)r->handouts, "reported_to",
				r->operators, WQ_NAME_MAX);
	return rc;
}

wq_rc wq__op_intake_ack_finish(struct wq__store *s, const struct wq__intake_ack *a,
			       struct wq__intake_acked *out, wq_error *err)
{
	char *error = NULL;
	wq_rc rc;

	if (!a->instance || !*a->instance)
		return wq__err(err, WQ_EINVAL, "acknowledgement: no instance given");
	memset(out, 0, sizeof(*out));
	/* The source's error text is free text: made valid UTF-8 here, once. */
	if (!(error = wq__utf8_clean(wq__nz(a->error), strlen(wq__nz(a->error)))))
		return wq__err(err, WQ_ENOMEM, "out of memory (acknowledgement)");
	rc = wq__begin(s, 1, err);
	if (!rc) {
		s->retry_safe = 1; /* a retry recognises its own recorded answer */
		rc = wq__end(s, ack_finish_body(s, a, error, out, err), err);
	}
	free(error);
	return rc;
}

wq_rc wq__op_intake_list(struct wq__store *s, const char *source, const char *state,
			 const char *key, wq_intake **out, size_t *n, wq_error *err)
{
	return wq__select(s, SQL_INTAKE_LIST,
			  WQ__ARGS(WQ__AT(wq__nz(source)), WQ__AT(wq__nz(state)),
				   WQ__AT(wq__nz(key))),
			  WQ__COLS(intake_cols), sizeof(wq_intake), out, n,
			  "listing intake records", err);
}

wq_rc wq__op_intake_acks_waiting(struct wq__store *s, const char *source, int64_t *count,
				 wq_error *err)
{
	*count = 0;
	return wq__rows(s, SQL_INTAKE_ACKS_WAITING, WQ__ARGS(WQ__AT(wq__nz(source))),
			wq__read_i64, count, NULL, "count acknowledgements", err);
}
