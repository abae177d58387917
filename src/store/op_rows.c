/*
 * op_rows.c — multi-row writes (issue 11, wave 4): the rows of one kind that a claim or a
 * batch of outcomes writes (events, attempts) go to the store in ONE statement per kind
 * of row, as one bound parameter holding a JSON array of rows; the dialect expands it
 * (json_each on SQLite, json_array_elements on PostgreSQL). What the rows say — which
 * event with which detail, which outcome — is decided in C by the same code as before;
 * only where the row is written changed.
 *
 * wave5 drain: only where a statement is a round trip (PostgreSQL). In SQLite, which runs
 * statements in this process, a cached one-row statement per row costs less than the JSON
 * expansion (measured on W2: 3.6 us per event as JSON rows against about 1.5 us per
 * one-row INSERT), so there every row is written when it is decided, as before wave 4.
 *
 * Invariants:
 *  - Buffering is on only between wq__rows_on and the wq__end of that transaction; the
 *    buffered rows are written before COMMIT (wq__rows_flush), in the order they were
 *    appended (event ids keep that order), or dropped with a rollback.
 *  - Nothing in a buffered transaction reads events or the finished fields of attempts
 *    back before the flush (checked by the callers: claim, finish).
 */
#include "op.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rb_put(struct wq__rowbuf *b, const char *p, size_t n)
{
	size_t ncap;
	char *q;

	if (b->bad)
		return;
	if (b->n + n + 2 > b->cap) { /* room for the closing "]" and NUL */
		ncap = b->cap ? b->cap : 4096;
		while (b->n + n + 2 > ncap)
			ncap *= 2;
		if (!(q = realloc(b->p, ncap))) {
			b->bad = 1;
			return;
		}
		b->p = q;
		b->cap = ncap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* s as a JSON string (the text is valid UTF-8: cleaned or produced by jansson). */
static void rb_str(struct wq__rowbuf *b, const char *s)
{
	const char *run = s;
	char esc[8];

	rb_put(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		rb_put(b, run, (size_t)(s - run));
		if (c == '"' || c == '\\') { /* the common case (detail texts): no snprintf */
			esc[0] = '\\';
			esc[1] = (char)c;
			rb_put(b, esc, 2);
		} else {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			rb_put(b, esc, 6);
		}
		run = s + 1;
	}
	rb_put(b, run, (size_t)(s - run));
	rb_put(b, "\"", 1);
}

void wq__rb_clear(struct wq__rowbuf *b)
{
	b->n = 0;
	b->rows = 0;
	b->bad = 0;
}

void wq__rb_row(struct wq__rowbuf *b, const char *fmt, ...)
{
	char num[32];
	va_list ap;
	int k;

	rb_put(b, b->rows++ ? ",[" : "[[", 2);
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (f != fmt)
			rb_put(b, ",", 1);
		if (*f == 'i') {
			k = snprintf(num, sizeof num, "%" PRId64, va_arg(ap, int64_t));
			rb_put(b, num, (size_t)k);
		} else {
			rb_str(b, va_arg(ap, const char *));
		}
	}
	va_end(ap);
	rb_put(b, "]", 1);
}

const char *wq__rb_text(struct wq__rowbuf *b)
{
	if (b->bad || !b->rows)
		return NULL;
	b->p[b->n] = ']'; /* rb_put kept room for it */
	b->p[b->n + 1] = '\0';
	return b->p;
}

int wq__rows_batched(const struct wq__store *s)
{
	return !(s->drv->caps & WQ__SQL_CAP_IN_PROCESS);
}

void wq__rows_on(struct wq__store *s)
{
	wq__rows_reset(s);
	s->rows_on = wq__rows_batched(s);
}

void wq__rows_on_always(struct wq__store *s)
{
	wq__rows_reset(s);
	s->rows_on = 1;
}

void wq__rows_reset(struct wq__store *s)
{
	s->rows_on = 0;
	s->facts = NULL;
	s->nfacts = 0;
	wq__rb_clear(&s->ev_rows);
	wq__rb_clear(&s->att_rows);
}

void wq__rows_free(struct wq__store *s)
{
	free(s->ev_rows.p);
	free(s->att_rows.p);
	memset(&s->ev_rows, 0, sizeof(s->ev_rows));
	memset(&s->att_rows, 0, sizeof(s->att_rows));
}

int wq__rows_event(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		   const char *type, const char *instance, const char *detail)
{
	if (!s->rows_on)
		return 0;
	wq__rb_row(&s->ev_rows, "iiisss", task_id, at, (int64_t)attempt, type, instance,
		   detail);
	return 1;
}

int wq__rows_attempt_finish(struct wq__store *s, int64_t task_id, int attempt, int64_t now,
			    const char *outcome, const char *reason, int exit_status)
{
	if (!s->rows_on)
		return 0;
	wq__rb_row(&s->att_rows, "iiissi", task_id, (int64_t)attempt, now, outcome, reason,
		   (int64_t)exit_status);
	return 1;
}

/* One buffer's rows with statement id. */
static wq_rc flush_one(struct wq__store *s, struct wq__rowbuf *b, int id, const char *what,
		       wq_error *err)
{
	const char *text;

	if (!b->rows)
		return WQ_OK;
	if (!(text = wq__rb_text(b)))
		return wq__err(err, WQ_ENOMEM, "out of memory (%s)", what);
	return wq__run_queued(s, id, WQ__ARGS(WQ__AT(text)), what, err); /* wave5 pgw */
}

/* wave7 pg: the attempts' finishes with the dialect's plan hint around them, where it
 * has one (SQL_PLAN_BY_INDEX: PostgreSQL; its text says why). */
static wq_rc flush_attempts(struct wq__store *s, wq_error *err)
{
	int hint = s->att_rows.rows && wq__sql_text(s->d, SQL_PLAN_BY_INDEX) != NULL;
	wq_rc rc = WQ_OK;

	if (hint)
		rc = wq__run_queued(s, SQL_PLAN_BY_INDEX, WQ__NOARGS, "record attempts", err);
	if (!rc)
		rc = flush_one(s, &s->att_rows, SQL_ATTEMPTS_FINISH_MANY, "record attempts", err);
	if (!rc && hint)
		rc = wq__run_queued(s, SQL_PLAN_DEFAULT, WQ__NOARGS, "record attempts", err);
	return rc;
}

wq_rc wq__rows_flush(struct wq__store *s, wq_error *err)
{
	wq_rc rc;

	if (!s->rows_on)
		return WQ_OK;
	s->rows_on = 0; /* what the flush itself writes goes straight to the store */
	rc = flush_attempts(s, err);
	if (!rc)
		rc = flush_one(s, &s->ev_rows, SQL_EVENTS_INSERT_MANY, "append events", err);
	return rc;
}

wq_rc wq__rows_attempts_insert(struct wq__store *s, struct wq__rowbuf *rows,
			       const char *instance, int64_t now, wq_error *err)
{
	const char *text;

	if (!rows->rows)
		return WQ_OK;
	if (!(text = wq__rb_text(rows)))
		return wq__err(err, WQ_ENOMEM, "out of memory (insert attempts)");
	return wq__run_queued(s, SQL_ATTEMPTS_INSERT_MANY, /* wave5 pgw */
			      WQ__ARGS(WQ__AT(text), WQ__AT(instance), WQ__AI(now)),
			      "insert attempts", err);
}

/* ---- the facts of a batch's tasks ---- */

#define F(t, f) WQ__COL(t, struct wq__task_facts, f)
static const struct wq__col facts_cols[] = {
	F('i', id), F('s', ts.state), F('i', ts.attempt), F('s', ts.instance),
	F('i', ts.cancel_requested), F('s', ts.uncertain), F('i', notify), F('i', lock),
	F('i', intake),
};
#undef F

wq_rc wq__rows_facts(struct wq__store *s, const int64_t *ids, size_t n,
		     struct wq__task_facts **out, size_t *nout, wq_error *err)
{
	char *kj = NULL;
	wq_rc rc;

	*out = NULL;
	*nout = 0;
	rc = wq__json_ids(ids, n, &kj, err);
	if (!rc)
		rc = wq__select(s, SQL_TASK_STATES, WQ__ARGS(WQ__AT(kj)), WQ__COLS(facts_cols),
				sizeof(**out), out, nout, "read tasks", err);
	free(kj);
	return rc;
}

const struct wq__task_facts *wq__rows_fact(const struct wq__store *s, int64_t id)
{
	size_t lo = 0, hi = s->nfacts;

	while (lo < hi) { /* s->facts is in id order */
		size_t mid = lo + (hi - lo) / 2;

		if (s->facts[mid].id == id)
			return &s->facts[mid];
		if (s->facts[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- prefetched tasks given back (store.h: unclaim) ---- */

static wq_rc unclaim_one(struct wq__store *s, const struct wq__claimed *c,
			 const char *instance, int64_t now, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc;

	rc = wq__run(s, SQL_TASK_UNCLAIM,
		     WQ__ARGS(WQ__AI(c->id), WQ__AI(c->attempt), WQ__AT(instance), WQ__AI(now)),
		     &changes, "give back a task", err);
	if (rc)
		return rc;
	if (changes == 0) /* fenced off: someone else decided about it meanwhile */
		return wq__err(err, WQ_ESTALE,
			       "task %" PRId64 " attempt %" PRId64 ".%d no longer owns the task",
			       c->id, c->id, c->attempt);
	if (!wq__rows_attempt_finish(s, c->id, c->attempt, now, "retry", "prefetch-returned",
				     -1) && /* not buffered (wave5 drain): written now */
	    (rc = wq__run(s, SQL_ATTEMPT_FINISH,
			  WQ__ARGS(WQ__AI(c->id), WQ__AI(c->attempt), WQ__AI(now), WQ__AT("retry"),
				   WQ__AT("prefetch-returned"), WQ__AI(-1)),
			  NULL, "record attempt", err)) != WQ_OK)
		return rc;
	rc = wq__eventf(s, c->id, now, c->attempt, "prefetch-returned", instance, err, "as",
			c->id, c->attempt, "reason",
			"claimed ahead of a free slot and never started; pending again", 80);
	/* the claim took the task's turn lock for this attempt; left held, it would keep
	 * the task (now pending again) and every later task of its key from any claim.
	 * After the transition's event, as a finish and an interruption record it. */
	if (!rc && c->lock[0])
		rc = wq__locks_drop(s, c->id, c->attempt, instance, "prefetch-returned", now, err);
	return rc;
}

wq_rc wq__op_unclaim(struct wq__store *s, const struct wq__claimed *c, size_t n,
		     const char *instance, int64_t now, wq_rc *rcs, wq_error *err)
{
	wq_error one;
	size_t i;
	wq_rc rc;

	if (n == 0)
		return WQ_OK;
	if ((rc = wq__begin(s, 1, err)) != WQ_OK)
		return rc;
	s->retry_safe = 1; /* a repeat finds the returned ones fenced off (WQ_ESTALE) */
	wq__rows_on(s);
	for (i = 0; i < n && !rc; i++) {
		rcs[i] = unclaim_one(s, &c[i], instance, now, &one);
		if (rcs[i] != WQ_ESTALE && rcs[i] != WQ_OK) {
			rc = rcs[i];
			*err = one;
		}
	}
	if (!rc)
		rc = wq__notify(s, err); /* due now: any worker may take them */
	return wq__end(s, rc, err);
}
