/*
 * schedule.h — the worker's scheduler hook (issue 12). Not installed.
 *
 * worker.c calls wq__sched_tick() from its poll and heartbeat ticks and
 * wq__sched_release() when it starts to drain (stop producing first), nothing else.
 */
#ifndef WQ_SCHEDULE_H
#define WQ_SCHEDULE_H

#include "internal.h"

struct wq__sched {
	int off;          /* --no-scheduler */
	int owned;        /* schedules held at the last lease renewal */
	int64_t renewed;  /* when the leases were last taken or renewed (0: never) */
	int64_t next_due; /* earliest next slot of the schedules held (0: none) */
};

/* Renews (every heartbeat) or takes the leases, then fires the due slots of the
 * schedules held. *fired: tasks enqueued (the caller claims when > 0). A store failure
 * comes back for the caller to log; the next tick tries again. */
wq_rc wq__sched_tick(wq_db *db, struct wq__sched *sc, const wq_config *cfg,
		     const char *instance, int *fired, wq_error *err);

/* Lets go of every lease instance holds (drain): another worker takes over at once. */
wq_rc wq__sched_release(wq_db *db, struct wq__sched *sc, const char *instance,
			wq_error *err);

/* doctor: appends a "schedule-owner-gone" finding (realloc'ing *f) for every unpaused
 * schedule whose owner's lease expired, on the store's clock (issue 15). */
wq_rc wq__schedule_findings(wq_db *db, wq_finding **f, size_t *cnt, wq_error *err);

#endif /* WQ_SCHEDULE_H */
