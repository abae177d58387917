/*
 * op_upkeep.c — retention (prune) and what needs a human (doctor).
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

#define DAY_US (86400 * WQ__US_PER_S)

/* Housekeeping rows nothing else deletes (issue 15): external lock leases that expired on
 * the store's clock (an abandoned holder's row otherwise stays for ever; nobody can renew
 * it), and starts-per-day counters of days before yesterday. op_limit.c forgets a
 * (tenant, scope)'s earlier days at its next day's first start, so only pairs that
 * stopped starting keep one; yesterday stays for a claimer whose clock (on which its day
 * is counted) runs behind the store's across midnight. Not counted in the answer. */
static wq_rc prune_leftovers(struct wq__store *s, wq_error *err)
{
	int64_t now = 0;
	wq_rc rc = wq__store_clock(s, &now, err);

	if (!rc)
		rc = wq__run(s, SQL_PRUNE_LOCKS, WQ__ARGS(WQ__AI(now)), NULL, "prune", err);
	if (!rc)
		rc = wq__run(s, SQL_PRUNE_STARTS, WQ__ARGS(WQ__AI(now / DAY_US - 1)), NULL, "prune",
			     err);
	return rc;
}

static wq_rc prune_body(struct wq__store *s, int64_t task_cutoff, int64_t operation_cutoff,
			int64_t *tasks, int64_t *ops, wq_error *err)
{
	/* Operation retention counts from the task's completion, kept on the operation. */
	wq_rc rc = wq__run(s, SQL_PRUNE_MARK, WQ__ARGS(WQ__AI(task_cutoff)), NULL, "prune", err);

	/* Ids that leave the store are never handed out again: the highest ones so far are
	 * recorded before any row goes (a no-op where ids come from identities). */
	if (!rc)
		rc = wq__run(s, SQL_PRUNE_FLOOR, WQ__NOARGS, NULL, "prune", err);
	if (!rc)
		rc = wq__run(s, SQL_PRUNE_TASKS, WQ__ARGS(WQ__AI(task_cutoff)), tasks, "prune", err);
	if (!rc)
		rc = wq__run(s, SQL_PRUNE_OPERATIONS, WQ__ARGS(WQ__AI(operation_cutoff)), ops,
			     "prune", err);
	return rc ? rc : prune_leftovers(s, err);
}

wq_rc wq__op_prune(struct wq__store *s, int64_t task_cutoff, int64_t operation_cutoff,
		   wq_prune_counts *out, wq_error *err)
{
	int64_t tasks = 0, ops = 0;
	wq_rc rc = wq__begin(s, 1, err);

	if (rc)
		return rc;
	rc = wq__end(s, prune_body(s, task_cutoff, operation_cutoff, &tasks, &ops, err), err);
	if (!rc) {
		out->tasks = (int)tasks;
		out->operations = (int)ops;
	}
	return rc;
}

wq_rc wq__op_prune_preview(struct wq__store *s, int64_t task_cutoff,
			   int64_t operation_cutoff, wq_prune_counts *out, wq_error *err)
{
	int64_t tasks = 0, ops = 0;
	wq_rc rc = wq__begin(s, 1, err), body;

	if (rc)
		return rc;
	body = prune_body(s, task_cutoff, operation_cutoff, &tasks, &ops, err);
	/* Any rc but WQ_OK makes wq__end roll back: the body's own error, or WQ_ESTATE as
	 * "undo" when it succeeded. */
	rc = wq__end(s, body ? body : WQ_ESTATE, err);
	if (body)
		return rc;
	out->tasks = (int)tasks;
	out->operations = (int)ops;
	return WQ_OK;
}

#define D(type, f) WQ__COL(type, struct wq__doctor_row, f)
static const struct wq__col doctor_cols[] = {
	D('i', kind), D('i', task_id), D('s', operation), D('s', effect), D('s', effect_state),
	D('i', attempt), D('i', begun_attempts), D('s', reason), D('s', reason_detail),
	D('s', instance), D('i', since),
};
#undef D

/* One statement: one snapshot of every kind of row. */
wq_rc wq__op_doctor(struct wq__store *s, int64_t stuck_before, struct wq__doctor_row **out,
		    size_t *n, wq_error *err)
{
	return wq__select(s, SQL_DOCTOR, WQ__ARGS(WQ__AI(stuck_before)), WQ__COLS(doctor_cols),
			  sizeof(struct wq__doctor_row), out, n, "doctor", err);
}
