/* enqueue_many.c — wq_enqueue_many (issue 11): many enqueues, one transaction.
 *
 * Every item is validated and prepared exactly as wq_enqueue does it (task.c) before the
 * store is touched, so an invalid item changes nothing; the store then runs the items in
 * one transaction (op_task.c; wave 5: a few multi-row statements, op_enqueue_rows.c) and
 * reports operation conflicts per item. */
#include "internal.h"
#include "enqueue.h"

#include <stdlib.h>
#include <string.h>

static void preps_free(struct wq__enqueue_prep *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		free(p[i].notify);
	free(p);
}

/* Prepares every item; on failure *bad is the index of the item that failed. */
static wq_rc prepare_all(const wq_enqueue_opts *items, size_t n, struct wq__enqueue_prep *p,
			 const struct wq__new_task **t, size_t *bad, wq_error *err)
{
	for (size_t i = 0; i < n; i++) {
		wq_error e = {0, ""};
		wq_rc rc = wq__enqueue_prepare(&items[i], &p[i], &e);

		if (rc != WQ_OK) {
			*bad = i;
			return wq__err(err, rc, "item %zu: %s", i, e.message);
		}
		t[i] = &p[i].t;
	}
	return WQ_OK;
}

/* The batch's answer: WQ_ECONFLICT naming the first conflict when there is one. */
static wq_rc summarise(const wq_rc *item_rc, size_t n, const wq_error *item_errs,
		       wq_error *err)
{
	size_t conflicts = 0, first = 0;

	for (size_t i = 0; i < n; i++)
		if (item_rc[i] != WQ_OK && conflicts++ == 0)
			first = i;
	if (!conflicts)
		return WQ_OK;
	return wq__err(err, WQ_ECONFLICT,
		       "%zu of %zu items conflicted (the others are enqueued); item %zu: %s",
		       conflicts, n, first, item_errs ? item_errs[first].message : "conflict");
}

wq_rc wq_enqueue_many(wq_db *db, const wq_enqueue_opts *items, size_t n, wq_enqueued *out,
		      wq_error *item_errs, wq_error *err)
{
	struct wq__enqueue_prep *p = NULL;
	const struct wq__new_task **t = NULL;
	struct wq__enqueued_row *rows = NULL;
	wq_rc *item_rc = NULL, rc;
	wq_error first_err = {0, ""};
	size_t bad = 0, prepared = 0; /* preps to free: none, all, or up to the failed one */

	if (!db || (!items && n) || (!out && n))
		return wq__err(err, WQ_EINVAL, "wq_enqueue_many needs a store, items and out");
	if (n > WQ_ENQUEUE_MANY_MAX)
		return wq__err(err, WQ_EINVAL, "a batch of %zu items; at most %d are allowed", n,
			       WQ_ENQUEUE_MANY_MAX);
	if (n == 0)
		return WQ_OK;
	/* not calloc: wq__enqueue_prepare clears each prep itself (zeroing ~0.5 KiB a task
	 * twice cost ~480 instructions a task), and only prepared ones are freed */
	p = malloc(n * sizeof *p);
	t = calloc(n, sizeof *t);
	rows = calloc(n, sizeof *rows);
	item_rc = calloc(n, sizeof *item_rc);
	if (!p || !t || !rows || !item_rc) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (a batch of %zu items)", n);
		goto out;
	}
	rc = prepare_all(items, n, p, t, &bad, &first_err);
	prepared = rc == WQ_OK ? n : bad + 1;
	if (rc != WQ_OK) {
		if (item_errs)
			item_errs[bad] = first_err;
		if (err)
			*err = first_err;
		goto out;
	}
	rc = WQ__STORE(db, enqueue_many, t, n, rows, item_rc, item_errs, err);
	if (rc != WQ_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		if (item_errs && item_rc[i] == WQ_OK)
			item_errs[i].code = WQ_OK, item_errs[i].message[0] = '\0';
		if (item_rc[i] == WQ_OK)
			wq__enqueued_fill(&out[i], t[i], &rows[i]);
		else
			wq__strlcpy(out[i].operation, t[i]->operation, sizeof out[i].operation);
	}
	rc = summarise(item_rc, n, item_errs, err);
out:
	preps_free(p, prepared);
	free(t);
	free(rows);
	free(item_rc);
	return rc;
}
