/*
 * op_instance.c — worker instances: registration, heartbeats, and declaring one lost
 * (its running tasks interrupted in the same transaction that deletes its row; a lost
 * instance can then neither claim nor record, since claims require its row and every
 * outcome is fenced by attempt and instance).
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

#define I(type, f) WQ__COL(type, struct wq__instance, f)
static const struct wq__col instance_cols[] = {
	I('s', id), I('s', host), I('s', host_id), I('i', pid), I('i', proc_start),
	I('i', started_at), I('i', heartbeat_at),
};
/* instance_list adds the lease's age on the store's clock (issue 15). */
static const struct wq__col instance_list_cols[] = {
	I('s', id), I('s', host), I('s', host_id), I('i', pid), I('i', proc_start),
	I('i', started_at), I('i', heartbeat_at), I('i', lease_age),
};
#undef I

/* After a unique violation on register: WQ_OK when the row is exactly the one `in`
 * describes (a retry after a COMMIT whose answer was lost), else WQ_ECONFLICT. */
static wq_rc instance_same(struct wq__store *s, const struct wq__instance *in, wq_error *err)
{
	struct wq__instance row;
	size_t n = 0;
	wq_rc rc;

	memset(&row, 0, sizeof(row));
	rc = wq__select1(s, SQL_INSTANCE_GET, WQ__ARGS(WQ__AT(in->id)), WQ__COLS(instance_cols),
			 &row, &n, "register instance", err);
	if (rc)
		return rc;
	if (n == 1 && strcmp(row.host, in->host) == 0 && strcmp(row.host_id, in->host_id) == 0 &&
	    row.pid == in->pid && row.proc_start == in->proc_start &&
	    row.started_at == in->started_at)
		return WQ_OK;
	return wq__err(err, WQ_ECONFLICT, "instance %s is already registered", in->id);
}

wq_rc wq__op_instance_register(struct wq__store *s, const struct wq__instance *in,
			       wq_error *err)
{
	wq_rc rc;

	if (!in->id[0])
		return wq__err(err, WQ_EINVAL, "instance id is empty");
	if ((rc = wq__check_utf8("instance id", in->id, err)) ||
	    (rc = wq__check_utf8("host name", in->host, err)) ||
	    (rc = wq__check_utf8("host id", in->host_id, err)))
		return rc;
	rc = wq__write1(s, SQL_INSTANCE_INSERT,
			WQ__ARGS(WQ__AT(in->id), WQ__AT(in->host), WQ__AT(in->host_id),
				 WQ__AI(in->pid), WQ__AI(in->proc_start), WQ__AI(in->started_at),
				 WQ__AI(in->heartbeat_at)),
			NULL, "register instance", err);
	if (rc == WQ_ECONFLICT)
		rc = instance_same(s, in, err);
	return rc;
}

/* One write on an instance row; WQ_ENOTFOUND when it found no row. */
static wq_rc instance_write(struct wq__store *s, int id, const struct wq__arg *a, int n,
			    const char *instance, const char *what, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = wq__write1(s, id, a, n, &changes, what, err);

	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no instance %s (it was declared lost or has stopped)",
			     wq__nz(instance));
	return rc;
}

wq_rc wq__op_instance_heartbeat(struct wq__store *s, const char *id, int64_t now,
				wq_error *err)
{
	return instance_write(s, SQL_INSTANCE_HEARTBEAT, WQ__ARGS(WQ__AT(wq__nz(id)), WQ__AI(now)),
			      id, "heartbeat", err);
}

wq_rc wq__op_instance_unregister(struct wq__store *s, const char *id, wq_error *err)
{
	return instance_write(s, SQL_INSTANCE_DELETE, WQ__ARGS(WQ__AT(wq__nz(id))), id,
			      "unregister instance", err);
}

wq_rc wq__op_instance_list(struct wq__store *s, struct wq__instance **out, size_t *n,
			   wq_error *err)
{
	return wq__select(s, SQL_INSTANCE_LIST, WQ__NOARGS, WQ__COLS(instance_list_cols),
			  sizeof(struct wq__instance), out, n, "listing instances", err);
}

static wq_rc reap_body(struct wq__store *s, const char *id, int64_t seen_heartbeat,
		       const char *reason, int64_t now, int *count, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = wq__run(s, SQL_INSTANCE_REAP, WQ__ARGS(WQ__AT(id), WQ__AI(seen_heartbeat)),
			   &changes, "reap instance", err);

	/* No row: it heartbeat meanwhile (alive), or it is gone already (someone else's
	 * job). Nothing changes. */
	if (rc || changes == 0)
		return rc;
	return wq__interrupt(s, SQL_INTERRUPT_INSTANCE,
			     WQ__ARGS(WQ__AT(id), WQ__AT(reason), WQ__AI(now)), reason, now, count,
			     err);
}

wq_rc wq__op_instance_reap(struct wq__store *s, const char *id, int64_t seen_heartbeat,
			   const char *reason, int64_t now, int *count, wq_error *err)
{
	int n = 0;
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	rc = wq__end(s, reap_body(s, wq__nz(id), seen_heartbeat, wq__nz(reason), now, &n, err),
		     err);
	if (!rc)
		*count = n;
	return rc;
}

wq_rc wq__op_reap_orphans(struct wq__store *s, const char *reason, int64_t now, int *count,
			  wq_error *err)
{
	int n = 0;
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	rc = wq__interrupt(s, SQL_INTERRUPT_ORPHANS, WQ__ARGS(WQ__AT(wq__nz(reason)), WQ__AI(now)),
			   wq__nz(reason), now, &n, err);
	rc = wq__end(s, rc, err);
	if (!rc)
		*count = n;
	return rc;
}
