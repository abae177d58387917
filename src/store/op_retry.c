/*
 * op_retry.c — an operator's retry of a finished task (issue 14): failed or cancelled →
 * pending, a new round of attempts under the same task and operation.
 *
 * Invariants: the task keeps its id, its operation row and key (an enqueue of the key
 * still replays to it), its attempts and its effect journal; only the budget moves:
 * retry_base records the attempts used, and max_attempts becomes attempts + the round's
 * budget, so the worker's `attempt < max_attempts` decides the new round as the first.
 */
#include "op.h"

#include <inttypes.h>
#include <string.h>

static wq_rc retry_body(struct wq__store *s, const struct wq__retry *r, wq_error *err)
{
	struct wq__task_state ts;
	int64_t changes = 0;
	wq_task t;
	wq_rc rc = wq__task_state(s, r->task_id, &ts, err);

	if (rc)
		return rc;
	if (strcmp(ts.state, "failed") != 0 && strcmp(ts.state, "cancelled") != 0)
		return wq__err(err, WQ_ESTATE,
			       "task %" PRId64 " is %s; only a failed or cancelled task can be "
			       "retried%s",
			       r->task_id, ts.state,
			       strcmp(ts.state, "interrupted") == 0
				       ? " (an interrupted one is resolved: wakeq resolve ID --retry)"
				       : "");
	rc = wq__run(s, SQL_RETRY,
		     WQ__ARGS(WQ__AI(r->task_id), WQ__AI(r->now), WQ__AI(ts.attempt)), &changes,
		     "retry task", err);
	if (!rc && changes != 1)
		rc = wq__err(err, WQ_ESTATE, "task %" PRId64 " is no longer %s", r->task_id,
			     ts.state);
	if (rc)
		return rc;
	/* The new limit, for the event: read back inside the same transaction. */
	memset(&t, 0, sizeof(t));
	rc = wq__op_get(s, r->task_id, &t, err);
	if (!rc)
		rc = wq__eventf(s, r->task_id, r->now, ts.attempt, "retried", "", err, "sssiiS",
				"from", ts.state, 16, "by", r->by && *r->by ? r->by : "operator",
				WQ_REASON_MAX, "decision", "retry", 16, "attempts",
				(int64_t)t.attempts, "max_attempts", (int64_t)t.max_attempts, "note",
				r->note, WQ__NOTE_MAX);
	if (!rc)
		rc = wq__notify(s, err); /* due now */
	return rc;
}

wq_rc wq__op_retry(struct wq__store *s, const struct wq__retry *r, wq_error *err)
{
	wq_rc rc;

	if (r->task_id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %" PRId64, r->task_id);
	rc = wq__begin(s, 1, err);
	return rc ? rc : wq__end(s, retry_body(s, r, err), err);
}
