/*
 * op_lock.c — turn locks and paused kinds (issue 10).
 *
 * A key is held when the `locks` table has its row and the row is a task's hold
 * (expires_at 0) or an unexpired lease (expires_at > now). Both sides of that comparison
 * are on the store's clock (issue 15, op_clock.c): every operation here reads it once
 * and uses it for the expiry it writes and the expiries it judges, so a holder or a
 * claimer whose clock is skewed can neither take a live lease nor be kept from an
 * expired one.
 *
 * Every taking goes through one conditional write, SQL_LOCK_TAKE (INSERT … ON CONFLICT
 * (key) DO UPDATE … WHERE the old hold expired or is the same external holder's): the
 * primary key is the arbiter, never a read before the write, so two workers (or a worker
 * and a chat turn) cannot both hold a key. On PostgreSQL a concurrent inserter of the
 * same key waits for the first to end and then sees its row.
 *
 * Which tasks may be claimed is decided by the claim statement (WQ__CLAIMABLE and
 * WQ__SERVED in statements.h); this file takes the claimed tasks' keys in the claim's
 * transaction and drops them in the transaction that ends the attempt (finish,
 * recovery).
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const struct wq__col lock_cols[] = {
	WQ__COL('s', wq_lock, key),         WQ__COL('s', wq_lock, holder),
	WQ__COL('i', wq_lock, task_id),     WQ__COL('i', wq_lock, attempt),
	WQ__COL('i', wq_lock, acquired_at), WQ__COL('i', wq_lock, expires_at),
};

static const struct wq__col pause_cols[] = {
	WQ__COL('s', wq_kind_pause, kind),
	WQ__COL('i', wq_kind_pause, paused_at),
};

/* Within claim(): the key of a task this claim moved to running. A key taken in between
 * (an external holder that committed after the claim's pick read the key free) makes
 * the whole claim roll back as busy: the next poll picks again and skips the key. */
wq_rc wq__locks_take(struct wq__store *s, const struct wq__claimed *c, const char *instance,
		     int64_t now, wq_error *err)
{
	char holder[32];
	int64_t changes = 0, store_now = 0;
	wq_rc rc;

	if (!c->lock[0])
		return WQ_OK;
	snprintf(holder, sizeof holder, "task:%" PRId64, c->id);
	/* an external lease on the key is judged on the store's clock; `now` (the
	 * claimer's) dates the event only */
	rc = wq__store_clock(s, &store_now, err);
	if (!rc)
		rc = wq__run(s, SQL_LOCK_TAKE,
			     WQ__ARGS(WQ__AT(c->lock), WQ__AT(holder), WQ__AI(c->id),
				      WQ__AI(c->attempt), WQ__AI(store_now), WQ__AI(0)),
			     &changes, "take lock", err);
	if (rc)
		return rc;
	if (changes == 0)
		return wq__err(err, WQ_EBUSY, "lock key '%s' of task %" PRId64 " was taken "
					      "concurrently; the claim is retried",
			       c->lock, c->id);
	if ((rc = wq__key_unhold(s, c->id, err)) != WQ_OK)
		return rc;
	/* acquired_at: when the store took it, on the clock an external lease's expiry is
	 * on (the event's own time is the claimer's) */
	return wq__eventf(s, c->id, now, c->attempt, "lock-acquired", instance, err, "ast",
			  c->id, c->attempt, "key", c->lock, WQ_KEY_MAX, "acquired_at", store_now);
}

wq_rc wq__key_unhold(struct wq__store *s, int64_t task_id, wq_error *err)
{
	return wq__run(s, SQL_KEY_UNHOLD, WQ__ARGS(WQ__AI(task_id)), NULL, "unhold lock key",
		       err);
}

struct dropped {
	char key[WQ_KEY_MAX + 1];
};

static const struct wq__col dropped_cols[] = {WQ__COL('s', struct dropped, key)};

/* Within finish() and recovery: the attempt's hold ends with it (`reason`: why). */
wq_rc wq__locks_drop(struct wq__store *s, int64_t task_id, int attempt, const char *instance,
		     const char *reason, int64_t now, wq_error *err)
{
	struct dropped *rows = NULL;
	size_t n = 0, i;
	wq_rc rc;

	rc = wq__select(s, SQL_LOCK_DROP_TASK, WQ__ARGS(WQ__AI(task_id), WQ__AI(attempt)),
			WQ__COLS(dropped_cols), sizeof(*rows), &rows, &n, "release lock", err);
	for (i = 0; !rc && i < n; i++)
		rc = wq__eventf(s, task_id, now, attempt, "lock-released", instance, err, "ass",
				task_id, attempt, "key", rows[i].key, WQ_KEY_MAX, "reason", reason,
				WQ_REASON_MAX);
	free(rows);
	return rc;
}

/* ---- external holders ---- */

static wq_rc lock_read(struct wq__store *s, const char *key, int64_t now, wq_lock *out,
		       size_t *found, wq_error *err)
{
	return wq__select1(s, SQL_LOCK_GET, WQ__ARGS(WQ__AT(key), WQ__AI(now)),
			   WQ__COLS(lock_cols), out, found, "read lock", err);
}

static wq_rc check_names(const char *key, const char *holder, wq_error *err)
{
	wq_rc rc = wq__check_utf8("lock key", key, err);

	return rc ? rc : wq__check_utf8("lock holder", holder, err);
}

static wq_rc acquire_body(struct wq__store *s, const char *key, const char *holder,
			  int64_t now, int64_t expires_at, wq_lock *out, wq_error *err)
{
	wq_lock cur;
	size_t found = 0;
	int64_t changes = 0;
	char a[WQ_TIME_BUFSZ];
	wq_rc rc;

	rc = wq__run(s, SQL_LOCK_TAKE,
		     WQ__ARGS(WQ__AT(key), WQ__AT(holder), WQ__AI(0), WQ__AI(0), WQ__AI(now),
			      WQ__AI(expires_at)),
		     &changes, "take lock", err);
	if (!rc)
		rc = lock_read(s, key, now, &cur, &found, err);
	if (rc)
		return rc;
	if (!found) /* cannot be: held by us or by someone, both unexpired */
		return wq__err(err, WQ_ESTORE, "lock '%s': no row after taking it", key);
	*out = cur;
	if (changes)
		return WQ_OK;
	if (cur.task_id)
		return wq__err(err, WQ_ELIMIT, "lock '%s' is held by task %" PRId64
					       " (attempt %d) until its attempt ends",
			       key, cur.task_id, cur.attempt);
	return wq__err(err, WQ_ELIMIT, "lock '%s' is held by '%s' until %s", key, cur.holder,
		       wq_time_format(cur.expires_at, a));
}

static wq_rc check_lease(const char *key, const char *holder, int64_t ttl, wq_error *err)
{
	wq_rc rc = check_names(key, holder, err);

	if (!rc && ttl <= 0)
		rc = wq__err(err, WQ_EINVAL, "lock '%s': a lease needs a positive time to live",
			     key);
	return rc;
}

wq_rc wq__op_lock_acquire(struct wq__store *s, const char *key, const char *holder,
			  int64_t ttl, wq_lock *out, wq_error *err)
{
	wq_lock cur;
	int64_t now = 0;
	wq_rc rc;

	if ((rc = check_lease(key, holder, ttl, err)))
		return rc;
	memset(&cur, 0, sizeof cur);
	rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	rc = wq__store_clock(s, &now, err);
	if (!rc)
		rc = acquire_body(s, key, holder, now, now + ttl, &cur, err);
	s->keep = rc == WQ_ELIMIT; /* nothing was written: commit or not, the same */
	s->retry_safe = 1;         /* a repeat by the same holder renews its own lease */
	rc = wq__end(s, rc, err);
	if ((rc == WQ_OK || rc == WQ_ELIMIT) && out)
		*out = cur;
	return rc;
}

wq_rc wq__op_lock_renew(struct wq__store *s, const char *key, const char *holder,
			int64_t ttl, wq_lock *out, wq_error *err)
{
	wq_lock cur;
	size_t found = 0;
	int64_t changes = 0, now = 0;
	wq_rc rc;

	if ((rc = check_lease(key, holder, ttl, err)))
		return rc;
	rc = wq__begin(s, 1, err);
	if (rc)
		return rc;
	s->retry_safe = 1; /* renewing twice is renewing */
	rc = wq__store_clock(s, &now, err);
	if (!rc)
		rc = wq__run(s, SQL_LOCK_RENEW,
			     WQ__ARGS(WQ__AT(key), WQ__AT(holder), WQ__AI(now), WQ__AI(now + ttl)),
			     &changes, "renew lock", err);
	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ENOTFOUND,
			     "lock '%s' is not held by '%s' (released, expired or never taken)",
			     key, holder);
	if (!rc)
		rc = lock_read(s, key, now, &cur, &found, err);
	rc = wq__end(s, rc, err);
	if (!rc && out)
		*out = cur;
	return rc;
}

wq_rc wq__op_lock_release(struct wq__store *s, const char *key, const char *holder,
			  wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc;

	if ((rc = check_names(key, holder, err)))
		return rc;
	rc = wq__write1(s, SQL_LOCK_RELEASE, WQ__ARGS(WQ__AT(key), WQ__AT(holder)), &changes,
			"release lock", err);
	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "lock '%s' is not held by '%s'", key, holder);
	return rc;
}

wq_rc wq__op_lock_list(struct wq__store *s, wq_lock **out, size_t *n, wq_error *err)
{
	int64_t now = 0;
	wq_rc rc = wq__store_clock(s, &now, err);

	return rc ? rc : wq__select(s, SQL_LOCK_LIST, WQ__ARGS(WQ__AI(now)), WQ__COLS(lock_cols),
				    sizeof(**out), out, n, "list locks", err);
}

/* ---- paused kinds ---- */

wq_rc wq__op_kind_pause(struct wq__store *s, const char *kind, int paused, int64_t now,
			wq_error *err)
{
	wq_rc rc = wq__check_utf8("kind", kind, err);

	if (rc)
		return rc;
	if (paused)
		return wq__write1(s, SQL_KIND_PAUSE, WQ__ARGS(WQ__AT(kind), WQ__AI(now)), NULL,
				  "pause kind", err);
	return wq__write1(s, SQL_KIND_RESUME, WQ__ARGS(WQ__AT(kind)), NULL, "resume kind", err);
}

wq_rc wq__op_kinds_paused(struct wq__store *s, wq_kind_pause **out, size_t *n, wq_error *err)
{
	return wq__select(s, SQL_KINDS_PAUSED, WQ__NOARGS, WQ__COLS(pause_cols), sizeof(**out),
			  out, n, "list paused kinds", err);
}
