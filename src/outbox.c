/* outbox.c — the public outbox API (SPEC §8): deliveries and the notification inbox.
 *
 * Deliveries are created by the store in the transaction that marks a task succeeded and
 * sent by the worker (deliver.c). What is here lets people look at them, send a dead one
 * again (never re-running its task) and read the inbox. Inputs are checked before the
 * store is touched. */
#include "internal.h"
#include "store/evidence.h"

#include <string.h>

static const char *const delivery_state_names[] = {
	[WQ_DELIVERY_PENDING] = "pending",
	[WQ_DELIVERY_SENDING] = "sending",
	[WQ_DELIVERY_DELIVERED] = "delivered",
	[WQ_DELIVERY_DEAD] = "dead",
};

const char *wq_delivery_state_name(wq_delivery_state s)
{
	if ((int)s < WQ_DELIVERY_PENDING || (int)s > WQ_DELIVERY_DEAD)
		return NULL;
	return delivery_state_names[s];
}

wq_rc wq_delivery_state_parse(const char *name, wq_delivery_state *out, wq_error *err)
{
	for (int s = WQ_DELIVERY_PENDING; s <= WQ_DELIVERY_DEAD; s++) {
		if (name && strcmp(name, delivery_state_names[s]) == 0) {
			*out = (wq_delivery_state)s;
			return WQ_OK;
		}
	}
	return wq__err(err, WQ_EINVAL,
		       "unknown delivery state '%s' (expected pending, sending, delivered or dead)",
		       name ? name : "");
}

wq_rc wq_delivery_list(wq_db *db, wq_delivery_state state, wq_delivery **out, size_t *n,
		       wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_delivery_list needs a store and out-parameters");
	if (state && !wq_delivery_state_name(state))
		return wq__err(err, WQ_EINVAL, "invalid delivery state filter %d", (int)state);
	return WQ__STORE(db, delivery_list, state, out, n, err);
}

wq_rc wq_delivery_retry(wq_db *db, int64_t id, wq_error *err)
{
	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_delivery_retry needs a store");
	if (id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid delivery id %lld", (long long)id);
	return WQ__STORE(db, delivery_retry, id, wq_now(), err);
}

/* A recipient as `inbox:RECIPIENT` takes it: 1..WQ_NAME_MAX-6 bytes, no space or
 * control character. */
static wq_rc check_recipient(const char *r, wq_error *err)
{
	size_t n = r ? strlen(r) : 0;

	if (n == 0)
		return wq__err(err, WQ_EINVAL, "an inbox needs a recipient");
	if (n > WQ_NAME_MAX - 6)
		return wq__err(err, WQ_EINVAL, "recipient is %zu bytes; at most %d are allowed", n,
			       WQ_NAME_MAX - 6);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)r[i] <= ' ' || r[i] == 0x7f)
			return wq__err(err, WQ_EINVAL,
				       "recipient contains a space or control character");
	return wq__check_utf8("recipient", r, err);
}

wq_rc wq_inbox_list(wq_db *db, const char *recipient, int unread_only,
		    wq_notification **out, size_t *n, wq_error *err)
{
	wq_rc rc;

	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_inbox_list needs a store and out-parameters");
	if ((rc = check_recipient(recipient, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, inbox_list, recipient, unread_only != 0, out, n, err);
}

wq_rc wq_inbox_read(wq_db *db, int64_t notification_id, wq_error *err)
{
	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_inbox_read needs a store");
	if (notification_id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid notification id %lld",
			       (long long)notification_id);
	return WQ__STORE(db, inbox_read, notification_id, wq_now(), err);
}
