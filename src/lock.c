/* lock.c — turn locks and paused kinds (issue 10): validation in front of the store's
 * operations (src/store/op_lock.c decides everything else). */
#include "internal.h"
#include "store/evidence.h"

#include <string.h>

/* Printable UTF-8 of 1..max bytes: keys and holders appear in events, logs and errors. */
static wq_rc check_text(const char *what, const char *v, size_t max, wq_error *err)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n > max)
		return wq__err(err, WQ_EINVAL, "%s must be 1..%zu bytes", what, max);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return wq__err(err, WQ_EINVAL, "%s contains a control character", what);
	return wq__check_utf8(what, v, err);
}

wq_rc wq__check_lock_key(const char *key, wq_error *err)
{
	return check_text("lock key", key, WQ_KEY_MAX, err);
}

static wq_rc check_lease(wq_db *db, const char *key, const char *holder, wq_error *err)
{
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "lock operations need a store");
	if ((rc = wq__check_lock_key(key, err)) != WQ_OK)
		return rc;
	return check_text("lock holder", holder, WQ_NAME_MAX, err);
}

static wq_rc check_ttl(int64_t ttl, wq_error *err)
{
	if (ttl <= 0)
		return wq__err(err, WQ_EINVAL, "a lease needs a positive time to live");
	if (ttl > (int64_t)366 * 24 * 3600 * WQ__US_PER_S)
		return wq__err(err, WQ_EINVAL, "a lease's time to live is at most 366 days");
	return WQ_OK;
}

/* The lease's ttl is measured by the store on its own clock (issue 15): no time of this
 * process goes with it. */
wq_rc wq_lock_acquire(wq_db *db, const char *key, const char *holder, int64_t ttl,
		      wq_lock *held, wq_error *err)
{
	wq_rc rc;

	if ((rc = check_lease(db, key, holder, err)) || (rc = check_ttl(ttl, err)))
		return rc;
	return WQ__STORE(db, lock_acquire, key, holder, ttl, held, err);
}

wq_rc wq_lock_renew(wq_db *db, const char *key, const char *holder, int64_t ttl,
		    wq_lock *held, wq_error *err)
{
	wq_rc rc;

	if ((rc = check_lease(db, key, holder, err)) || (rc = check_ttl(ttl, err)))
		return rc;
	return WQ__STORE(db, lock_renew, key, holder, ttl, held, err);
}

wq_rc wq_lock_release(wq_db *db, const char *key, const char *holder, wq_error *err)
{
	wq_rc rc = check_lease(db, key, holder, err);

	return rc ? rc : WQ__STORE(db, lock_release, key, holder, err);
}

wq_rc wq_lock_list(wq_db *db, wq_lock **out, size_t *n, wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_lock_list needs a store and out-parameters");
	return WQ__STORE(db, lock_list, out, n, err);
}

wq_rc wq_kind_set_paused(wq_db *db, const char *kind, int paused, wq_error *err)
{
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_kind_set_paused needs a store");
	if ((rc = wq__check_kind(kind, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, kind_pause, kind, paused != 0, wq_now(), err);
}

wq_rc wq_kinds_paused(wq_db *db, wq_kind_pause **out, size_t *n, wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_kinds_paused needs a store and out-parameters");
	return WQ__STORE(db, kinds_paused, out, n, err);
}
