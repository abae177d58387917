/*
 * op_enqueue_rows.c — many enqueues in a few multi-row statements (issue 11, wave 5): a
 * batch (enqueue_many) or a group of concurrent enqueues (enqueue_group) writes its
 * operation rows, task rows and events with a few statements per kind of row instead of
 * three to five statements per task: ONE bound parameter holding a JSON array of rows
 * (as op_rows.c does for claims and outcomes), or on SQLite, where taking JSON apart
 * costs more than binding, the task rows and `accepted` events bound 32, 4 and 1 rows to
 * a statement.
 *
 * What each item means is decided in C exactly as enqueue_body (op_task.c) decides it
 * alone, item after item in the order given:
 *   - no key, or a key neither stored nor earlier in the batch: a new task (`accepted`);
 *   - a key the store has: a replay or a conflict against the stored fingerprint
 *     (wq__enqueue_existing, the same function as a lone enqueue's: same event, same
 *     message);
 *   - a key an earlier item of the batch takes: a replay or a conflict against that
 *     item's new task, as the second enqueue of one transaction would find it.
 * The rows are the ones a lone enqueue writes: operation row (keyed), task row, one event
 * per item, in item order (task ids and event ids ascend with the items).
 *
 * Invariants: all the stored keys of the batch are read in one statement inside the
 * write transaction; new task ids are drawn before any row is written (SQLite: above
 * every id the table ever had, as D_NEXT_ID; PostgreSQL: from the identity sequence),
 * so an operation row names its task from the start. When a key was taken by another
 * transaction between the read and the insert (PostgreSQL: ON CONFLICT waited for it) or
 * a generated operation id meets another task's, this path answers WQ__ENQUEUE_ROWS_NO:
 * the caller rolls back and runs the item-by-item path, which words every case.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A key of the batch (its first item) and what the store holds under it. */
struct key {
	size_t item;
	int found;
	char stored[WQ_SHA256_HEX];
	int64_t task_id;
	wq_state state;
};

/* A keyed item, for sorting by identity (then by position: the first comes first). */
struct keyed {
	const struct wq__new_task *t;
	size_t i;
};

static int identity_cmp(const struct wq__new_task *a, const struct wq__new_task *b)
{
	int c;

	if ((c = strcmp(wq__nz(a->tenant), wq__nz(b->tenant))) ||
	    (c = strcmp(wq__nz(a->scope), wq__nz(b->scope))) || (c = strcmp(a->kind, b->kind)))
		return c;
	return strcmp(a->key, b->key);
}

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	int c = identity_cmp(a->t, b->t);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* ---- the accepted detail ---- */

#define ACCEPTED_MAX (WQ__DETAIL_MAX + 1) /* the fast path's room (wq__accepted_text) */

/* ---- the statements ---- */

static wq_rc key_row(const struct wq__row *r, void *ctx)
{
	struct key *k = (struct key *)ctx + wq__i64(r, 0);

	k->found = 1;
	wq__str(r, 1, k->stored, sizeof k->stored);
	k->task_id = wq__i64(r, 2);
	k->state = wq__state_parse(wq__text(r, 3, NULL));
	return WQ_OK;
}

/* The stored operation rows of the nk keys (their first items' identities). */
static wq_rc keys_read(struct wq__store *s, const struct wq__new_task *const *t,
		       struct key *keys, size_t nk, wq_error *err)
{
	struct wq__rowbuf b = {0};
	const char *text;
	wq_rc rc;

	for (size_t k = 0; k < nk; k++) {
		const struct wq__new_task *it = t[keys[k].item];

		wq__rb_row(&b, "ssss", wq__nz(it->tenant), wq__nz(it->scope), it->kind, it->key);
	}
	if (!(text = wq__rb_text(&b)))
		rc = wq__err(err, WQ_ENOMEM, "out of memory (%zu operation keys)", nk);
	else
		rc = wq__rows(s, SQL_ENQ_KEYS_GET, WQ__ARGS(WQ__AT(text)), key_row, keys, NULL,
			      "read operations", err);
	free(b.p);
	return rc;
}

struct id_row {
	int64_t id;
};
static const struct wq__col id_cols[] = {WQ__COL('i', struct id_row, id)};

static int id_cmp(const void *pa, const void *pb)
{
	const struct id_row *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* k new task ids, ascending, into *ids (malloc'd). On SQLite the ids above every id the
 * table ever had are free inside this write transaction (it holds the write lock), so
 * they are counted on from one read of that base; the recursive CTE gave the same ids
 * at ~5,000 instructions a task. */
static wq_rc ids_draw(struct wq__store *s, size_t k, struct id_row **ids, wq_error *err)
{
	size_t got = 0;
	wq_rc rc;

	*ids = NULL;
	if (wq__sql_text(s->d, SQL_ENQ_TASK_BASE)) { /* SQLite: base + 1 .. base + k */
		int64_t base = 0;

		rc = wq__select1(s, SQL_ENQ_TASK_BASE, WQ__NOARGS, WQ__COLS(id_cols), &base, NULL,
				 "read task ids", err);
		if (!rc && !(*ids = malloc(k * sizeof **ids)))
			rc = wq__err(err, WQ_ENOMEM, "out of memory (%zu task ids)", k);
		for (size_t j = 0; !rc && j < k; j++)
			(*ids)[j].id = base + (int64_t)j + 1;
		return rc;
	}
	rc = wq__select(s, SQL_ENQ_TASK_IDS, WQ__ARGS(WQ__AI(k)), WQ__COLS(id_cols),
			sizeof **ids, ids, &got, "draw task ids", err);
	if (!rc && got != k)
		rc = wq__err(err, WQ_ESTORE, "database %s gave %zu of %zu task ids",
			     s->drv->label(s->c), got, k);
	if (!rc)
		qsort(*ids, k, sizeof **ids, id_cmp);
	return rc;
}

/* The operation rows of the new keyed items. */
static wq_rc ops_write(struct wq__store *s, struct wq__rowbuf *ops, size_t nops,
		       wq_error *err)
{
	const char *text;
	int64_t changes = 0;
	wq_rc rc;

	if (!nops)
		return WQ_OK;
	if (!(text = wq__rb_text(ops)))
		return wq__err(err, WQ_ENOMEM, "out of memory (operation rows)");
	rc = wq__run(s, SQL_ENQ_OPS_INSERT, WQ__ARGS(WQ__AT(text)), &changes,
		     "insert operations", err);
	if (!rc && (size_t)changes != nops) /* taken meanwhile: decide item by item */
		return WQ__ENQUEUE_ROWS_NO;
	return rc;
}

/* SQLite: rows as bound parameters, 32, then 4, then 1 to a statement (in-process,
 * binding costs less than taking JSON apart: ~2.5 against ~6 µs a task row). */
#define CHUNK_MAX 32
#define TASK_ARGS 18 /* per row of SQL_ENQ_TASKS_VALUES* */
static const struct wq__rows_stmt task_chunks[] = {
	{SQL_ENQ_TASKS_VALUES, 32}, {SQL_ENQ_TASKS_VALUES4, 4}, {SQL_ENQ_TASKS_VALUES1, 1}};

static void task_args(struct wq__arg *a, const struct wq__new_task *t, int64_t id)
{
	a[0] = WQ__AI(id);
	a[1] = WQ__AT(t->kind);
	a[2] = WQ__AT(wq__nz(t->tenant));
	a[3] = WQ__AT(wq__nz(t->scope));
	a[4] = WQ__AT(t->operation);
	/* the payload by its length (SQLite's driver binds len bytes; no copy) */
	a[5] = (struct wq__arg){WQ__ARG_TEXT, 0, t->payload ? t->payload : "",
				t->payload ? t->payload_len : 0};
	a[6] = WQ__AI(t->payload_len);
	a[7] = WQ__AT(t->payload_sha256);
	a[8] = WQ__AI(t->payload_version);
	a[9] = WQ__AI(t->priority);
	a[10] = WQ__AI(t->due_at);
	a[11] = WQ__AI(t->order_at);
	a[12] = WQ__AI(t->now);
	a[13] = WQ__AI(t->now);
	a[14] = WQ__AI(t->max_attempts);
	a[15] = WQ__AI(t->key != NULL);
	a[16] = WQ__AT(t->fingerprint);
	a[17] = t->notify ? WQ__AT(t->notify) : WQ__ANULL;
}

struct task_rows {
	const struct wq__new_task *const *t;
	const size_t *fresh;
	const struct id_row *ids;
};

/* New task `row` of a struct task_rows as its row's arguments. */
static void task_row_args(struct wq__arg *a, size_t row, const void *ctx)
{
	const struct task_rows *c = ctx;

	task_args(a, c->t[c->fresh[row]], c->ids[row].id);
}

/* The task row of t as JSON (SQL_ENQ_TASKS_INSERT). */
static wq_rc task_json(struct wq__rowbuf *b, const struct wq__new_task *t, int64_t id,
		       wq_error *err)
{
	char *payload = strndup(t->payload ? t->payload : "", t->payload ? t->payload_len : 0);

	if (!payload)
		return wq__err(err, WQ_ENOMEM, "out of memory (payload of %zu bytes)",
			       t->payload_len);
	/* notify "" stands for NULL (a channel list is never empty text) */
	wq__rb_row(b, "isssssisiiiiiiiss", id, t->kind, wq__nz(t->tenant), wq__nz(t->scope),
		   t->operation, payload, (int64_t)t->payload_len, t->payload_sha256,
		   (int64_t)t->payload_version, (int64_t)t->priority, t->due_at, t->order_at,
		   t->now, (int64_t)t->max_attempts, (int64_t)(t->key != NULL), t->fingerprint,
		   wq__nz(t->notify));
	free(payload);
	return WQ_OK;
}

/* The task rows of the k new items (fresh[j]: item index, ids[j]: its id), in order. */
static wq_rc tasks_write(struct wq__store *s, const struct wq__new_task *const *t,
			 const size_t *fresh, const struct id_row *ids, size_t k, wq_error *err)
{
	struct wq__rowbuf b = {0};
	const char *text;
	size_t j = 0;
	wq_rc rc = WQ_OK;

	if (wq__sql_text(s->d, SQL_ENQ_TASKS_VALUES)) {
		struct task_rows c = {t, fresh, ids};

		rc = wq__run_rows(s, task_chunks, k, TASK_ARGS, task_row_args, &c, NULL,
				  "insert tasks", err);
		j = k;
	}
	for (; !rc && j < k; j++) /* PostgreSQL: one statement of JSON rows */
		rc = task_json(&b, t[fresh[j]], ids[j].id, err);
	if (!rc && b.rows) {
		if (!(text = wq__rb_text(&b)))
			rc = wq__err(err, WQ_ENOMEM, "out of memory (task rows)");
		else
			rc = wq__run(s, SQL_ENQ_TASKS_INSERT, WQ__ARGS(WQ__AT(text)), NULL,
				     "insert tasks", err);
	}
	free(b.p);
	/* a generated operation id met another task's: the item-by-item path names it */
	return rc == WQ_ECONFLICT ? WQ__ENQUEUE_ROWS_NO : rc;
}

/* ---- the batch ---- */

/* What the batch is made of: per item its key (index into keys, -1: none) and whether
 * it is a new task. */
struct plan {
	struct key *keys;
	size_t nk;
	long *key_of;
	char *fresh;
	size_t nfresh;
};

static void plan_free(struct plan *p)
{
	free(p->keys);
	free(p->key_of);
	free(p->fresh);
}

/* The distinct keys of the batch (sorted by identity, each with its first item). */
static wq_rc plan_keys(const struct wq__new_task *const *t, size_t n, struct plan *p,
		       wq_error *err)
{
	struct keyed *kd = calloc(n ? n : 1, sizeof *kd);
	size_t m = 0;

	p->keys = calloc(n ? n : 1, sizeof *p->keys);
	p->key_of = calloc(n ? n : 1, sizeof *p->key_of);
	p->fresh = calloc(n ? n : 1, 1);
	if (!kd || !p->keys || !p->key_of || !p->fresh) {
		free(kd);
		return wq__err(err, WQ_ENOMEM, "out of memory (a batch of %zu enqueues)", n);
	}
	for (size_t i = 0; i < n; i++) {
		p->key_of[i] = -1;
		if (t[i]->key)
			kd[m++] = (struct keyed){t[i], i};
	}
	qsort(kd, m, sizeof *kd, keyed_cmp);
	for (size_t j = 0; j < m; j++) {
		if (j == 0 || identity_cmp(kd[j - 1].t, kd[j].t))
			p->keys[p->nk++].item = kd[j].i;
		p->key_of[kd[j].i] = (long)p->nk - 1;
	}
	free(kd);
	return WQ_OK;
}

/* Which items are new tasks: no key, or the first item of a key the store lacks. */
static void plan_fresh(struct plan *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		long k = p->key_of[i];

		p->fresh[i] = k < 0 || (!p->keys[k].found && p->keys[k].item == i);
		p->nfresh += (size_t)p->fresh[i];
	}
}

/* Item i, not new: a replay or a conflict against the store's row or an earlier item's
 * new task. A conflict is the item's answer; anything else fails the batch. */
static wq_rc item_seen(struct wq__store *s, const struct wq__new_task *const *t, size_t i,
		       const struct plan *p, struct wq__enqueued_row *rows, wq_rc *item_rc,
		       wq_error *item_errs, wq_error *err)
{
	const struct key *k = &p->keys[p->key_of[i]];
	wq_error e = {0, ""};
	wq_rc rc;

	if (k->found)
		rc = wq__enqueue_existing(s, t[i], k->stored, k->task_id, k->state, &rows[i], &e);
	else
		rc = wq__enqueue_existing(s, t[i], t[k->item]->fingerprint, rows[k->item].id,
					  WQ_STATE_PENDING, &rows[i], &e);
	s->keep = 0; /* the caller's commit decides */
	if (rc != WQ_OK && rc != WQ_ECONFLICT) {
		*err = e;
		return rc;
	}
	item_rc[i] = rc;
	if (item_errs)
		item_errs[i] = e;
	return WQ_OK;
}

/* The `accepted` event of new task id, buffered (s->rows_on: written before COMMIT). */
static wq_rc accepted_buffer(struct wq__store *s, const struct wq__new_task *t, int64_t id,
			     wq_error *err)
{
	char buf[ACCEPTED_MAX], *owned;
	const char *detail;

	if (!(detail = wq__accepted_text(t, buf, sizeof buf, &owned, err)))
		return WQ_ENOMEM;
	wq__rows_event(s, id, t->now, 0, "accepted", "", detail);
	free(owned);
	return WQ_OK;
}

/* SQLite, a batch of new tasks only: their `accepted` events as bound parameters
 * (SQL_ENQ_ACCEPTED_VALUES*, 32, 4, 1 rows of EVENT_ARGS), ids above every id events ever
 * had (SQL_ENQ_EVENT_BASE) in item order, as lone enqueues one after another give. */
#define EVENT_ARGS 4
static const struct wq__rows_stmt event_chunks[] = {{SQL_ENQ_ACCEPTED_VALUES, 32},
						    {SQL_ENQ_ACCEPTED_VALUES4, 4},
						    {SQL_ENQ_ACCEPTED_VALUES1, 1}};

/* Events j .. j + m - 1 in one statement (buf: room for their detail texts). */
static wq_rc accepted_chunk(struct wq__store *s, const struct wq__rows_stmt *c,
			    const struct wq__new_task *const *t, const struct id_row *ids,
			    size_t j, int64_t base, char (*buf)[ACCEPTED_MAX], wq_error *err)
{
	struct wq__arg a[CHUNK_MAX * EVENT_ARGS];
	char *owned[CHUNK_MAX] = {0};
	size_t r;
	wq_rc rc = WQ_OK;

	for (r = 0; !rc && r < c->rows; r++) {
		const struct wq__new_task *it = t[j + r];
		const char *d = wq__accepted_text(it, buf[r], sizeof buf[r], &owned[r], err);

		a[r * EVENT_ARGS] = WQ__AI(base + (int64_t)(j + r) + 1);
		a[r * EVENT_ARGS + 1] = WQ__AI(ids[j + r].id);
		a[r * EVENT_ARGS + 2] = WQ__AI(it->now);
		a[r * EVENT_ARGS + 3] = WQ__AT(d);
		rc = d ? WQ_OK : WQ_ENOMEM;
	}
	if (!rc)
		rc = wq__run(s, c->id, a, (int)(c->rows * EVENT_ARGS), NULL, "append events", err);
	for (r = 0; r < c->rows; r++)
		free(owned[r]);
	return rc;
}

static wq_rc accepted_direct(struct wq__store *s, const struct wq__new_task *const *t,
			     const struct id_row *ids, size_t k, wq_error *err)
{
	char(*buf)[ACCEPTED_MAX] = malloc(CHUNK_MAX * sizeof *buf);
	int64_t base = 0;
	size_t j = 0;
	wq_rc rc;

	if (!buf)
		return wq__err(err, WQ_ENOMEM, "out of memory (events)");
	rc = wq__select1(s, SQL_ENQ_EVENT_BASE, WQ__NOARGS, WQ__COLS(id_cols), &base, NULL,
			 "read event ids", err);
	for (size_t c = 0; c < WQ__ARRAY_LEN(event_chunks); c++)
		for (; !rc && k - j >= event_chunks[c].rows; j += event_chunks[c].rows)
			rc = accepted_chunk(s, &event_chunks[c], t, ids, j, base, buf, err);
	free(buf);
	return rc;
}

/* Item i, new: its operation row (keyed), its answer, its `accepted` event unless the
 * caller writes them all (direct); the task row is written by tasks_write. */
static wq_rc item_new(struct wq__store *s, const struct wq__new_task *t, int64_t id,
		      int direct, struct wq__rowbuf *ops, size_t *nops,
		      struct wq__enqueued_row *row, wq_error *err)
{
	wq_rc rc;

	if (t->key) {
		wq__rb_row(ops, "sssssiii", wq__nz(t->tenant), wq__nz(t->scope), t->kind, t->key,
			   t->fingerprint, (int64_t)t->payload_version, id, t->now);
		++*nops;
	}
	if (!direct && (rc = accepted_buffer(s, t, id, err)))
		return rc;
	row->id = id;
	row->state = WQ_STATE_PENDING;
	wq__strlcpy(row->fingerprint, t->fingerprint, sizeof row->fingerprint);
	return WQ_OK;
}

wq_rc wq__enqueue_rows(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
		       struct wq__enqueued_row *rows, wq_rc *item_rc, wq_error *item_errs,
		       int *made, wq_error *err)
{
	struct plan p = {0};
	struct wq__rowbuf ops = {0};
	struct id_row *ids = NULL;
	size_t i, k = 0, nops = 0, *fresh = NULL;
	int direct;
	wq_rc rc;

	*made = 0;
	/* events: one statement before COMMIT (wq__end), after the task rows they name */
	wq__rows_on_always(s);
	if ((rc = plan_keys(t, n, &p, err)))
		goto out;
	if (p.nk && (rc = keys_read(s, t, p.keys, p.nk, err)))
		goto out;
	plan_fresh(&p, n);
	if (p.nfresh && (rc = ids_draw(s, p.nfresh, &ids, err)))
		goto out;
	if (!(fresh = calloc(p.nfresh ? p.nfresh : 1, sizeof *fresh))) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (a batch of %zu enqueues)", n);
		goto out;
	}
	/* events of new tasks only: SQLite binds them (else one JSON statement for all) */
	direct = p.nfresh == n && wq__sql_text(s->d, SQL_ENQ_ACCEPTED_VALUES) != NULL;
	for (i = 0; i < n && !rc; i++) {
		memset(&rows[i], 0, sizeof rows[i]);
		if (!p.fresh[i]) {
			rc = item_seen(s, t, i, &p, rows, item_rc, item_errs, err);
			continue;
		}
		rc = item_new(s, t[i], ids[k].id, direct, &ops, &nops, &rows[i], err);
		fresh[k++] = i;
		item_rc[i] = WQ_OK;
		if (item_errs)
			item_errs[i] = (wq_error){0, ""};
		*made |= WQ__ROWS_MADE_NEW | (t[i]->due_at <= t[i]->now ? WQ__ROWS_MADE_DUE : 0);
	}
	if (!rc && (ops.bad || s->ev_rows.bad))
		rc = wq__err(err, WQ_ENOMEM, "out of memory (a batch of %zu enqueues)", n);
	if (!rc)
		rc = ops_write(s, &ops, nops, err);
	if (!rc)
		rc = tasks_write(s, t, fresh, ids, k, err);
	if (!rc && direct) /* k == n: the new tasks are the items, in order */
		rc = accepted_direct(s, t, ids, k, err);
out:
	free(fresh);
	free(ids);
	free(ops.p);
	plan_free(&p);
	return rc;
}

/* enqueue_many (op_task.c) through this path: one transaction, one wake-up when a new
 * task is due now. */
wq_rc wq__enqueue_many_rows(struct wq__store *s, const struct wq__new_task *const *t,
			    size_t n, struct wq__enqueued_row *rows, wq_rc *item_rc,
			    wq_error *item_errs, wq_error *err)
{
	int made = 0;
	wq_rc rc;

	if ((rc = wq__begin(s, 1, err)))
		return rc;
	rc = wq__enqueue_rows(s, t, n, rows, item_rc, item_errs, &made, err);
	if (rc == WQ__ENQUEUE_ROWS_NO) {
		wq_error ignored;

		wq__end(s, WQ_EBUSY, &ignored); /* rolled back: nothing of it stays */
		return rc;
	}
	if (!rc && (made & WQ__ROWS_MADE_DUE))
		rc = wq__notify(s, err);
	return wq__end(s, rc, err);
}
