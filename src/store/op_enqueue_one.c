/*
 * op_enqueue_one.c — a new task in one round trip (issue 11, wave 4; PostgreSQL).
 *
 * The transactional enqueue costs five round trips on PostgreSQL (BEGIN, the inserts,
 * NOTIFY, COMMIT). A task that is new — no key, or a key not taken yet — needs no
 * decision between them: one autocommitted statement (SQL_ENQ_ONE*, data-modifying CTEs)
 * inserts the operation row, the task and its `accepted` event and sends the NOTIFY, and
 * answers the task's id. Every decision that needs a read first stays on the one path
 * written in op_task.c: a taken key (replay or conflict: this statement inserted
 * nothing), a tenant limit (a lock and a count), a turn lock key.
 *
 * Durability is unchanged: the statement is its own transaction, answered after its
 * commit. A lost answer is COMMIT_UNKNOWN from the driver and worded for this enqueue's
 * operation (wq__sql_fail with s->lost_op), as a lost COMMIT is.
 */
#include "op.h"

#include <stdlib.h>

/* The store's answer: the new task's id, when a row came back. */
struct one_row {
	int64_t id;
};
static const struct wq__col one_cols[] = {WQ__COL('i', struct one_row, id)};

/* The statement, within a transaction or as its own (then a lost answer is worded for
 * this enqueue's operation). */
static wq_rc one(struct wq__store *s, const struct wq__new_task *t, const char *payload,
		 struct wq__enqueued_row *row, int alone, wq_error *err)
{
	struct one_row r = {0};
	size_t found = 0;
	char buf[WQ__DETAIL_MAX + 1], *owned;
	const char *detail;
	wq_rc rc;

	if (!(s->drv->caps & WQ__SQL_CAP_AUTOCOMMIT) || t->max_active > 0 || t->lock)
		return WQ__ENQUEUE_ONE_NO;
	if (!(detail = wq__accepted_text(t, buf, sizeof buf, &owned, err)))
		return WQ_ENOMEM;
	if (alone) {
		s->lost_op = t->key ? t->key : t->operation;
		s->lost_op_keyed = t->key != NULL;
		s->commit_lost = 0;
	}
	rc = wq__select1(s, t->key ? SQL_ENQ_ONE_KEYED : SQL_ENQ_ONE,
			 WQ__ARGS(WQ__AT(t->kind), WQ__AT(t->tenant), WQ__AT(t->scope),
				  WQ__AT(t->operation), WQ__AT(payload), WQ__AI(t->payload_len),
				  WQ__AT(t->payload_sha256), WQ__AI(t->payload_version),
				  WQ__AI(t->priority), WQ__AI(t->due_at), WQ__AI(t->order_at),
				  WQ__AI(t->now), WQ__AI(t->max_attempts), WQ__AI(t->key != NULL),
				  WQ__AT(t->fingerprint),
				  t->notify ? WQ__AT(t->notify) : WQ__ANULL, WQ__AT(detail)),
			 WQ__COLS(one_cols), &r, &found, "insert task", err);
	free(owned);
	if (alone) {
		/* The tests' lost answer (as wq__end's): committed for real, reported unknown. */
		if (!rc && found && wq__failpoint_hit("commit-lost"))
			rc = wq__sql_fail(s, WQ__SQL_COMMIT_UNKNOWN, "commit", err);
		s->commit_lost = rc && s->last_sqlerr == WQ__SQL_COMMIT_UNKNOWN;
		s->lost_op = NULL;
		s->lost_op_keyed = 0;
	}
	if (rc == WQ_ECONFLICT && !t->key) /* the generated id met another task's */
		return wq__err(err, WQ_ECONFLICT, "operation %s already exists", t->operation);
	if (rc)
		return rc;
	if (!found) /* the key is taken: nothing written; op_task.c decides */
		return WQ__ENQUEUE_ONE_NO;
	row->id = r.id;
	row->state = WQ_STATE_PENDING;
	wq__strlcpy(row->fingerprint, t->fingerprint, sizeof(row->fingerprint));
	return WQ_OK;
}

wq_rc wq__enqueue_one(struct wq__store *s, const struct wq__new_task *t, const char *payload,
		      struct wq__enqueued_row *row, wq_error *err)
{
	return one(s, t, payload, row, 1, err);
}

wq_rc wq__enqueue_one_in(struct wq__store *s, const struct wq__new_task *t,
			 const char *payload, struct wq__enqueued_row *row, wq_error *err)
{
	return one(s, t, payload, row, 0, err);
}
