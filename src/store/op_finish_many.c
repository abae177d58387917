/*
 * op_finish_many.c — wave5 pgw (issue 11): the `succeeded` outcomes of one finish_batch
 * recorded by one fenced multi-row UPDATE, where every statement is a round trip
 * (PostgreSQL). Before, each outcome ran SQL_FINISH_SUCCEEDED on its own: one round trip
 * per task, the largest share of a PostgreSQL drain's.
 *
 * Only the UPDATE of tasks moves; everything else about an outcome (its attempt row, its
 * event, lock, deliveries, follow-ups, acknowledgement, the stale path) is still decided
 * and written by finish_body (op_claim.c) in the same transaction, in task order. The
 * UPDATE carries exactly SQL_FINISH_SUCCEEDED's values and fence (WQ__OWNED) per row,
 * and finish_update takes its answer (1 row changed) from here instead of running the
 * statement (wq__finish_many_take).
 *
 * wave7 pg: the UPDATE is sent without waiting for its answer (wq__run_queued: it rides
 * in the pipeline with the next statement, the claim's, or with COMMIT). Its rows are
 * the ones the facts, read FOR UPDATE in this transaction, show held by their attempts:
 * locked, no other transaction can move them, so every one of them changes. The
 * statement checks that itself (it fails unless exactly that many rows changed: the
 * transaction then fails, nothing commits), so a row fenced off is never taken as
 * recorded unseen.
 *
 * Which outcomes: SUCCEEDED ones whose task the batch's facts (read in the same
 * transaction, op_rows.c) show running under this very attempt with no uncertain effect
 * — exactly those finish_effects leaves unchanged, so the row written here is the row
 * the per-row statement would have written. Any other outcome goes the per-row way as
 * before.
 *
 * wave8 sqlw2: SQLite too, for its CPU, not for round trips: 32 or 16 rows of bound
 * parameters a statement (finish_rows: the answer read and checked at once); fewer than
 * 16 fitting outcomes, and the last ones beyond a multiple of 16, go the per-row way.
 */
#include "internal.h"
#include "op.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One outcome sent in the multi-row UPDATE. */
struct wq__fin_many {
	int64_t id;
	int attempt;
	int taken;   /* finish_update used the answer */
};

/* wave7 pg: a result above this goes the per-row way: PostgreSQL reads the rows as one
 * jsonb value, at most 256 MB, and a result is twice its size there (hex). */
#define FIN_MANY_RESULT_MAX (1024 * 1024)

/* 1 when outcome o goes into the multi-row UPDATE (see the top of this file). */
static int fits(const struct wq__store *s, const struct wq__outcome *o)
{
	const struct wq__task_facts *f;

	if (o->kind != WQ__FINISH_SUCCEEDED || !o->instance ||
	    (o->result && o->result_len > FIN_MANY_RESULT_MAX))
		return 0;
	/* held by this attempt (the UPDATE's fence holds), and not one finish_effects
	 * turns into interrupted (its rule, wq__finish_uncertain, decides it for both) */
	f = wq__rows_fact(s, o->task_id);
	return f && wq__attempt_holds(&f->ts, o) && !wq__finish_uncertain(&f->ts, o);
}

/* The result as lowercase hex (the statement decodes it); NULL without memory. */
static char *hex_of(const char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h = malloc(2 * n + 1);

	for (size_t i = 0; h && i < n; i++) {
		h[2 * i] = digits[(unsigned char)p[i] >> 4];
		h[2 * i + 1] = digits[(unsigned char)p[i] & 15];
	}
	if (h)
		h[2 * n] = '\0';
	return h;
}

static int by_id(const void *a, const void *b)
{
	const struct wq__fin_many *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Appends o's row to b; 0, or -1 without memory. */
static int add_row(struct wq__rowbuf *b, const struct wq__outcome *o)
{
	char *hex = o->result ? hex_of(o->result, o->result_len) : NULL;

	if (o->result && !hex)
		return -1;
	wq__rb_row(b, "iisissisii", o->task_id, (int64_t)o->attempt, o->instance, o->now,
		   wq__nz(o->outcome), hex ? hex : "", (int64_t)(o->result ? o->result_len : 0),
		   o->result ? wq__nz(o->result_sha256) : "", (int64_t)(o->result != NULL),
		   (int64_t)o->exit_status);
	free(hex);
	return b->bad ? -1 : 0;
}

void wq__succeeded_args(struct wq__arg *a, const struct wq__outcome *o)
{
	a[0] = WQ__AI(o->task_id);
	a[1] = WQ__AI(o->attempt);
	a[2] = WQ__AT(o->instance);
	a[3] = WQ__AI(o->now);
	a[4] = WQ__AT(wq__nz(o->outcome));
	a[5] = o->result ? WQ__AB(o->result, o->result_len) : WQ__ANULL;
	a[6] = WQ__AI(o->result ? o->result_len : 0);
	a[7] = WQ__AT(o->result ? wq__nz(o->result_sha256) : "");
	a[8] = WQ__AI(o->result != NULL);
	a[9] = WQ__AI(o->exit_status);
}

/* wave8 sqlw2: SQLite, SQL_FINISH_SUCCEEDED_ROWS32 and 16. A run builds two temporary
 * b-trees (the rows, and the UPDATE's own of the rows it changes), which cost about
 * what the per-row statements' allocations cost at 8 rows (store_drain, 8 rows a
 * statement: the same at 8 a batch, 0.3 % more at 16); at 16 rows a statement a batch
 * of 16 takes 0.974 of the instructions, at 32 a batch of 32 0.947: 16 or more. */
static const struct wq__rows_stmt rows_stmts[] = {
	{SQL_FINISH_SUCCEEDED_ROWS32, 32},
	{SQL_FINISH_SUCCEEDED_ROWS16, 16},
};
#define ROWS_MIN 16

static void row_args(struct wq__arg *a, size_t row, const void *ctx)
{
	wq__succeeded_args(a, ((const struct wq__outcome *const *)ctx)[row]);
}

/* wave8 sqlw2: the k outcomes fit (k a multiple of ROWS_MIN) as bound rows, where a
 * statement runs in this process (SQLite): one run of the UPDATE for many rows reuses
 * its registers and cursors, where the per-row statement allocated and freed a copy of
 * every text column of the row it rewrote, each time (~9,000 of its ~32,000
 * instructions). Its answer is read: every row must have changed. */
static wq_rc finish_rows(struct wq__store *s, const struct wq__outcome **fit, size_t k,
			 wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc;

	rc = wq__run_rows(s, rows_stmts, k, WQ__SUCCEEDED_ARGS, row_args, fit, &changes,
			  "record outcomes", err);
	/* failpoint finish-many-mismatch: as if one row had been fenced off */
	if (!rc && wq__failpoint_hit("finish-many-mismatch"))
		changes--;
	if (!rc && changes != (int64_t)k)
		rc = wq__err(err, WQ_ESTORE, WQ__FIN_MANY_MISMATCH "%" PRId64 " of %zu rows",
			     changes, k);
	return rc;
}

/* The rows of the fitting outcomes fit[0..k) to the store as one statement of JSON rows
 * sent without waiting (PostgreSQL). */
static wq_rc finish_json(struct wq__store *s, const struct wq__outcome **fit, size_t k,
			 wq_error *err)
{
	struct wq__rowbuf b = {0};
	const char *text = NULL;
	wq_rc rc = WQ_OK;

	for (size_t i = 0; !rc && i < k; i++)
		if (add_row(&b, fit[i]))
			rc = WQ_ENOMEM;
	if (!rc && !(text = wq__rb_text(&b)))
		rc = WQ_ENOMEM;
	/* failpoint finish-many-mismatch: the statement is told one row more than it may
	 * change, so its self-check fails as it would if facts and fence disagreed */
	if (!rc)
		rc = wq__run_queued(
			s, SQL_FINISH_SUCCEEDED_MANY,
			WQ__ARGS(WQ__AT(text),
				 WQ__AI(k + (wq__failpoint_hit("finish-many-mismatch") ? 1 : 0))),
			"record outcomes", err);
	else
		rc = wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", k);
	free(b.p);
	return rc;
}

wq_rc wq__finish_many(struct wq__store *s, const struct wq__outcome *const *v, size_t n,
		      wq_error *err)
{
	int rows = wq__sql_text(s->d, SQL_FINISH_SUCCEEDED_ROWS32) != NULL;
	const struct wq__outcome **fit = NULL;
	size_t i, k = 0;
	wq_rc rc = WQ_OK;

	wq__finish_many_end(s);
	if (n < (rows ? ROWS_MIN : 2) ||
	    (!rows && !wq__sql_text(s->d, SQL_FINISH_SUCCEEDED_MANY)))
		return WQ_OK;
	for (i = 0; i < n; i++) /* one outcome per task (v is in task order) */
		if (i > 0 && v[i]->task_id == v[i - 1]->task_id)
			return WQ_OK;
	if (!(s->fin_many = calloc(n, sizeof(*s->fin_many))) ||
	    !(fit = malloc(n * sizeof(*fit)))) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (fits(s, v[i]))
			fit[k++] = v[i];
	if (rows) /* the rest (fewer than the smallest statement's rows) one by one */
		k -= k % ROWS_MIN;
	for (i = 0; i < k; i++) /* in id order, as v */
		s->fin_many[i] = (struct wq__fin_many){.id = fit[i]->task_id,
						       .attempt = fit[i]->attempt};
	s->nfin_many = k;
	if (k)
		rc = rows ? finish_rows(s, fit, k, err) : finish_json(s, fit, k, err);
out:
	free(fit);
	if (rc || k == 0)
		wq__finish_many_end(s);
	return rc;
}

int wq__finish_many_take(struct wq__store *s, const struct wq__outcome *o, int64_t *changes)
{
	struct wq__fin_many key = {.id = o->task_id}, *m;

	if (!s->nfin_many || o->kind != WQ__FINISH_SUCCEEDED)
		return 0;
	m = bsearch(&key, s->fin_many, s->nfin_many, sizeof(key), by_id);
	if (!m || m->taken || m->attempt != o->attempt)
		return 0;
	m->taken = 1;
	*changes = 1; /* the statement fails unless it changes every row (see the top) */
	return 1;
}

void wq__finish_many_end(struct wq__store *s)
{
	free(s->fin_many);
	s->fin_many = NULL;
	s->nfin_many = 0;
}
