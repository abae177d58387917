/* stats.c — the operator's view (issue 14): wq_stats_get over the store's stats(). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

wq_rc wq_stats_get(wq_db *db, wq_stats *out, wq_error *err)
{
	if (!out)
		return wq__err(err, WQ_EINVAL, "stats: no output given");
	return WQ__STORE(db, stats, wq_now(), out, err);
}

void wq_stats_free(wq_stats *st)
{
	if (!st)
		return;
	free(st->tasks);
	free(st->running);
	free(st->deliveries);
	free(st->instances);
	memset(st, 0, sizeof(*st));
}

wq_rc wq_task_query_list(wq_db *db, const wq_task_query *q, wq_task **out, size_t *n,
			 wq_error *err)
{
	if (!db || !q || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_task_query_list: db, q, out and n are required");
	if (q->limit < 0)
		return wq__err(err, WQ_EINVAL, "invalid limit %d", q->limit);
	if (q->since < 0 || q->until < 0)
		return wq__err(err, WQ_EINVAL, "invalid time bound");
	if ((q->nstates && !q->states) || (q->nkinds && !q->kinds))
		return wq__err(err, WQ_EINVAL, "wq_task_query_list: a count without its array");
	return WQ__STORE(db, query, q, out, n, err);
}
