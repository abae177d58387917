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
 * the per-row statement would have written. Any other outcome (and every outcome where
 * the dialect has no multi-row text: SQLite) goes the per-row way as before.
 */
#include "internal.h"
#include "op.h"

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

wq_rc wq__finish_many(struct wq__store *s, const struct wq__outcome *const *v, size_t n,
		      wq_error *err)
{
	struct wq__rowbuf b = {0};
	const char *text;
	size_t i, k = 0;
	wq_rc rc = WQ_OK;

	wq__finish_many_end(s);
	if (n < 2 || !wq__sql_text(s->drv->dialect, SQL_FINISH_SUCCEEDED_MANY))
		return WQ_OK;
	for (i = 0; i < n; i++) /* one outcome per task (v is in task order) */
		if (i > 0 && v[i]->task_id == v[i - 1]->task_id)
			return WQ_OK;
	if (!(s->fin_many = calloc(n, sizeof(*s->fin_many))))
		return wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
	for (i = 0; i < n; i++) {
		if (!fits(s, v[i]))
			continue;
		if (add_row(&b, v[i])) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
			goto out;
		}
		s->fin_many[k++] = (struct wq__fin_many){.id = v[i]->task_id,
							 .attempt = v[i]->attempt};
	}
	s->nfin_many = k; /* in id order, as v */
	if (k == 0)
		goto out;
	if (!(text = wq__rb_text(&b))) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (recording %zu outcomes)", n);
		goto out;
	}
	/* failpoint finish-many-mismatch: the statement is told one row more than it may
	 * change, so its self-check fails as it would if facts and fence disagreed */
	rc = wq__run_queued(s, SQL_FINISH_SUCCEEDED_MANY,
			    WQ__ARGS(WQ__AT(text),
				     WQ__AI(k + (wq__failpoint_hit("finish-many-mismatch") ? 1 : 0))),
			    "record outcomes", err);
out:
	free(b.p);
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
