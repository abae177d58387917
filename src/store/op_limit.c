/*
 * op_limit.c — limits per (tenant, scope) (issue 10), checked by enqueue in its own
 * transaction: max_active, the pending + running tasks of the task's (tenant, scope).
 *
 * The count and the insert are one transaction, and concurrent enqueues of the same
 * (tenant, scope) are serialised first (SQLite: BEGIN IMMEDIATE already; PostgreSQL: a
 * transaction-scoped advisory lock, SQL_LIMIT_LOCK), so two enqueues can never both see
 * room for one task. Claims and finishes need no lock: they never add an active task.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wq_rc wq__limit_check(struct wq__store *s, const struct wq__new_task *t, wq_error *err)
{
	size_t tl, sl;
	char *lockname;
	int64_t active = 0;
	wq_rc rc;

	if (t->max_active <= 0)
		return WQ_OK;
	tl = strlen(t->tenant);
	sl = strlen(t->scope);
	if (!(lockname = malloc(tl + sl + 2)))
		return wq__err(err, WQ_ENOMEM, "out of memory (limits)");
	memcpy(lockname, t->tenant, tl);
	lockname[tl] = '\n'; /* never inside a tenant name: the pair stays unambiguous */
	memcpy(lockname + tl + 1, t->scope, sl + 1);
	rc = wq__rows(s, SQL_LIMIT_LOCK, WQ__ARGS(WQ__AT(lockname)), NULL, NULL, NULL,
		      "wait for the tenant's limit", err);
	free(lockname);
	if (!rc)
		rc = wq__rows(s, SQL_ACTIVE_COUNT, WQ__ARGS(WQ__AT(t->tenant), WQ__AT(t->scope)),
			      wq__read_i64, &active, NULL, "count active tasks", err);
	if (rc || active < t->max_active)
		return rc;
	return wq__err(err, WQ_ELIMIT,
		       "limit reached: max_active = %d ([%s]) for tenant '%s' scope '%s', which "
		       "has %" PRId64 " pending or running tasks",
		       t->max_active, t->limit_section ? t->limit_section : "limits", t->tenant,
		       t->scope, active);
}

/* ---- within claim: per-kind concurrency and starts per day (issue 10) ----
 *
 * Per-kind concurrency: the claim first takes a transaction lock per limited kind it may
 * claim (PostgreSQL; in name order, so two claims never wait on each other in a cycle;
 * SQLite's write lock serialises claims already), then counts the kind's running tasks:
 * its room. Rounds of the one SQL_CLAIM follow, each over the kinds with room and for at
 * most the smallest room among them, so no kind can get more than its room in a round,
 * and the claim order (priority, due time, id) is the statement's as without limits.
 *
 * Starts per day: each task a round claimed counts one start of its (tenant, scope) on
 * today's UTC day (a counter row, taken with a conditional upsert: flat cost, and two
 * claims meet at the row). A task whose count is full is undone in the same transaction
 * (nobody saw the claim): pending again, due at the next day's 00:00 UTC, attempt and
 * previous instance restored, a `deferred` event. The next round fills its slot.
 */

#define DAY_US INT64_C(86400000000)
#define PICK_ROUNDS 32

struct kind_room {
	const char *kind;
	int limit; /* 0: none */
	int room;
};

static int room_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kind_room *)a)->kind, ((const struct kind_room *)b)->kind);
}

static wq_rc rooms_count(struct wq__store *s, struct kind_room *k, size_t n, wq_error *err)
{
	int64_t running;
	wq_rc rc = WQ_OK;

	qsort(k, n, sizeof(*k), room_cmp);
	for (size_t i = 0; !rc && i < n; i++) {
		if (k[i].limit <= 0)
			continue;
		running = 0;
		rc = wq__rows(s, SQL_KIND_LOCK, WQ__ARGS(WQ__AT(k[i].kind)), NULL, NULL, NULL,
			      "wait for the kind's concurrency", err);
		if (!rc)
			rc = wq__rows(s, SQL_KIND_RUNNING, WQ__ARGS(WQ__AT(k[i].kind)),
				      wq__read_i64, &running, NULL, "count running tasks", err);
		k[i].room = running < k[i].limit ? k[i].limit - (int)running : 0;
	}
	return rc;
}

/* The kinds with room as JSON text (NULL: none), the only one of them (NULL: several or
 * none), and the most one round may take. */
static wq_rc round_kinds(const struct kind_room *k, size_t n, int want, char **kj,
			 const char **one, int *most, wq_error *err)
{
	const char **v = malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	wq_rc rc = WQ_OK;

	if (!v)
		return wq__err(err, WQ_ENOMEM, "out of memory (claim)");
	*most = want;
	for (size_t i = 0; i < n; i++) {
		if (k[i].limit > 0 && k[i].room <= 0)
			continue;
		if (k[i].limit > 0 && k[i].room < *most)
			*most = k[i].room;
		v[m++] = k[i].kind;
	}
	*kj = NULL;
	*one = m == 1 ? v[0] : NULL;
	if (m)
		rc = wq__json_texts(v, m, "kind", kj, err);
	free(v);
	return rc;
}

static const struct wq__starts_limit *starts_of(const struct wq__claim_req *req,
						const char *tenant)
{
	const struct wq__starts_limit *dflt = NULL;

	for (size_t i = 0; i < req->nstarts; i++) {
		if (req->starts[i].named && strcmp(req->starts[i].tenant, tenant) == 0)
			return req->starts[i].max > 0 ? &req->starts[i] : NULL;
		if (!req->starts[i].named)
			dflt = &req->starts[i];
	}
	return dflt && dflt->max > 0 ? dflt : NULL;
}

/* Counts one start of c's (tenant, scope) today; *full: the limit was reached already. */
static wq_rc start_take(struct wq__store *s, const struct wq__starts_limit *l,
			const struct wq__claimed *c, int64_t day, int *full, wq_error *err)
{
	int64_t starts = 0;
	size_t got = 0;
	wq_rc rc;

	rc = wq__rows(s, SQL_STARTS_TAKE,
		      WQ__ARGS(WQ__AT(c->tenant), WQ__AT(c->scope), WQ__AI(day), WQ__AI(l->max)),
		      wq__read_i64, &starts, &got, "count starts of the day", err);
	*full = !rc && got == 0;
	if (!rc && got && starts == 1) /* the day's first: earlier days' rows are done */
		rc = wq__run(s, SQL_STARTS_PRUNE,
			     WQ__ARGS(WQ__AT(c->tenant), WQ__AT(c->scope), WQ__AI(day)), NULL,
			     "forget earlier days' starts", err);
	return rc;
}

/* Undoes the claim of c: pending until `until`, a `deferred` event. */
static wq_rc start_defer(struct wq__store *s, const struct wq__claim_req *req,
			 const struct wq__starts_limit *l, const struct wq__claimed *c,
			 int64_t until, wq_error *err)
{
	char detail[WQ_DETAIL_MAX + 1], ts[WQ_TIME_BUFSZ];
	int64_t changes = 0;
	wq_rc rc;

	snprintf(detail, sizeof(detail),
		 "max_starts_per_day = %d ([%s]) for tenant '%s' scope '%s'; deferred to %s",
		 l->max, l->section, c->tenant, c->scope, wq_time_format(until, ts));
	rc = wq__run(s, SQL_CLAIM_DEFER,
		     WQ__ARGS(WQ__AI(c->id), WQ__AI(c->attempt), WQ__AT(req->instance),
			      WQ__AI(until), WQ__AI(req->now), WQ__AT(detail)),
		     &changes, "defer a task", err);
	if (!rc && changes != 1)
		rc = wq__err(err, WQ_EBUSY, "claim: task %" PRId64 " moved while claimed", c->id);
	if (!rc)
		rc = wq__eventf(s, c->id, req->now, c->attempt - 1, "deferred", req->instance, err,
				"sisssst", "limit", "max_starts_per_day", 32, "value",
				(int64_t)l->max, "section", l->section, WQ_NAME_MAX + 8, "tenant",
				c->tenant, WQ_NAME_MAX, "scope", c->scope, WQ_NAME_MAX, "reason",
				"the (tenant, scope) started its limit of tasks today", 80, "until",
				until);
	return rc;
}

/* The rows from `from` on that count a start or are deferred (and dropped from v);
 * *kept: how many stay, rooms lowered by them. */
static wq_rc round_settle(struct wq__store *s, const struct wq__claim_req *req,
			  struct wq__vec *v, size_t from, struct kind_room *k, size_t nk,
			  int *got, int *kept, wq_error *err)
{
	int64_t day = req->now / DAY_US, until = (day + 1) * DAY_US;
	const struct wq__starts_limit *l;
	struct wq__claimed *c;
	size_t i = from;
	int full;
	wq_rc rc;

	*kept = 0;
	*got = (int)(v->n - from);
	while (i < v->n) {
		c = (struct wq__claimed *)((char *)v->p + i * v->size);
		l = starts_of(req, c->tenant);
		full = 0;
		if (l && (rc = start_take(s, l, c, day, &full, err)))
			return rc;
		if (full) {
			if ((rc = start_defer(s, req, l, c, until, err)))
				return rc;
			free(c->payload);
			memmove(c, (char *)c + v->size, (v->n - i - 1) * v->size);
			v->n--;
			continue;
		}
		for (size_t j = 0; j < nk; j++)
			if (k[j].limit > 0 && strcmp(k[j].kind, c->kind) == 0)
				k[j].room--;
		(*kept)++;
		i++;
	}
	return WQ_OK;
}

/* SQL_CLAIM over the kinds of kj, or (wave 6) SQL_CLAIM_KIND when they are one kind,
 * `one`: the same tasks without the merge of per-kind ranges. */
static wq_rc claim_round(struct wq__store *s, const struct wq__claim_req *req, const char *kj,
			 const char *one, const char *limits, int n, wq__row_fn push,
			 struct wq__vec *v, wq_error *err)
{
	return wq__rows(s, one ? SQL_CLAIM_KIND : SQL_CLAIM,
			WQ__ARGS(WQ__AT(req->instance), WQ__AI(req->now), WQ__AT(one ? one : kj),
				 WQ__AI(n), WQ__AT(limits)),
			push, v, NULL, "claim tasks", err);
}

wq_rc wq__claim_pick(struct wq__store *s, const struct wq__claim_req *req, const char *kj,
		     const char *limits, int want, wq__row_fn push, struct wq__vec *v,
		     wq_error *err)
{
	struct kind_room *k = NULL;
	const char *one = NULL;
	char *rkj = NULL;
	size_t before;
	int most = 0, got = 0, kept = 0, limited = 0;
	wq_rc rc = WQ_OK;

	for (size_t i = 0; req->concurrency && i < req->nkinds; i++)
		limited |= req->concurrency[i] > 0;
	if (!limited && !req->nstarts) /* no policy: the one statement */
		return claim_round(s, req, kj, req->nkinds == 1 ? req->kinds[0] : NULL, limits,
				   want, push, v, err);
	if (!(k = calloc(req->nkinds, sizeof(*k))))
		return wq__err(err, WQ_ENOMEM, "out of memory (claim)");
	for (size_t i = 0; i < req->nkinds; i++) {
		k[i].kind = req->kinds[i];
		k[i].limit = req->concurrency ? req->concurrency[i] : 0;
	}
	rc = rooms_count(s, k, req->nkinds, err);
	for (int r = 0; !rc && want > 0 && r < PICK_ROUNDS; r++) {
		rc = round_kinds(k, req->nkinds, want, &rkj, &one, &most, err);
		if (rc || !rkj || most <= 0)
			break;
		before = v->n;
		rc = claim_round(s, req, rkj, one, limits, most, push, v, err);
		free(rkj);
		rkj = NULL;
		if (!rc)
			rc = round_settle(s, req, v, before, k, req->nkinds, &got, &kept, err);
		if (rc)
			break;
		want -= kept;
		if (got < most) /* fewer rows than asked: nothing more is claimable now */
			break;
	}
	free(rkj);
	free(k);
	return rc;
}
