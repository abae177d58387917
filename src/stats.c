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
