/*
 * op_effect.c — the effect journal (SPEC §7): begin, done, the attempts that began an
 * effect, and an attempt's open (begun, never confirmed) effect.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define A(type, f) WQ__COL(type, wq_attempt, f)
static const struct wq__col attempt_cols[] = {
	A('i', attempt), A('s', instance), A('i', started_at), A('i', finished_at),
	A('s', outcome), A('s', reason), A('x', exit_status),
};
#undef A

wq_rc wq__op_attempts(struct wq__store *s, int64_t task_id, wq_attempt **out, size_t *n,
		      wq_error *err)
{
	wq_rc rc = wq__task_rows(s, SQL_ATTEMPTS, task_id, WQ__COLS(attempt_cols),
				 sizeof(wq_attempt), out, n, "attempts", err);
	size_t i;

	for (i = 0; !rc && i < *n; i++)
		(*out)[i].task_id = task_id;
	return rc;
}

struct open_read {
	char name[WQ_EFFECT_NAME_MAX + 1];
	int began;
};

wq_rc wq__open_effect(struct wq__store *s, int64_t task_id, int attempt,
		      struct wq__open_effect *oe, wq_error *err)
{
	static const struct wq__col cols[] = {
		WQ__COL('s', struct open_read, name),
		WQ__COL('i', struct open_read, began),
	};
	struct open_read x;
	size_t found = 0;
	wq_rc rc;

	memset(oe, 0, sizeof(*oe));
	rc = wq__select1(s, SQL_EFFECT_OPEN, WQ__ARGS(WQ__AI(task_id), WQ__AI(attempt)),
			 WQ__COLS(cols), &x, &found, "read effects", err);
	if (rc || !found)
		return rc;
	wq__strlcpy(oe->name, x.name, sizeof(oe->name));
	if (x.began == attempt)
		snprintf(oe->note, sizeof(oe->note), "effect %s begun, not confirmed", oe->name);
	else
		snprintf(oe->note, sizeof(oe->note),
			 "effect %s uncertain (begun by attempt %" PRId64 ".%d)", oe->name, task_id,
			 x.began);
	return WQ_OK;
}

/* Within a write transaction: the journal's fence. WQ_OK when task_id is running with
 * `attempt`; WQ_ESTALE or WQ_ENOTFOUND otherwise. */
static wq_rc effect_fence(struct wq__store *s, int64_t task_id, int attempt, wq_error *err)
{
	struct wq__task_state ts;
	wq_rc rc = wq__task_state(s, task_id, &ts, err);

	if (!rc && (strcmp(ts.state, "running") != 0 || ts.attempt != attempt))
		rc = wq__err(err, WQ_ESTALE,
			     "attempt %" PRId64 ".%d no longer owns task %" PRId64 " (now %s, "
			     "attempt %d)",
			     task_id, attempt, task_id, ts.state, ts.attempt);
	return rc;
}

struct effect_row {
	int found;
	char state[16];
	int attempt, last_attempt;
	char *result; /* malloc'd or NULL */
};

static wq_rc read_effect(const struct wq__row *r, void *ctx)
{
	struct effect_row *e = ctx;

	e->found = 1;
	wq__str(r, 0, e->state, sizeof(e->state));
	e->attempt = wq__int(r, 1);
	e->last_attempt = wq__int(r, 2);
	if (!wq__null(r, 3) && !(e->result = strdup(wq__text(r, 3, NULL))))
		return WQ_ENOMEM;
	return WQ_OK;
}

static wq_rc effect_get(struct wq__store *s, int64_t task_id, const char *name,
			struct effect_row *e, wq_error *err)
{
	memset(e, 0, sizeof(*e));
	return wq__rows(s, SQL_EFFECT_GET, WQ__ARGS(WQ__AI(task_id), WQ__AT(name)), read_effect,
			e, NULL, "read effect", err);
}

/* An effect event: attempt id, name, and `key` naming attempt `other` of the task. */
static wq_rc effect_event(struct wq__store *s, int64_t task_id, int attempt, const char *type,
			  const char *name, const char *key, int other, int64_t now, wq_error *err)
{
	char id[48] = "";

	if (key)
		snprintf(id, sizeof(id), "%" PRId64 ".%d", task_id, other);
	return wq__eventf(s, task_id, now, attempt, type, "", err, "asS", task_id, attempt, "name",
			  name, WQ_EFFECT_NAME_MAX, key ? key : "", id, (int)sizeof(id));
}

static wq_rc begin_body(struct wq__store *s, int64_t task_id, int attempt, const char *name,
			int64_t now, struct effect_row *e, wq_effect_status *st, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = effect_fence(s, task_id, attempt, err);

	if (!rc)
		rc = effect_get(s, task_id, name, e, err);
	if (rc)
		return rc;
	if (!e->found) {
		*st = WQ_EFFECT_NEW;
		rc = wq__run(s, SQL_EFFECT_INSERT,
			     WQ__ARGS(WQ__AI(task_id), WQ__AT(name), WQ__AI(attempt), WQ__AI(now)),
			     NULL, "record effect", err);
		return rc ? rc : effect_event(s, task_id, attempt, "effect-begun", name, NULL, 0,
					      now, err);
	}
	if (strcmp(e->state, "done") == 0) {
		*st = WQ_EFFECT_DONE;
		return effect_event(s, task_id, attempt, "effect-skipped", name, "done_in",
				    e->attempt, now, err);
	}
	if (e->attempt == attempt) {
		*st = WQ_EFFECT_NEW; /* begun again by the attempt that began it */
		return WQ_OK;
	}
	if (e->attempt > attempt)
		return wq__err(err, WQ_ESTATE, "effect '%s' of task %" PRId64 " was begun by a later "
					       "attempt (%d) than %d",
			       name, task_id, e->attempt, attempt);
	/* Begun by an earlier attempt that never confirmed it: nobody knows whether it
	 * happened. Marked once per attempt. */
	*st = WQ_EFFECT_UNCERTAIN;
	rc = wq__run(s, SQL_EFFECT_AGAIN,
		     WQ__ARGS(WQ__AI(task_id), WQ__AT(name), WQ__AI(attempt)), &changes,
		     "record effect", err);
	if (!rc && changes)
		rc = wq__run(s, SQL_SET_UNCERTAIN,
			     WQ__ARGS(WQ__AI(task_id), WQ__AI(attempt), WQ__AT(name)), NULL,
			     "record effect", err);
	if (!rc && changes)
		rc = effect_event(s, task_id, attempt, "effect-uncertain", name, "begun_in",
				  e->attempt, now, err);
	return rc;
}

wq_rc wq__op_effect_begin(struct wq__store *s, int64_t task_id, int attempt,
			  const char *name, int64_t now, wq_effect_status *status, char **result,
			  wq_error *err)
{
	struct effect_row e = {0, "", 0, 0, NULL};
	wq_effect_status st = WQ_EFFECT_NEW;
	wq_rc rc = wq__check_utf8("effect name", name, err);

	if (!rc)
		rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	rc = wq__end(s, begin_body(s, task_id, attempt, name, now, &e, &st, err), err);
	if (!rc) {
		*status = st;
		if (result) {
			*result = e.result;
			e.result = NULL;
		}
	}
	free(e.result);
	return rc;
}

/* The confirm found no row begun by this attempt: say why (or, confirmed twice with the
 * same result, nothing to do). */
static wq_rc done_refused(struct wq__store *s, int64_t task_id, int attempt, const char *name,
			  const char *result, wq_error *err)
{
	struct effect_row e;
	wq_rc rc = effect_get(s, task_id, name, &e, err);

	if (rc)
		return rc;
	if (!e.found)
		rc = wq__err(err, WQ_ESTATE,
			     "effect '%s' was not begun in attempt %" PRId64 ".%d (begin it first)",
			     name, task_id, attempt);
	else if (strcmp(e.state, "done") == 0 && e.attempt == attempt &&
		 strcmp(wq__nz(e.result), wq__nz(result)) == 0)
		rc = WQ_OK;
	else if (strcmp(e.state, "done") == 0)
		rc = wq__err(err, WQ_ESTATE,
			     "effect '%s' of task %" PRId64 " is already done (by attempt "
			     "%" PRId64 ".%d)",
			     name, task_id, task_id, e.attempt);
	else
		rc = wq__err(err, WQ_ESTATE,
			     "effect '%s' is uncertain: begun by attempt %" PRId64 ".%d and never "
			     "confirmed; attempt %" PRId64 ".%d cannot confirm it",
			     name, task_id, e.attempt, task_id, attempt);
	free(e.result);
	return rc;
}

static wq_rc done_body(struct wq__store *s, int64_t task_id, int attempt, const char *name,
		       const char *result, int64_t now, wq_error *err)
{
	char sha[WQ_SHA256_HEX];
	int64_t changes = 0;
	wq_rc rc = effect_fence(s, task_id, attempt, err);

	if (!rc)
		rc = wq__run(s, SQL_EFFECT_DONE,
			     WQ__ARGS(WQ__AI(task_id), WQ__AT(name), WQ__AI(attempt),
				      result ? WQ__AT(result) : WQ__ANULL, WQ__AI(now)),
			     &changes, "confirm effect", err);
	if (rc)
		return rc;
	if (changes == 0)
		return done_refused(s, task_id, attempt, name, result, err);
	wq__sha256_hex(wq__nz(result), result ? strlen(result) : 0, sha);
	return wq__eventf(s, task_id, now, attempt, "effect-done", "", err, "asiS", task_id,
			  attempt, "name", name, WQ_EFFECT_NAME_MAX, "result_size",
			  (int64_t)(result ? strlen(result) : 0), "result_sha256",
			  result ? sha : NULL, WQ_SHA256_HEX - 1);
}

wq_rc wq__op_effect_done(struct wq__store *s, int64_t task_id, int attempt, const char *name,
			 const char *result, int64_t now, wq_error *err)
{
	wq_rc rc = wq__check_utf8("effect name", name, err);

	if (!rc && result)
		rc = wq__check_utf8("effect result", result, err);
	if (!rc)
		rc = wq__begin(s, 1, err);
	return rc ? rc : wq__end(s, done_body(s, task_id, attempt, name, result, now, err), err);
}
