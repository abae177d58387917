/*
 * op_enqueue_group.c — group commit of concurrent enqueues (issue 11, wave 4): the
 * store side. The core (src/enqueue_group.c) gathers the wq_enqueue calls that arrive on
 * one handle while another commit is in flight and hands them here as one group.
 *
 * Invariant: every item is answered exactly as wq__op_enqueue would answer it alone.
 * A group without limits or lock keys is written as a batch is (wave 5: op_enqueue_rows.c,
 * a few multi-row statements, no savepoint); when that cannot finish (a key taken
 * meanwhile, a statement failing) it is rolled back and the group goes the way below.
 * On PostgreSQL a new task is one statement (op_enqueue_one.c) inside the shared
 * transaction. Otherwise each item runs inside its own savepoint:
 *   - accepted or replayed: the savepoint is released, the rows stay;
 *   - an operation conflict: the `conflict` event stays (as enqueue() commits it), the
 *     item's answer is WQ_ECONFLICT;
 *   - any other failure of the item (a limit, a unique clash, a bad text): rolled back
 *     to its savepoint, nothing of it stays, the others go on.
 * When the transaction breaks before its commit (begin, a savepoint, a failed statement
 * on PostgreSQL, which aborts the transaction), nothing of the group is written and
 * every item runs again alone, in its own transaction. When the commit fails, every
 * written item carries that failure (a lost answer: in its own words). No item is
 * answered before the commit holding it returned (durable: one fsync for the group).
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

/* The whole group failed with rc / *why: every item still counted as written gets it. */
static void fail_written(wq_rc *item_rc, wq_error *item_errs, const int *written, size_t n,
			 wq_rc rc, const wq_error *why)
{
	for (size_t i = 0; i < n; i++) {
		if (!written[i])
			continue;
		item_rc[i] = rc;
		item_errs[i] = *why;
	}
}

/* Item i inside the open transaction. *written: its rows stay if the group commits.
 * Returns non-OK only when the transaction is no longer usable (*err says why). */
static wq_rc group_item(struct wq__store *s, const struct wq__new_task *t,
			struct wq__enqueued_row *row, wq_rc *item_rc, wq_error *item_err,
			int *written, wq_error *err)
{
	struct wq__new_task nt = *t;
	char *payload;
	wq_rc rc;

	if (!(payload = strndup(t->payload ? t->payload : "", t->payload ? t->payload_len : 0))) {
		*item_rc = wq__err(item_err, WQ_ENOMEM, "out of memory (payload of %zu bytes)",
				   t->payload_len);
		return WQ_OK; /* this item only */
	}
	/* PostgreSQL: a new task in one statement, no savepoint (one round trip); a taken
	 * key, a limit or a lock key go the savepoint's way below. */
	rc = wq__enqueue_one_in(s, t, payload, row, item_err);
	if (rc != WQ__ENQUEUE_ONE_NO) {
		free(payload);
		*written = rc == WQ_OK;
		*item_rc = rc;
		if (rc) /* the transaction is aborted: the group is run again item by item */
			*err = *item_err;
		return rc;
	}
	rc = wq__run(s, SQL_ENQ_SAVEPOINT, WQ__NOARGS, NULL, "savepoint", err);
	if (rc) {
		free(payload);
		return rc;
	}
	s->keep = 0;
	nt.payload = payload; /* NUL-terminated, as wq__enqueue_in wants */
	*item_rc = wq__enqueue_in(s, &nt, row, item_err);
	free(payload);
	/* A conflict keeps its event (s->keep); any other failure leaves nothing. */
	*written = *item_rc == WQ_OK || s->keep;
	s->keep = 0;
	if (!*written) {
		rc = wq__run(s, SQL_ENQ_ROLLBACK_TO, WQ__NOARGS, NULL, "roll back an item", err);
		if (rc) /* the transaction went with it (connection lost, I/O error) */
			return rc;
	}
	return wq__run(s, SQL_ENQ_RELEASE, WQ__NOARGS, NULL, "release savepoint", err);
}

/* A lost COMMIT answer: each written item is told in its own words (its key, or its
 * generated operation id) how to find out, as a lone enqueue would be. */
static void lost_answers(struct wq__store *s, const struct wq__new_task *const *t,
			 wq_rc *item_rc, wq_error *item_errs, const int *written, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!written[i])
			continue;
		s->lost_op = t[i]->key ? t[i]->key : t[i]->operation;
		s->lost_op_keyed = t[i]->key != NULL;
		item_rc[i] = wq__sql_fail(s, WQ__SQL_COMMIT_UNKNOWN, "commit", &item_errs[i]);
	}
	s->lost_op = NULL;
	s->lost_op_keyed = 0;
}

/* Commits the group's open transaction; when the commit fails, every written item is
 * told so (a lost answer in its own words). */
static wq_rc commit_answer(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
			   wq_rc *item_rc, wq_error *item_errs, const int *written, wq_error *err)
{
	wq_rc rc;

	/* a lone enqueue's wording for a lost answer, until lost_answers below */
	s->lost_op = n ? (t[0]->key ? t[0]->key : t[0]->operation) : NULL;
	s->lost_op_keyed = n && t[0]->key != NULL;
	rc = wq__end(s, WQ_OK, err);
	if (rc && s->commit_lost)
		lost_answers(s, t, item_rc, item_errs, written, n);
	else if (rc)
		fail_written(item_rc, item_errs, written, n, rc, err);
	return rc;
}

/* The group's transaction broke before its commit (nothing of it is written): each item
 * not answered yet runs alone, as wq_enqueue without a group would. */
static void each_alone(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
		       struct wq__enqueued_row *rows, wq_rc *item_rc, wq_error *item_errs,
		       const int *checked)
{
	for (size_t i = 0; i < n; i++) {
		if (!checked[i])
			continue;
		memset(&rows[i], 0, sizeof rows[i]);
		item_errs[i] = (wq_error){0, ""};
		item_rc[i] = wq__op_enqueue(s, t[i], &rows[i], &item_errs[i]);
	}
}

/* wave5 enq: the checked items in a few multi-row statements (op_enqueue_rows.c), one
 * transaction, no savepoint; the answers scattered back to their slots. Anything short
 * of the commit going wrong (a key taken meanwhile, a statement failing) rolls back and
 * answers WQ__ENQUEUE_ROWS_NO: the savepoint path below runs the group again. */
static wq_rc group_rows(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
			struct wq__enqueued_row *rows, wq_rc *item_rc, wq_error *item_errs,
			const int *checked, int *written, wq_error *err)
{
	const struct wq__new_task **sub = calloc(n, sizeof *sub);
	struct wq__enqueued_row *srows = calloc(n, sizeof *srows);
	wq_rc *src = calloc(n, sizeof *src), rc;
	wq_error *serr = calloc(n, sizeof *serr), ignored;
	size_t i, m = 0;
	int made = 0;

	rc = sub && srows && src && serr ? WQ_OK : WQ__ENQUEUE_ROWS_NO;
	for (i = 0; !rc && i < n; i++)
		if (checked[i])
			sub[m++] = t[i];
	if (!rc && (m == 0 || wq__begin(s, 1, err)))
		rc = WQ__ENQUEUE_ROWS_NO;
	if (rc)
		goto out;
	rc = wq__enqueue_rows(s, sub, m, srows, src, serr, &made, err);
	if (!rc && (made & WQ__ROWS_MADE_NEW)) /* as each new task's enqueue_body does */
		rc = wq__notify(s, err);
	if (rc) {
		wq__end(s, WQ_EBUSY, &ignored); /* rolled back: nothing of it stays */
		rc = WQ__ENQUEUE_ROWS_NO;
		goto out;
	}
	for (i = 0, m = 0; i < n; i++) {
		if (!checked[i])
			continue;
		rows[i] = srows[m];
		item_rc[i] = src[m];
		item_errs[i] = serr[m++];
		/* a conflict keeps its event, as enqueue() commits it */
		written[i] = item_rc[i] == WQ_OK || item_rc[i] == WQ_ECONFLICT;
	}
	rc = commit_answer(s, t, n, item_rc, item_errs, written, err);
out:
	free(sub);
	free(srows);
	free(src);
	free(serr);
	return rc;
}

wq_rc wq__op_enqueue_group(struct wq__store *s, const struct wq__new_task *const *t,
			   size_t n, struct wq__enqueued_row *rows, wq_rc *item_rc,
			   wq_error *item_errs, wq_error *err)
{
	int *written = calloc(n ? 2 * n : 1, sizeof *written), *checked;
	size_t i;
	wq_rc rc;

	if (!written) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (a group of %zu enqueues)", n);
		for (i = 0; i < n; i++) {
			item_rc[i] = rc;
			item_errs[i] = *err;
		}
		return rc;
	}
	checked = written + n; /* passed the store's checks: to be written */
	for (i = 0; i < n; i++) {
		memset(&rows[i], 0, sizeof rows[i]);
		item_errs[i] = (wq_error){0, ""};
		item_rc[i] = wq__enqueue_store_check(t[i], &item_errs[i]);
		checked[i] = item_rc[i] == WQ_OK;
	}
	if (wq__enqueue_rows_fit(t, n) &&
	    (rc = group_rows(s, t, n, rows, item_rc, item_errs, checked, written, err)) !=
		    WQ__ENQUEUE_ROWS_NO)
		goto out;
	if ((rc = wq__begin(s, 1, err))) {
		each_alone(s, t, n, rows, item_rc, item_errs, checked);
		goto out;
	}
	for (i = 0; i < n && !rc; i++)
		if (checked[i])
			rc = group_item(s, t[i], &rows[i], &item_rc[i], &item_errs[i], &written[i],
					err);
	if (rc) {
		wq_error why = *err;

		wq__end(s, rc, &why); /* rolled back: nothing of the group stays */
		each_alone(s, t, n, rows, item_rc, item_errs, checked);
		goto out;
	}
	rc = commit_answer(s, t, n, item_rc, item_errs, written, err);
out:
	free(written);
	return rc;
}
