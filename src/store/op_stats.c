/*
 * op_stats.c — the operator's view (issue 14): counts of tasks by state and kind,
 * running tasks by instance, deliveries by state, and the registered instances, read in
 * one transaction so the numbers agree with each other.
 */
#include "op.h"

#include <stdlib.h>
#include <string.h>

#define C(type, f) WQ__COL(type, wq_stat_count, f)
static const struct wq__col task_cols[] = {C('s', state), C('s', kind), C('i', count),
					   C('i', oldest_due_at)};
static const struct wq__col running_cols[] = {C('s', instance), C('i', count)};
static const struct wq__col delivery_cols[] = {C('s', state), C('i', count)};
#undef C
#define I(type, f) WQ__COL(type, wq_instance_info, f)
static const struct wq__col instance_cols[] = {I('s', id), I('s', host), I('i', pid),
					       I('i', started_at), I('i', heartbeat_at),
					       I('i', running)};
#undef I

static wq_rc stats_body(struct wq__store *s, int64_t now, wq_stats *st, wq_error *err)
{
	wq_rc rc = wq__select(s, SQL_STATS_TASKS, WQ__ARGS(WQ__AI(now)), WQ__COLS(task_cols),
			      sizeof(wq_stat_count), &st->tasks, &st->ntasks, "stats", err);

	if (!rc)
		rc = wq__select(s, SQL_STATS_RUNNING, WQ__NOARGS, WQ__COLS(running_cols),
				sizeof(wq_stat_count), &st->running, &st->nrunning, "stats", err);
	if (!rc)
		rc = wq__select(s, SQL_STATS_DELIVERIES, WQ__NOARGS, WQ__COLS(delivery_cols),
				sizeof(wq_stat_count), &st->deliveries, &st->ndeliveries, "stats",
				err);
	if (!rc)
		rc = wq__select(s, SQL_STATS_INSTANCES, WQ__NOARGS, WQ__COLS(instance_cols),
				sizeof(wq_instance_info), &st->instances, &st->ninstances,
				"stats", err);
	return rc;
}

wq_rc wq__op_stats(struct wq__store *s, int64_t now, wq_stats *out, wq_error *err)
{
	wq_stats st;
	wq_rc rc;

	memset(&st, 0, sizeof(st));
	rc = wq__begin(s, 0, err);
	if (!rc)
		rc = wq__end(s, stats_body(s, now, &st, err), err);
	if (rc) {
		free(st.tasks);
		free(st.running);
		free(st.deliveries);
		free(st.instances);
		return rc;
	}
	for (size_t i = 0; i < st.nrunning; i++)
		strcpy(st.running[i].state, "running");
	for (size_t i = 0; i < st.ntasks; i++)
		if (st.tasks[i].oldest_due_at &&
		    (!st.oldest_pending_due_at || st.tasks[i].oldest_due_at < st.oldest_pending_due_at))
			st.oldest_pending_due_at = st.tasks[i].oldest_due_at;
	st.now = now;
	*out = st;
	return WQ_OK;
}

/* ---- list with a query (wq_task_query_list) ---- */

wq_rc wq__op_query(struct wq__store *s, const wq_task_query *q, wq_task **out, size_t *n,
		   wq_error *err)
{
	const char *names[64];
	char *sj = NULL, *kj = NULL;
	wq_rc rc;

	if (q->nstates > 64)
		return wq__err(err, WQ_EINVAL, "list query: more than 64 states");
	for (size_t i = 0; i < q->nstates; i++)
		if (!(names[i] = wq_state_name(q->states[i])))
			return wq__err(err, WQ_EINVAL, "list query: no state %d", (int)q->states[i]);
	if ((rc = wq__check_utf8("tenant", q->tenant, err)) ||
	    (rc = wq__check_utf8("scope", q->scope, err)))
		return rc;
	for (size_t i = 0; i < q->nkinds; i++)
		if ((rc = wq__check_utf8("kind", q->kinds[i], err)))
			return rc;
	rc = wq__json_texts(names, q->nstates, "state", &sj, err);
	if (!rc)
		rc = wq__json_texts(q->kinds, q->nkinds, "kind", &kj, err);
	if (!rc)
		rc = wq__select(s, SQL_TASK_QUERY,
				WQ__ARGS(WQ__AT(sj), WQ__AT(kj),
					 q->tenant ? WQ__AT(q->tenant) : WQ__ANULL,
					 q->scope ? WQ__AT(q->scope) : WQ__ANULL, WQ__AI(q->since),
					 WQ__AI(q->until), WQ__AI(q->limit > 0 ? q->limit : 100)),
				wq__task_cols, wq__task_ncols, sizeof(wq_task), out, n,
				"listing tasks", err);
	free(sj);
	free(kj);
	return rc;
}
