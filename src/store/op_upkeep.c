/*
 * op_upkeep.c — retention (prune) and what needs a human (doctor).
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

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
	return rc;
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

struct doctor_ctx {
	struct wq__vec v;
	enum wq__doctor_kind kind;
};

static wq_rc push_doctor(const struct wq__row *r, void *ctx)
{
	struct doctor_ctx *x = ctx;
	struct wq__doctor_row *d = wq__push(&x->v);

	if (!d)
		return WQ_ENOMEM;
	d->kind = x->kind;
	d->task_id = wq__i64(r, 0);
	wq__str(r, 1, d->operation, sizeof(d->operation));
	if (x->kind == WQ__DOCTOR_INTERRUPTED) {
		wq__str(r, 2, d->reason, sizeof(d->reason));
		wq__str(r, 3, d->reason_detail, sizeof(d->reason_detail));
	} else {
		wq__str(r, 2, d->effect, sizeof(d->effect));
		wq__str(r, 3, d->effect_state, sizeof(d->effect_state));
		d->attempt = wq__int(r, 4);
		d->begun_attempts = wq__int(r, 5);
	}
	return WQ_OK;
}

wq_rc wq__op_doctor(struct wq__store *s, struct wq__doctor_row **out, size_t *n, wq_error *err)
{
	static const struct {
		int id;
		enum wq__doctor_kind kind;
	} queries[] = {
		{SQL_DOCTOR_TWICE, WQ__DOCTOR_EFFECT_TWICE},
		{SQL_DOCTOR_UNCERTAIN, WQ__DOCTOR_UNCERTAIN},
		{SQL_DOCTOR_INTERRUPTED, WQ__DOCTOR_INTERRUPTED},
	};
	struct doctor_ctx x = {{NULL, 0, 0, sizeof(struct wq__doctor_row)}, 0};
	size_t i;
	wq_rc rc = wq__begin(s, 0, err);

	if (rc)
		return rc;
	for (i = 0; !rc && i < WQ__ARRAY_LEN(queries); i++) {
		x.kind = queries[i].kind;
		rc = wq__rows(s, queries[i].id, WQ__NOARGS, push_doctor, &x, NULL, "doctor", err);
	}
	rc = wq__end(s, rc, err);
	if (rc) {
		free(x.v.p);
		return rc;
	}
	*out = wq__take(&x.v, n);
	return WQ_OK;
}
