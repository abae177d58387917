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
