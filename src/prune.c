/* prune.c — retention (SPEC §15): finished task rows go after the task retention;
 * operation records after their own, longer retention counted from the task's
 * completion, and only once the task row is gone. So an operation record never expires
 * while its task still exists (pending, running, retrying, interrupted), and replay
 * protection lasts at least the operation retention past completion. */
#include "internal.h"

#define WQ__DAY_US (86400 * WQ__US_PER_S)

static wq_rc prune_run(wq_db *db, const wq_prune_opts *opts, int dry_run,
		       wq_prune_counts *out, wq_error *err)
{
	int64_t task_ret = opts && opts->task_retention ? opts->task_retention : 3 * WQ__DAY_US;
	int64_t op_ret = opts && opts->operation_retention ? opts->operation_retention
							   : 7 * WQ__DAY_US;
	char a[32], b[32];
	wq_prune_counts c = {0};
	int64_t now = wq_now();
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_prune needs a store");
	if (task_ret < 0 || op_ret < 0)
		return wq__err(err, WQ_EINVAL, "retention must not be negative");
	if (op_ret < task_ret)
		return wq__err(err, WQ_EINVAL,
			       "operation retention %s is shorter than task retention %s; it must "
			       "be at least as long",
			       wq_duration_format(op_ret, a, sizeof a),
			       wq_duration_format(task_ret, b, sizeof b));
	if (task_ret > now || op_ret > now)
		return wq__err(err, WQ_EINVAL, "retention reaches back before 1970");
	if (dry_run)
		rc = WQ__STORE(db, prune_preview, now - task_ret, now - op_ret, &c, err);
	else
		rc = WQ__STORE(db, prune, now - task_ret, now - op_ret, &c, err);
	if (rc == WQ_OK && out)
		*out = c;
	return rc;
}

wq_rc wq_prune(wq_db *db, const wq_prune_opts *opts, wq_prune_counts *out, wq_error *err)
{
	return prune_run(db, opts, 0, out, err);
}

wq_rc wq_prune_preview(wq_db *db, const wq_prune_opts *opts, wq_prune_counts *out,
		       wq_error *err)
{
	return prune_run(db, opts, 1, out, err);
}
