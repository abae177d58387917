/*
 * op_instance.c — worker instances: registration, heartbeats, and declaring one lost
 * (its running tasks interrupted in the same transaction that deletes its row; a lost
 * instance can then neither claim nor record, since claims require its row and every
 * outcome is fenced by attempt and instance).
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

static void read_instance(const struct wq__row *r, int first, struct wq__instance *in)
{
	wq__str(r, first, in->host, sizeof(in->host));
	wq__str(r, first + 1, in->host_id, sizeof(in->host_id));
	in->pid = wq__i64(r, first + 2);
	in->proc_start = wq__i64(r, first + 3);
	in->started_at = wq__i64(r, first + 4);
}

static wq_rc read_same(const struct wq__row *r, void *ctx)
{
	struct wq__instance *in = ctx;

	read_instance(r, 0, in);
	return WQ_OK;
}

/* After a unique violation on register: WQ_OK when the row is exactly the one `in`
 * describes (a retry after a COMMIT whose answer was lost), else WQ_ECONFLICT. */
static wq_rc instance_same(struct wq__store *s, const struct wq__instance *in, wq_error *err)
{
	struct wq__instance row;
	size_t n = 0;
	wq_rc rc;

	memset(&row, 0, sizeof(row));
	rc = wq__rows(s, SQL_INSTANCE_GET, WQ__ARGS(WQ__AT(in->id)), read_same, &row, &n,
		      "register instance", err);
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

static wq_rc push_instance(const struct wq__row *r, void *ctx)
{
	struct wq__instance *in = wq__push(ctx);

	if (!in)
		return WQ_ENOMEM;
	wq__str(r, 0, in->id, sizeof(in->id));
	read_instance(r, 1, in);
	in->heartbeat_at = wq__i64(r, 6);
	return WQ_OK;
}

wq_rc wq__op_instance_list(struct wq__store *s, struct wq__instance **out, size_t *n,
			   wq_error *err)
{
	struct wq__vec v = {NULL, 0, 0, sizeof(struct wq__instance)};
	wq_rc rc = wq__rows(s, SQL_INSTANCE_LIST, WQ__NOARGS, push_instance, &v, NULL,
			    "list instances", err);

	if (rc == WQ_ENOMEM)
		rc = wq__err(err, WQ_ENOMEM, "out of memory (listing instances)");
	if (rc) {
		free(v.p);
		return rc;
	}
	*out = wq__take(&v, n);
	return WQ_OK;
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
