/*
 * sql.c — the core's side of the driver interface: statement texts, error wording,
 * transactions, running statements and reading rows. Drivers only run statements; every
 * message a user reads is written here.
 */
#include "op.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wq__sql_text(const struct wq__dialect *d, int id)
{
	return d->variant(id);
}

static const char *label(struct wq__store *s)
{
	return s->drv->label(s->c);
}

wq_rc wq__sql_fail(struct wq__store *s, int sqlerr, const char *what, wq_error *err)
{
	const char *msg = s->drv->errmsg(s->c);
	const char *who = strcmp(s->drv->name, "postgres") == 0 ? "PostgreSQL" : "database";

	s->last_sqlerr = sqlerr;

	switch (sqlerr) {
	case WQ__SQL_BUSY:
		return wq__err(err, WQ_EBUSY, "database %s is busy (%s): %s", label(s), what, msg);
	case WQ__SQL_LOST:
		return wq__err(err, WQ_EBUSY, "%s connection lost: database %s, %s: %s (will "
					      "reconnect)", who, label(s), what, msg);
	case WQ__SQL_COMMIT_UNKNOWN:
		/* Operations whose repeat recognises their own commit say: retry. */
		if (s->retry_safe)
			return wq__err(err, WQ_EBUSY, "%s connection lost: database %s, %s: the "
						      "commit's answer was lost; retrying is safe",
				       who, label(s), what);
		/* Otherwise say how to find out: the user cannot tell a lost answer from a
		 * refusal, and an unkeyed enqueue repeated may run the work twice. */
		if (s->lost_op && s->lost_op_keyed)
			return wq__err(err, WQ_EUNKNOWN,
				       "database %s: the commit's answer was lost: operation key "
				       "'%s' may or may not be enqueued; check with `wakeq timeline "
				       "%s`, or enqueue again with the same --key (a retry replays)",
				       label(s), s->lost_op, s->lost_op);
		if (s->lost_op)
			return wq__err(err, WQ_EUNKNOWN,
				       "database %s: the commit's answer was lost: task %s may or may "
				       "not be enqueued; look for it with `wakeq list` and `wakeq "
				       "timeline ID`, and give tasks a --key so that a retry replays "
				       "instead of enqueueing again",
				       label(s), s->lost_op);
		return wq__err(err, WQ_EUNKNOWN,
			       "database %s, %s: the commit's answer was lost: the change may or "
			       "may not be recorded; check with `wakeq timeline`",
			       label(s), what);
	case WQ__SQL_UNIQUE:
		return wq__err(err, WQ_ECONFLICT, "database %s: %s: %s", label(s), what, msg);
	case WQ__SQL_TOOBIG:
		return wq__err(err, WQ_ETOOBIG, "database %s: %s: %s", label(s), what, msg);
	case WQ__SQL_NOMEM:
		return wq__err(err, WQ_ENOMEM, "out of memory (database %s, %s)", label(s), what);
	case WQ__SQL_IO:
		return wq__err(err, WQ_EIO, "database %s: %s: %s", label(s), what, msg);
	case WQ__SQL_CORRUPT:
		return wq__err(err, WQ_ESTORE, "database %s is malformed (corrupt): %s: %s",
			       label(s), what, msg);
	default:
		return wq__err(err, WQ_ESTORE, "database %s: %s: %s", label(s), what, msg);
	}
}

/* The tests' injected I/O error ($WAKEQ_FAILPOINT=<method>:error): the store call fails
 * at its first begin or statement, before it changed anything. */
static wq_rc injected(struct wq__store *s, wq_error *err)
{
	const char *fp = wq__failpoint_take();

	if (!fp)
		return WQ_OK;
	s->last_sqlerr = WQ__SQL_IO;
	return wq__err(err, WQ_EIO, "database %s: %s: injected I/O error (failpoint)", label(s),
		       fp);
}

static wq_rc events_flush(struct wq__store *s, wq_error *err);

wq_rc wq__begin(struct wq__store *s, int write, wq_error *err)
{
	wq_rc inj = injected(s, err);
	int e;

	if (inj)
		return inj;
	e = s->drv->begin(s->c, write);

	s->poke = 0;
	s->keep = 0;
	s->retry_safe = 0;
	s->lost_op = NULL;
	s->lost_op_keyed = 0;
	wq__rows_reset(s); /* wave4 batch */
	wq__events_drop(s); /* wave7 drain */
	s->in_tx = !e;
	s->clock_now = 0;
	s->ev_next = 0; /* wave6 sqcpu */
	return e ? wq__sql_fail(s, e, "begin", err) : WQ_OK;
}

wq_rc wq__end(struct wq__store *s, wq_rc rc, wq_error *err)
{
	int e;

	/* wave4 batch, wave7 drain: the buffered rows and the queued events of what
	 * commits, before COMMIT */
	if (rc == WQ_OK || s->keep) {
		wq_rc frc = events_flush(s, err);

		if (!frc)
			frc = wq__rows_flush(s, err);

		if (frc) {
			rc = frc;
			s->keep = 0;
		}
	}
	wq__rows_reset(s);
	wq__events_drop(s); /* a rollback's: never written */
	s->in_tx = 0;
	s->clock_now = 0;
	s->ev_next = 0; /* wave6 sqcpu */
	e = rc == WQ_OK || s->keep ? s->drv->commit(s->c) : -1; /* -1: roll back */

	/* The tests' lost answer: committed for real, reported unknown (only where the user is
	 * told so; a retry-safe repeat would meet the fault again forever). */
	if (!e && !s->retry_safe && wq__failpoint_hit("commit-lost"))
		e = WQ__SQL_COMMIT_UNKNOWN;
	s->commit_lost = e == WQ__SQL_COMMIT_UNKNOWN;
	if (e > 0)
		rc = wq__sql_fail(s, e, "commit", err);
	if (e)
		s->drv->rollback(s->c);
	else if (s->poke)
		wq__wakefile_poke(s->wake); /* after the commit: the work is there to see */
	s->poke = 0;
	s->keep = 0;
	s->retry_safe = 0;
	s->lost_op = NULL;
	s->lost_op_keyed = 0;
	return rc;
}

/* Whether statement id inserts events other than through event_counted's count
 * (declared in statements.h, WQ__SQL_EVENT_WRITERS). */
static int writes_events(int id)
{
#define WQ__EV_WRITER(id) [id] = 1,
	static const unsigned char writers[WQ__SQL_COUNT] = {WQ__SQL_EVENT_WRITERS(WQ__EV_WRITER)};
#undef WQ__EV_WRITER

	return id >= 0 && id < WQ__SQL_COUNT && writers[id];
}

/* Whether the queued events must be written before statement id (statements.h,
 * WQ__SQL_EVENT_WRITERS and WQ__SQL_EVENT_BARRIERS). */
static int events_barrier(int id)
{
#define WQ__EV_BARRIER(id) [id] = 1,
	static const unsigned char barriers[WQ__SQL_COUNT] = {
		WQ__SQL_EVENT_WRITERS(WQ__EV_BARRIER) WQ__SQL_EVENT_BARRIERS(WQ__EV_BARRIER)};
#undef WQ__EV_BARRIER

	return id >= 0 && id < WQ__SQL_COUNT && barriers[id];
}

/* Runs statement id, calling fn for each row; *nrows and *changes when non-NULL. Outside
 * a transaction the core runs reads, and single-statement writes through wq__write1 on
 * drivers with WQ__SQL_CAP_AUTOCOMMIT (the driver never repeats those). */
static wq_rc query(struct wq__store *s, int id, const struct wq__arg *a, int n, wq__row_fn fn,
		   void *ctx, size_t *nrows, int64_t *changes, const char *what, wq_error *err)
{
	struct wq__row r = {s, NULL};
	size_t count = 0;
	wq_rc rc = injected(s, err);
	int st;

	if (rc)
		return rc;
	if (s->nevq && events_barrier(id) && (rc = events_flush(s, err)) != WQ_OK)
		return rc;
	if (s->ev_next && writes_events(id))
		s->ev_next = 0; /* its ids are not counted here: read the base again */
	st = s->drv->exec(s->c, id, a, n, &r.cur);
	if (st)
		return wq__sql_fail(s, st, what, err);
	while ((st = s->drv->step(r.cur)) == 1) {
		count++;
		if (fn && (rc = fn(&r, ctx)) != WQ_OK)
			break;
	}
	if (rc == WQ_ENOMEM) /* a row function's allocation */
		rc = wq__err(err, WQ_ENOMEM, "out of memory (%s)", what);
	if (st < 0)
		rc = wq__sql_fail(s, -st, what, err);
	if (!rc && changes)
		*changes = s->drv->changes(r.cur);
	s->drv->done(r.cur);
	if (!rc && nrows)
		*nrows = count;
	return rc;
}

wq_rc wq__rows(struct wq__store *s, int id, const struct wq__arg *a, int n, wq__row_fn fn,
	       void *ctx, size_t *nrows, const char *what, wq_error *err)
{
	return query(s, id, a, n, fn, ctx, nrows, NULL, what, err);
}

wq_rc wq__run(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *changes,
	      const char *what, wq_error *err)
{
	return query(s, id, a, n, NULL, NULL, NULL, changes, what, err);
}

/* See op.h. */
wq_rc wq__run_rows(struct wq__store *s, const struct wq__rows_stmt *stmts, size_t n,
		   size_t cols, wq__row_args_fn *fill, const void *ctx, int64_t *changes,
		   const char *what, wq_error *err)
{
	struct wq__arg *a;
	size_t done = 0, k = 0, m;
	int64_t one = 0;
	wq_rc rc = WQ_OK;

	if (n == 0)
		return WQ_OK;
	if (!(a = malloc(stmts[0].rows * cols * sizeof(*a))))
		return wq__err(err, WQ_ENOMEM, "out of memory (%s)", what);
	while (!rc && done < n) {
		while (stmts[k].rows > n - done)
			k++; /* the last size is one row */
		m = stmts[k].rows;
		for (size_t r = 0; r < m; r++)
			fill(a + r * cols, done + r, ctx);
		rc = wq__run(s, stmts[k].id, a, (int)(m * cols), changes ? &one : NULL, what,
			     err);
		if (changes)
			*changes += one;
		done += m;
	}
	free(a);
	return rc;
}

/* wave5 pgw: see op.h. */
wq_rc wq__run_queued(struct wq__store *s, int id, const struct wq__arg *a, int n,
		     const char *what, wq_error *err)
{
	wq_rc rc = injected(s, err);
	int st;

	if (rc)
		return rc;
	if (!s->drv->exec_queued || !s->in_tx)
		return wq__run(s, id, a, n, NULL, what, err);
	st = s->drv->exec_queued(s->c, id, a, n);
	return st ? wq__sql_fail(s, st, what, err) : WQ_OK;
}

wq_rc wq__insert(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *newid,
		 const char *what, wq_error *err)
{
	int64_t changes = 0;
	size_t rows = 0;
	wq_rc rc;

	*newid = 0;
	rc = query(s, id, a, n, wq__read_i64, newid, &rows, &changes, what, err);
	if (!rc && rows == 0 && changes == 1)
		rc = query(s, SQL_LAST_ID, NULL, 0, wq__read_i64, newid, NULL, NULL, what, err);
	return rc;
}

/* Hands out the array (NULL when empty) and forgets it. */
static void *wq__take(struct wq__vec *v, size_t *n)
{
	void *p = v->p;

	*n = v->n;
	if (v->n == 0) {
		free(p);
		p = NULL;
	}
	v->p = NULL;
	v->n = v->cap = 0;
	return p;
}

static void fill(const struct wq__row *r, const struct wq__col *cols, size_t n, void *dst)
{
	size_t i;
	char *p;
	int64_t v;

	for (i = 0; i < n; i++) {
		p = (char *)dst + cols[i].off;
		switch (cols[i].type) {
		case 's':
			wq__str(r, (int)i, p, cols[i].size);
			continue;
		case 'S':
			*(wq_state *)p = wq__state_parse(wq__text(r, (int)i, NULL));
			continue;
		case 'D':
			*(wq_delivery_state *)p = wq__delivery_state_parse(wq__text(r, (int)i, NULL));
			continue;
		}
		v = cols[i].type == 'x' && wq__null(r, (int)i) ? -1 : wq__i64(r, (int)i);
		if (cols[i].size == sizeof(int64_t))
			*(int64_t *)p = v;
		else
			*(int *)p = (int)v;
	}
}

struct fill {
	const struct wq__col *cols;
	size_t n;
	struct wq__vec *v;
	void *dst;
};

static wq_rc fill_row(const struct wq__row *r, void *ctx)
{
	struct fill *f = ctx;
	void *p = f->v ? wq__push(f->v) : f->dst;

	if (!p)
		return WQ_ENOMEM;
	fill(r, f->cols, f->n, p);
	return WQ_OK;
}

wq_rc wq__select(struct wq__store *s, int id, const struct wq__arg *a, int n,
		 const struct wq__col *cols, size_t ncols, size_t size, void *out, size_t *cnt,
		 const char *what, wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, size};
	struct fill f = {cols, ncols, &v, NULL};
	wq_rc rc = wq__rows(s, id, a, n, fill_row, &f, NULL, what, err);

	if (rc) {
		free(v.p);
		return rc;
	}
	*(void **)out = wq__take(&v, cnt);
	return WQ_OK;
}

wq_rc wq__select1(struct wq__store *s, int id, const struct wq__arg *a, int n,
		  const struct wq__col *cols, size_t ncols, void *dst, size_t *found,
		  const char *what, wq_error *err)
{
	struct fill f = {cols, ncols, NULL, dst};

	return wq__rows(s, id, a, n, fill_row, &f, found, what, err);
}

wq_rc wq__write1(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *changes,
		 const char *what, wq_error *err)
{
	wq_rc rc;

	if (s->drv->caps & WQ__SQL_CAP_AUTOCOMMIT) {
		/* The statement is its own transaction: one round trip. A lost answer is
		 * COMMIT_UNKNOWN from the driver, worded as retry-safe below. */
		s->retry_safe = 1;
		s->last_sqlerr = 0;
		rc = wq__run(s, id, a, n, changes, what, err);
		s->commit_lost = rc && s->last_sqlerr == WQ__SQL_COMMIT_UNKNOWN;
		s->retry_safe = 0;
		return rc;
	}
	rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	s->retry_safe = 1; /* one row written again, or found written: harmless */
	return wq__end(s, wq__run(s, id, a, n, changes, what, err), err);
}

wq_rc wq__read_i64(const struct wq__row *r, void *ctx)
{
	*(int64_t *)ctx = wq__null(r, 0) ? 0 : wq__i64(r, 0);
	return WQ_OK;
}

void *wq__push(struct wq__vec *v)
{
	size_t ncap;
	void *p;

	if (v->n == v->cap) {
		ncap = v->cap ? v->cap * 2 : 16;
		p = realloc(v->p, ncap * v->size);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = ncap;
	}
	p = (char *)v->p + v->n++ * v->size;
	memset(p, 0, v->size);
	return p;
}


void wq__events_drop(struct wq__store *s)
{
	for (int i = 0; i < s->nevq; i++)
		free(s->evq[i].text);
	s->nevq = 0;
}

/* wave7 drain: the multi-row event inserts, largest first (SQL_EVENT_INSERT_AT: one) */
static const struct wq__rows_stmt events_stmts[] = {
	{SQL_EVENTS_INSERT_AT32, WQ__EVQ_MAX},
	{SQL_EVENTS_INSERT_AT8, 8},
	{SQL_EVENTS_INSERT_AT4, 4},
	{SQL_EVENT_INSERT_AT, 1},
};

/* Queued event `row` of struct wq__store `ctx` as the 7 arguments of its row. */
static void event_args(struct wq__arg *a, size_t row, const void *ctx)
{
	const struct wq__evq_row *e = &((const struct wq__store *)ctx)->evq[row];
	const char *inst = e->text + strlen(e->text) + 1;

	a[0] = WQ__AI(e->id);
	a[1] = WQ__AI(e->task_id);
	a[2] = WQ__AI(e->at);
	a[3] = WQ__AI(e->attempt);
	a[4] = WQ__AT(e->text);
	a[5] = WQ__AT(inst);
	a[6] = WQ__AT(inst + strlen(inst) + 1); /* the detail */
}

/* The queued events written, many to a statement, and dropped from the queue, written
 * or not: on failure the transaction rolls back. */
static wq_rc events_flush(struct wq__store *s, wq_error *err)
{
	wq_rc rc = wq__run_rows(s, events_stmts, (size_t)s->nevq, 7, event_args, s, NULL,
				"append events", err);

	wq__events_drop(s);
	if (rc)
		s->ev_next = 0;
	return rc;
}

/* wave6 sqcpu: an event inside a transaction on SQLite, its id counted on in C (see
 * struct wq__store's ev_next) instead of SQL_EVENT_INSERT's two subqueries per insert
 * (~4,000 instructions of ~11,000 an event row). The same ids: above every id events
 * ever had, ascending in the order the events are written. wave7 drain: queued, and
 * written many to a statement (events_flush). */
static wq_rc event_counted(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
			   const char *type, const char *instance, const char *text,
			   wq_error *err)
{
	size_t lt = strlen(type) + 1, li = strlen(wq__nz(instance)) + 1, ld = strlen(text) + 1;
	struct wq__evq_row *e;
	int64_t base = 0;
	char *p;
	wq_rc rc;

	if (!s->ev_next) {
		rc = wq__rows(s, SQL_ENQ_EVENT_BASE, WQ__NOARGS, wq__read_i64, &base, NULL,
			      "read event ids", err);
		if (rc)
			return rc;
		s->ev_next = base + 1;
	}
	if (!(p = malloc(lt + li + ld)))
		return wq__err(err, WQ_ENOMEM, "out of memory (event %s of task %" PRId64 ")",
			       type, task_id);
	memcpy(p, type, lt);
	memcpy(p + lt, wq__nz(instance), li);
	memcpy(p + lt + li, text, ld);
	e = &s->evq[s->nevq++];
	*e = (struct wq__evq_row){s->ev_next++, task_id, at, attempt, p};
	return s->nevq == WQ__EVQ_MAX ? events_flush(s, err) : WQ_OK;
}

/* The event with its detail text. */
static wq_rc event_text(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
			const char *type, const char *instance, const char *text, wq_error *err)
{
	/* wave4 batch: in a claim or a batch of outcomes, written with the others at COMMIT */
	if (wq__rows_event(s, task_id, at, attempt, type, wq__nz(instance), text))
		return WQ_OK;
	if (s->in_tx && wq__sql_text(s->d, SQL_EVENT_INSERT_AT))
		return event_counted(s, task_id, at, attempt, type, instance, text, err);
	return wq__run(s, SQL_EVENT_INSERT,
		       WQ__ARGS(WQ__AI(task_id), WQ__AI(at), WQ__AI(attempt), WQ__AT(type),
				WQ__AT(wq__nz(instance)), WQ__AT(text)),
		       NULL, "append event", err);
}

wq_rc wq__event(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		const char *type, const char *instance, json_t *detail, wq_error *err)
{
	char *text = detail ? wq__detail_text(detail) : strdup("{}");
	wq_rc rc;

	json_decref(detail);
	if (!text)
		return wq__err(err, WQ_ENOMEM, "out of memory (event %s of task %" PRId64 ")", type,
			       task_id);
	rc = event_text(s, task_id, at, attempt, type, instance, text, err);
	free(text);
	return rc;
}

static json_t *detailv(wq_error *err, const char *fmt, va_list ap)
{
	json_t *d = wq__jobj(err);
	const char *key, *str;
	int64_t v;
	int bad = 0, a, max;

	if (!d)
		return NULL;
	for (; !bad && *fmt; fmt++) {
		if (*fmt == 'a') {
			v = va_arg(ap, int64_t);
			a = va_arg(ap, int);
			bad = wq__jset_attempt(d, v, a);
			continue;
		}
		key = va_arg(ap, const char *);
		if (*fmt == 's' || *fmt == 'S') {
			str = va_arg(ap, const char *);
			max = va_arg(ap, int);
			if (*fmt == 's' || (str && *str))
				bad = wq__jset_str(d, key, str, (size_t)max);
		} else if (*fmt == 'b') {
			bad = json_object_set_new(d, key, json_boolean(va_arg(ap, int)));
		} else {
			v = va_arg(ap, int64_t);
			if (*fmt == 't')
				bad = wq__jset_time(d, key, v);
			else if (*fmt == 'i' || v >= 0)
				bad = wq__jset_int(d, key, v);
		}
	}
	if (bad) {
		wq__jfail(d, err);
		return NULL;
	}
	return d;
}

json_t *wq__detailf(wq_error *err, const char *fmt, ...)
{
	va_list ap;
	json_t *d;

	va_start(ap, fmt);
	d = detailv(err, fmt, ap);
	va_end(ap);
	return d;
}

wq_rc wq__eventf(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		 const char *type, const char *instance, wq_error *err, const char *fmt, ...)
{
	char text[WQ__DETAIL_MAX + 1];
	va_list ap;
	json_t *d;
	int fast;

	/* wave5 drain: written straight into text (op_detail.c), the same bytes */
	va_start(ap, fmt);
	fast = wq__detail_fast(text, sizeof text, fmt, ap);
	va_end(ap);
	if (fast >= 0)
		return event_text(s, task_id, at, attempt, type, instance, text, err);
	va_start(ap, fmt);
	d = detailv(err, fmt, ap);
	va_end(ap);
	return d ? wq__event(s, task_id, at, attempt, type, instance, d, err) : WQ_ENOMEM;
}

wq_rc wq__notify(struct wq__store *s, wq_error *err)
{
	if (!(s->drv->caps & WQ__SQL_CAP_NOTIFY)) {
		s->poke = s->wake != NULL; /* the wake-up file, once committed (wq__end) */
		return WQ_OK;
	}
	return wq__run(s, SQL_NOTIFY, WQ__NOARGS, NULL, "notify", err);
}

wq_rc wq__json_texts(const char *const *v, size_t n, const char *what, char **out,
		     wq_error *err)
{
	json_t *arr = json_array();
	size_t i;
	wq_rc rc = WQ_OK;

	for (i = 0; arr && i < n && !rc; i++) {
		rc = wq__check_utf8(what, v[i], err);
		if (!rc && json_array_append_new(arr, json_string(wq__nz(v[i]))))
			break;
	}
	*out = !rc && arr && i == n ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	if (!rc && !*out)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (%s list)", what);
	return rc;
}

wq_rc wq__json_ids(const int64_t *v, size_t n, char **out, wq_error *err)
{
	size_t cap = 3 + n * 21, o = 0, i;
	char *buf = malloc(cap);

	if (!buf)
		return wq__err(err, WQ_ENOMEM, "out of memory (id list)");
	buf[o++] = '[';
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? "," : "", v[i]);
	snprintf(buf + o, cap - o, "]");
	*out = buf;
	return WQ_OK;
}
